import Foundation

/// What a ``TokenStore`` keeps: the latest access token and, when the provider rotates it, the
/// refresh token.
public struct StoredCredentials: Codable, Sendable, Hashable, CustomStringConvertible {
    public var accessToken: String?
    public var expiresAt: Date?
    public var refreshToken: String?
    public var scopes: [String]

    public init(accessToken: String?, expiresAt: Date?, refreshToken: String?, scopes: [String]) {
        self.accessToken = accessToken
        self.expiresAt = expiresAt
        self.refreshToken = refreshToken
        self.scopes = scopes
    }

    public var description: String {
        "StoredCredentials(access: \(accessToken == nil ? "none" : Redaction.placeholder), refresh: \(refreshToken == nil ? "none" : Redaction.placeholder), expires: \(expiresAt.map { RFC3339.format($0) } ?? "unknown"))"
    }
}

/// Persists tokens between runs, so a restart does not force a refresh (or a new sign-in).
public protocol TokenStore: Sendable {
    func load() async throws -> StoredCredentials?
    func save(_ credentials: StoredCredentials) async throws
    func clear() async throws
}

/// Stores tokens as a JSON file that only its owner can read or write (mode 0600), replaced
/// atomically on each save.
public struct FileTokenStore: TokenStore {
    public let path: String

    /// `~` is expanded.
    public init(path: String) {
        self.path = (path as NSString).expandingTildeInPath
    }

    public func load() async throws -> StoredCredentials? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            return try decoder.decode(StoredCredentials.self, from: data)
        } catch {
            throw AuthError(.invalidCredentials, message: "cannot read the token store at \(path)")
        }
    }

    public func save(_ credentials: StoredCredentials) async throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        try PrivateFile.write(try encoder.encode(credentials), to: path)
    }

    public func clear() async throws {
        if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
    }
}

/// Keeps tokens in memory only: for tests, or processes that must not write secrets to disk.
public actor InMemoryTokenStore: TokenStore {
    private var credentials: StoredCredentials?

    public init(_ credentials: StoredCredentials? = nil) {
        self.credentials = credentials
    }

    public func load() async throws -> StoredCredentials? { credentials }
    public func save(_ credentials: StoredCredentials) async throws { self.credentials = credentials }
    public func clear() async throws { credentials = nil }
}
