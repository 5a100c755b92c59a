/// What `courier load` rejects before sending anything.
public enum LoadError: Error, CustomStringConvertible, Equatable {
    case invalidScenario(String)
    case invalidThreshold(String)
    case invalidResult(String)
    case invalidArgument(String)

    public var description: String {
        switch self {
        case .invalidScenario(let message): "invalid scenario: \(message)"
        case .invalidThreshold(let message): "invalid threshold: \(message)"
        case .invalidResult(let message): "invalid result: \(message)"
        case .invalidArgument(let message): message
        }
    }
}
