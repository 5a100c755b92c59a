import CourierSync
import Foundation

/// storage-testbench's Retry Test API (googleapis/storage-testbench, `testbench/database.py` and
/// `testbench/common.py`): a test is a queue of instructions per API method, created with
/// `POST /retry_test`, read with `GET /retry_test/{id}` and removed with `DELETE`. A request that
/// carries `x-retry-test-id` and whose method's queue is not empty gets the fault at its head;
/// the fault is consumed (dequeued) when it is injected. A test is `completed` when every queue
/// is empty: a client that never sent the request a fault was meant for leaves it incomplete.
public final class RetryTestRegistry: Sendable {
    struct Test {
        var instructions: [String: [String]]
        var transport: String
    }

    private let tests = LockedValue<[String: Test]>([:])
    private let counter = LockedValue(0)

    /// Creates a test; its id.
    func create(instructions: [String: [String]], transport: String) -> String {
        let id = counter.withLock { $0 += 1; return String(format: "%08x%08x", $0, UInt32.random(in: 0...UInt32.max)) }
        tests.withLock { $0[id] = Test(instructions: instructions, transport: transport) }
        return id
    }

    /// The test as the API answers it, or nil when there is none.
    func resource(_ id: String) -> [String: Any]? {
        tests.withLock { tests in
            guard let test = tests[id] else { return nil }
            return ["id": id, "instructions": test.instructions, "transport": test.transport,
                    "completed": test.instructions.values.allSatisfy(\.isEmpty)]
        }
    }

    func delete(_ id: String) -> Bool { tests.withLock { $0.removeValue(forKey: id) != nil } }

    /// The next instruction for `method` in test `id`, left in place.
    func peek(_ id: String, method: String) -> String? {
        tests.withLock { $0[id]?.instructions[method]?.first }
    }

    /// Consumes the next instruction for `method`.
    func dequeue(_ id: String, method: String) {
        tests.withLock { tests in
            guard var queue = tests[id]?.instructions[method], !queue.isEmpty else { return }
            queue.removeFirst()
            tests[id]?.instructions[method] = queue
        }
    }

    /// Whether every instruction of test `id` was consumed (the runner's second check).
    public func isCompleted(_ id: String) -> Bool {
        tests.withLock { $0[id]?.instructions.values.allSatisfy(\.isEmpty) ?? false }
    }
}

/// One instruction's meaning, parsed as storage-testbench's regular expressions read it.
enum RetryInstruction: Equatable {
    /// `return-503`: answer with this status.
    case status(Int)
    /// `return-reset-connection`: reset the connection before answering.
    case resetConnection
    /// `return-broken-stream` (4 bytes) or `return-broken-stream-after-256K`: send this many bytes of
    /// the response body, then close the connection.
    case brokenStream(afterBytes: Int)
    /// `return-503-after-256K`: an upload keeps this many bytes, then gets this status.
    case statusAfterBytes(status: Int, bytes: Int)
    /// `return-broken-stream-final-chunk-after-10B`: the request that completes a resumable
    /// upload stores the object, and its 200 carries only the first N bytes of the object's JSON.
    case truncatedFinalAnswer(bytes: Int)
    /// `stall-for-10s-after-128K`: a response sends N KiB of its body, then pauses; an upload
    /// request whose bytes reach past N KiB waits before it is stored and answered.
    case stall(seconds: Int, afterBytes: Int)
    /// Anything else (the file's other instructions need no action here).
    case other

    /// `text`'s meaning; an instruction whose numbers are out of range means nothing (``parse(_:)`` refuses it).
    init(_ text: String) {
        self = (try? Self.parse(text)) ?? .other
    }

    /// `text`'s meaning, its numbers checked: a status HTTP can carry, a size in KiB up to a
    /// tebibyte. The emulator's expressions take digits only; a status of 1000 or a size that
    /// overflows once multiplied would trap the server, so `POST /retry_test` refuses them.
    static func parse(_ text: String) throws(ClientNumberError) -> RetryInstruction {
        func kibibytes(_ digits: Substring) throws(ClientNumberError) -> Int {
            try ClientNumber.require(digits, "\(text)'s size", in: 0...(1 << 30)) * 1024
        }
        if text == "return-reset-connection" { return .resetConnection }
        if text.hasPrefix("return-broken-stream-final-chunk-after-"), text.hasSuffix("B") {
            let digits = text.dropFirst("return-broken-stream-final-chunk-after-".count).dropLast()
            return .truncatedFinalAnswer(bytes: try ClientNumber.require(digits, "\(text)'s size", in: 0...(1 << 40)))
        }
        if text.hasPrefix("stall-for-"), text.hasSuffix("K") {
            let parts = text.dropFirst("stall-for-".count).dropLast().split(separator: "s-after-", omittingEmptySubsequences: false)
            guard parts.count == 2 else { return .other }
            return .stall(seconds: try ClientNumber.require(parts[0], "\(text)'s time", in: 0...3600), afterBytes: try kibibytes(parts[1]))
        }
        if text == "return-broken-stream" { return .brokenStream(afterBytes: 4) }
        if text.hasPrefix("return-broken-stream-after-"), text.hasSuffix("K") {
            return .brokenStream(afterBytes: try kibibytes(text.dropFirst("return-broken-stream-after-".count).dropLast()))
        }
        guard text.hasPrefix("return-") else { return .other }
        let rest = text.dropFirst("return-".count)
        let parts = rest.split(separator: "-", maxSplits: 2)
        if Int(rest) != nil { return .status(try ClientNumber.require(rest, "\(text)'s status", in: ClientNumber.status)) }
        if parts.count == 3, parts[1] == "after", parts[2].hasSuffix("K"), Int(parts[0]) != nil {
            return .statusAfterBytes(status: try ClientNumber.require(parts[0], "\(text)'s status", in: ClientNumber.status),
                                     bytes: try kibibytes(parts[2].dropLast()))
        }
        return .other
    }
}
