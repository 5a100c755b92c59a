/// The parameters every Google API takes beside a method's own (Discovery's top-level
/// `parameters`), typed: set them on any query, generated or hand-built.
///
/// The others are deliberately not here: `fields` is ``Query/fields``; `alt` and `prettyPrint`
/// are Courier's (it decodes compact JSON; media goes through `makeMediaQuery()`); `key` is
/// ``ServiceActor/Configuration/Auth-swift.struct/apiKey``; `access_token` and `oauth_token` would put a credential
/// in a URL, which logs and proxies keep, so credentials travel in the `Authorization` header
/// from the authorizer; `callback` is JSONP, for browsers; `upload_protocol` and `uploadType` are
/// set by the upload.
public struct StandardParameters: Sendable, Hashable {
    /// Attributes quota to a user of your server (up to 40 characters): each user gets their
    /// own per-user limit instead of sharing yours.
    public var quotaUser: String?
    /// The end user's IP address, for per-user quota (legacy: Google prefers ``quotaUser``).
    public var userIp: String?
    /// The error format (`$.xgafv`): v1 by default; v2 answers with the newer error shape.
    public var errorFormat: ErrorFormat?

    public struct ErrorFormat: StringEnum {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let v1 = ErrorFormat(rawValue: "1")
        public static let v2 = ErrorFormat(rawValue: "2")
    }

    public init(quotaUser: String? = nil, userIp: String? = nil, errorFormat: ErrorFormat? = nil) {
        self.quotaUser = quotaUser
        self.userIp = userIp
        self.errorFormat = errorFormat
    }

    /// Adds the ones set to `parameters`, replacing a value of the same name.
    func apply(to parameters: inout QueryParameters) {
        if let quotaUser { parameters.set("quotaUser", quotaUser) }
        if let userIp { parameters.set("userIp", userIp) }
        if let errorFormat { parameters.set("$.xgafv", errorFormat) }
    }
}
