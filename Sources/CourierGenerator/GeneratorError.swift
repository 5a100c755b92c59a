/// Why a document could not be turned into Swift.
public enum GeneratorError: Error, Equatable, CustomStringConvertible {
    case invalidDiscoveryDocument(String)
    case unresolvedReference(String)
    case cannotWrite(String)

    public var description: String {
        switch self {
        case .invalidDiscoveryDocument(let why): "not a discovery document: \(why)"
        case .unresolvedReference(let name): "a $ref names no schema: \(name)"
        case .cannotWrite(let why): "cannot write the generated module: \(why)"
        }
    }
}
