import Courier

/// What `courier load` rejects before sending anything.
public enum LoadError: CourierError, Equatable {
    case invalidScenario(String)
    case invalidThreshold(String)
    case invalidResult(String)
    case invalidArgument(String)

    public var kind: String {
        switch self {
        case .invalidScenario: "invalidScenario"
        case .invalidThreshold: "invalidThreshold"
        case .invalidResult: "invalidResult"
        case .invalidArgument: "invalidArgument"
        }
    }

    public var message: String {
        switch self {
        case .invalidScenario(let message), .invalidThreshold(let message), .invalidResult(let message),
             .invalidArgument(let message): message
        }
    }

    public var description: String {
        switch self {
        case .invalidScenario(let message): "invalid scenario: \(message)"
        case .invalidThreshold(let message): "invalid threshold: \(message)"
        case .invalidResult(let message): "invalid result: \(message)"
        case .invalidArgument(let message): message
        }
    }
}
