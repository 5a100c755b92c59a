/// Why a document could not be turned into Swift.
public enum GeneratorError: Error, Equatable, CustomStringConvertible {
    case invalidDiscoveryDocument(String)
    case unresolvedReference(String)
    case cannotWrite(String)
    /// An idempotency table (``IdempotencyTable``) that does not parse or contradicts itself.
    case invalidIdempotencyTable(String)

    public var description: String {
        switch self {
        case .invalidDiscoveryDocument(let why): "not a discovery document: \(why)"
        case .unresolvedReference(let name): "a $ref names no schema: \(name)"
        case .cannotWrite(let why): "cannot write the generated module: \(why)"
        case .invalidIdempotencyTable(let why): "invalid idempotency table: \(why)"
        }
    }
}
