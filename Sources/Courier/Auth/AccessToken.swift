import Foundation

/// An OAuth 2 access token and when it expires. Its description never shows the token.
public struct AccessToken: Sendable, Hashable, CustomStringConvertible {
    /// The token itself: a secret.
    public let value: String
    /// When the server says it expires; nil if it did not say.
    public let expiresAt: Date?
    public let scopes: [String]

    public init(value: String, expiresAt: Date?, scopes: [String] = []) {
        self.value = value
        self.expiresAt = expiresAt
        self.scopes = scopes
    }

    /// Whether it is still good `skew` from `now` (tokens are refreshed before they expire).
    public func isValid(at now: Date, skew: Duration) -> Bool {
        guard let expiresAt else { return true }
        return expiresAt.timeIntervalSince(now) > Double(skew.components.seconds)
            + Double(skew.components.attoseconds) / 1e18
    }

    public var description: String {
        "AccessToken(\(Redaction.placeholder), expires \(expiresAt.map { RFC3339.format($0) } ?? "never"))"
    }
}
