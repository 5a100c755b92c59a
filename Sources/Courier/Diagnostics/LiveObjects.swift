import Synchronization

/// How many of Courier's own objects and descriptors are alive in this process, by kind.
///
/// The leak signal LeakSanitizer cannot give: it misses pointers that Swift packs into enum
/// payloads (`Data`'s storage among them), so for Swift it both reports live objects as leaked
/// and misses real leaks, and `make sanitize` runs with it off. These counters are exact
/// instead: the test suite checks them after every service it shuts down and once more when
/// the test process ends (`Tests/CourierTests/LeakChecks.swift`).
///
/// Counting happens in debug builds only (tests and sanitizer builds); in release the calls
/// compile to nothing, so the request path pays no atomic operation for it.
enum LiveObjects {
    enum Kind: Int, CaseIterable, Sendable, CustomStringConvertible {
        case service, eventLoop, multi, transfer, easyHandle, requestBody, responseBuffer, streamHandle
        /// Response header blocks (``ReceivedHeaderBytes``): they outlive the transfer, with the
        /// response the caller keeps, so only the end-of-process check reads them.
        case headerBlock
        /// Files a download holds open (``FileOutput``), not the objects.
        case openFile

        var description: String {
            switch self {
            case .service: "ServiceActor"
            case .eventLoop: "CurlEventLoop"
            case .multi: "CurlMulti"
            case .transfer: "Transfer"
            case .easyHandle: "EasyHandle"
            case .requestBody: "RequestBodySource"
            case .responseBuffer: "ResponseBodyBuffer"
            case .streamHandle: "ResponseStreamHandle"
            case .headerBlock: "response header block"
            case .openFile: "open download file"
            }
        }
    }

    #if DEBUG
    /// One atomic per kind, not a `Mutex`: the stdlib's Mutex waits in futex calls that
    /// ThreadSanitizer cannot see, so it would report the counts themselves as races; atomic
    /// operations are compiled into this module and instrumented.
    private final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    private static let counters = Kind.allCases.map { _ in Counter() }
    #endif

    @inline(__always) static func created(_ kind: Kind) {
        #if DEBUG
        counters[kind.rawValue].value.add(1, ordering: .relaxed)
        #endif
    }

    @inline(__always) static func destroyed(_ kind: Kind) {
        #if DEBUG
        counters[kind.rawValue].value.subtract(1, ordering: .relaxed)
        #endif
    }

    /// Whether this build counts at all (debug builds).
    static var isCounting: Bool {
        #if DEBUG
        true
        #else
        false
        #endif
    }

    /// The kinds with live objects now, and how many of each.
    static func snapshot() -> [Kind: Int] {
        #if DEBUG
        var result: [Kind: Int] = [:]
        for kind in Kind.allCases {
            let count = counters[kind.rawValue].value.load(ordering: .relaxed)
            if count != 0 { result[kind] = count }
        }
        return result
        #else
        return [:]
        #endif
    }
}
