import Courier
import Foundation

/// A Discovery document named by API and version (`drive:v3`), fetched from Google's Discovery
/// service (or another root) through Courier itself, with its retries on transient failures.
/// No credentials are needed; an API key is sent when given. `courier generate drive:v3` and the
/// command plugin's `--api drive:v3` both come here.
public struct DiscoveryName: Equatable, Sendable, CustomStringConvertible {
    /// The API's name, as the Discovery directory lists it (`drive`).
    public var api: String
    /// Its version (`v3`, `directory_v1`).
    public var version: String

    /// Google's Discovery service, where names are fetched from unless told otherwise.
    public static let googleRoot = URL(string: "https://www.googleapis.com/")!

    /// `drive:v3` → (drive, v3); nil for text that is not `name:version`.
    public init?(_ text: String) {
        guard let match = text.wholeMatch(of: /([a-zA-Z][a-zA-Z0-9_.-]*):([a-zA-Z0-9_.-]+)/) else { return nil }
        api = String(match.output.1)
        version = String(match.output.2)
    }

    /// Whether `text` reads as a name given without its version (`drive`), not as a file.
    public static func lacksVersion(_ text: String) -> Bool {
        text.wholeMatch(of: /[a-zA-Z][a-zA-Z0-9_-]*/) != nil
    }

    /// `<root>/discovery/v1/apis/<api>/<version>/rest`, as Google serves it.
    public func url(root: URL) -> URL {
        root.appendingPathComponent("discovery/v1/apis/\(api)/\(version)/rest")
    }

    public var description: String { "\(api):\(version)" }

    /// The document's bytes, or a typed error naming what failed: the name the service does not
    /// know (404), another status, or the transport failure.
    public func fetch(root: URL = DiscoveryName.googleRoot, apiKey: String? = nil) async throws -> Data {
        var configuration = ServiceActor.Configuration()
        configuration.auth.authorizer = apiKey.map { APIKeyAuthorizer(key: $0) }
        configuration.transport.timeouts = Timeouts(connect: .seconds(10), idle: .seconds(30))
        let url = url(root: root)
        var request = HTTPRequest(url: url)
        request.headers["Accept"] = "application/json"
        let response: HTTPResponse
        do {
            response = try await withService(configuration: configuration) { service in
                try await service.send(request, options: RequestOptions(authorize: apiKey != nil))
            }
        } catch {
            throw DiscoveryFetchError(message: "could not fetch the \(description) Discovery document from \(Redaction.url(url.absoluteString)): \(error)")
        }
        switch response.status {
        case 200:
            return response.body
        case 404:
            throw DiscoveryFetchError(message: "the Discovery service at \(Redaction.url(root.absoluteString)) knows no API \(description) (404)")
        default:
            throw DiscoveryFetchError(message: "the Discovery service answered \(response.status) for \(description) at \(Redaction.url(url.absoluteString))")
        }
    }
}

extension DiscoveryName {
    /// `text` as a Discovery service's root: an http or https URL with a host, else nil.
    public static func root(_ text: String) -> URL? {
        guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil else { return nil }
        return url
    }

    /// What a generator's document argument names: a file's bytes, else the named API's document
    /// fetched from `root`. Throws ``DiscoveryFetchError`` for anything else.
    public static func document(_ argument: String, root: URL, apiKey: String?) async throws -> Data {
        if let data = FileManager.default.contents(atPath: argument) { return data }
        guard let name = DiscoveryName(argument) else { throw DiscoveryFetchError(message: unreadable(argument)) }
        return try await name.fetch(root: root, apiKey: apiKey)
    }

    /// Why `argument` is neither a readable file nor `name:version`.
    public static func unreadable(_ argument: String) -> String {
        lacksVersion(argument)
            ? "\(argument) is not a file, and as an API name it lacks its version: write \(argument):<version>, as in drive:v3"
            : "cannot read \(argument)"
    }
}

/// Fetching a Discovery document failed; nothing was written.
public struct DiscoveryFetchError: Error, CustomStringConvertible {
    /// What failed, naming the API and the service; never the API key.
    public var message: String
    public var description: String { message }
}
