/// The shape every Courier error shares: a stable kind, a message, and the error it wraps.
///
/// ```swift
/// do { … } catch let error as any CourierError {
///     metrics.increment("failures", ["kind": error.kind])   // timedOut, invalidGrant, notFound …
///     logger.warning("\(error)")                            // the type, the kind and the message
/// }
/// ```
///
/// Errors with a fixed set of kinds (``TransportError``, ``AuthError``, ``QueryError``, ``UploadError``,
/// ``BatchError``, ``JSONParsingError``) also offer each kind as a static member to match on
/// (`catch AuthError.invalidGrant`); two of them are equal when their kinds are. Messages never
/// carry a token, key or upload session URL.
public protocol CourierError: Error, Sendable, CustomStringConvertible {
    /// A stable name for what went wrong (`timedOut`, `invalidGrant`, `malformedResponse` …): a
    /// label for metrics, logs and reports that does not change between releases.
    var kind: String { get }
    /// What went wrong, in words.
    var message: String { get }
    /// The error this one wraps, when one caused it: the JSON error behind a malformed response,
    /// the transport failure behind an unreachable token endpoint.
    var underlyingError: (any Error)? { get }
}

extension CourierError {
    public var underlyingError: (any Error)? { nil }

    /// `TypeName.kind: message` (`UploadError.sessionExpired: …`).
    public var description: String {
        message.isEmpty ? "\(Self.self).\(kind)" : "\(Self.self).\(kind): \(message)"
    }
}

extension CourierError where Self: Hashable {
    /// Two errors of one type are equal when their kinds are, so `catch AuthError.invalidGrant`
    /// matches whatever the message says.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.kind == rhs.kind }
    public func hash(into hasher: inout Hasher) { hasher.combine(kind) }
}

extension CourierError where Self: Equatable {
    /// Lets a static member be a `catch` pattern: `catch TransportError.timedOut` matches any
    /// `TransportError` of that kind.
    public static func ~= (pattern: Self, error: any Error) -> Bool {
        (error as? Self) == pattern
    }
}
