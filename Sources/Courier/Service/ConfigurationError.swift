/// A setting of ``ServiceActor/Configuration`` that no service can run with: a negative count, a
/// zero or negative timeout, a rate or a wait that is not a finite number. Thrown by
/// ``ServiceActor/init(configuration:)``, naming the setting, so a value read from a file or the
/// environment fails there and then, not as a trap in the middle of a request.
///
/// ```swift
/// do { service = try ServiceActor(configuration: configuration) }
/// catch let error as ConfigurationError { print(error.setting, error.message) }
/// ```
public struct ConfigurationError: CodedError, Hashable {
    enum Code: String, Sendable { case invalidSetting }

    let code: Code
    /// The setting's path in the configuration (`retry.multiplier`, `transport.timeouts.connect`).
    public let setting: String
    public let message: String

    init(_ setting: String, _ problem: String) {
        code = .invalidSetting
        self.setting = setting
        message = "\(setting) \(problem)"
    }

    /// A setting out of its range.
    public static let invalidSetting = ConfigurationError(code: .invalidSetting, setting: "", message: "")

    private init(code: Code, setting: String, message: String) {
        self.code = code
        self.setting = setting
        self.message = message
    }
}
