/// The body every error with a fixed set of kinds shares: the raw value of its `Code` is its
/// public ``CourierError/kind``, so each type declares only its codes, its own fields and the
/// static members users match on (`catch UploadError.sessionExpired`).
///
/// Internal on purpose: the codes stay Courier's, so a new kind is not a source break for a
/// `switch` in user code; users see `kind`, equality by kind and the static members.
protocol CodedError: CourierError, Hashable {
    associatedtype Code: RawRepresentable<String> & Sendable
    var code: Code { get }
}

extension CodedError {
    public var kind: String { code.rawValue }
}
