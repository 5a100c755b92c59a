/// Courier's version and the User-Agent it sends.
public enum CourierVersion {
    public static let version = "0.1.0"

    /// `Courier/<version> (Linux; Swift <version>)`.
    public static let userAgent = "Courier/\(version) (Linux; Swift \(swiftVersion))"

    static var swiftVersion: String {
        #if swift(>=6.4)
        "6.4"
        #elseif swift(>=6.3)
        "6.3"
        #elseif swift(>=6.2)
        "6.2"
        #elseif swift(>=6.1)
        "6.1"
        #else
        "6.0"
        #endif
    }
}
