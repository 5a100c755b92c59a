import Foundation

/// A Discovery document named by API and version (`drive:v3`), fetched from Google's Discovery
/// service or another root (`DiscoveryName+Fetch.swift`).
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
}

extension DiscoveryName {
    /// `text` as a Discovery service's root: an http or https URL with a host, else nil.
    public static func root(_ text: String) -> URL? {
        guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil else { return nil }
        return url
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

    public init(message: String) {
        self.message = message
    }
}
