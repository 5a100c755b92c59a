/// How an API's owner classifies retrying one of its methods: the generator's model of Courier's
/// `IdempotencyClass`, which a generated query sets (``Renderer`` writes the same cases as a
/// literal). The generator keeps its own model so that it, and the SwiftPM plugins that run it,
/// build without Courier's runtime.
public enum IdempotencyClass: Sendable, Hashable {
    /// Safe to send twice.
    case idempotent
    /// Safe when the request carries one of these query parameters or body fields (a precondition).
    case conditional(parameters: [String] = [], bodyFields: [String] = [])
    /// Never re-sent once it may have reached the server.
    case nonIdempotent
}
