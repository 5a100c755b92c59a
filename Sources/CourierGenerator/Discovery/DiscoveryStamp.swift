/// Which revision of a Discovery document a client was generated from: the document's
/// `revision` and `etag`, recorded as the second line of every generated file
/// (`// Discovery revision 20261009, etag "3130…"`), so `courier generate --check` can say that
/// Google's document changed, and from which revision to which.
public struct DiscoveryStamp: Sendable, Equatable, Hashable {
    public var revision: String?
    public var etag: String?

    public init(revision: String?, etag: String?) {
        self.revision = revision
        self.etag = etag
    }

    /// The stamp of a parsed document.
    public init(_ document: DiscoveryDocument) {
        self.init(revision: document.revision, etag: document.etag)
    }

    /// Neither is known: the header gets no stamp line.
    var isEmpty: Bool { revision == nil && etag == nil }

    /// The header line, without `// `.
    var line: String {
        "Discovery revision \(Self.shown(revision)), etag \(Self.shown(etag))"
    }

    /// `revision A → B, etag X → Y`: what `--check` says changed.
    public func change(to fresh: DiscoveryStamp) -> String {
        "revision \(Self.shown(revision)) → \(Self.shown(fresh.revision)), etag \(Self.shown(etag)) → \(Self.shown(fresh.etag))"
    }

    /// A missing value as the header spells it, and `recorded(in:)` reads it back.
    private static func shown(_ value: String?) -> String { value ?? "unknown" }

    /// The stamp recorded in a generated file's header, or nil when it has none.
    public static func recorded(in source: String) -> DiscoveryStamp? {
        for line in source.split(separator: "\n", maxSplits: 3).prefix(3) {
            guard let match = line.wholeMatch(of: /\/\/ Discovery revision (\S+), etag (.+)/) else { continue }
            let value = { (text: Substring) in text == shown(nil) ? nil : String(text) }
            return DiscoveryStamp(revision: value(match.output.1), etag: value(match.output.2))
        }
        return nil
    }
}
