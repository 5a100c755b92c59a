import Foundation
import Synchronization

/// What the pipeline needs to know about the operation a request belongs to: who it is (for
/// events, logs, metrics and `cancel(requestID:)`) and which promises apply to it.
struct RequestContext: Sendable {
    /// The operations, as metrics and events name them.
    enum Operation: String, Sendable {
        case execute, send, stream, download, batch, upload, token
    }

    /// The operation's ID: the caller's, or a number spelled `courier-N` only when something
    /// reads it (an event subscriber, a log), so an unnamed raw request formats no string.
    var requestID: String {
        switch identity {
        case .named(let id): id
        case .numbered(let number): RequestID.format(number)
        }
    }
    private let identity: Identity
    private enum Identity: Sendable { case named(String), numbered(UInt64) }
    /// The query's method name (`notes.get`), or the operation's for raw requests.
    var name: String
    var operation: Operation
    var retry: RetryPolicy
    /// Answers in place of the network (``ServiceActor/Configuration/testHandler``).
    var testHandler: TestHandler?
    /// Add the service's credentials, and refresh them once after a 401.
    var authorize: Bool
    /// Hold a slot of the service-wide limiter during each attempt. Token requests do not: the
    /// request waiting for its token may hold the last slot.
    var limited = true
    /// Statuses the caller takes as the answer; any other is retried as the policy says and then
    /// thrown as ``APIError`` (or returned, when `throwsRefusedStatus` is false).
    var accepts: @Sendable (Int) -> Bool = { (200..<300).contains($0) }
    var throwsRefusedStatus = true
    /// Where the pipeline leaves the last status it saw.
    let observedStatus = StatusCell()

    init(requestID: String?, name: String, operation: Operation, retry: RetryPolicy, testHandler: TestHandler?,
         authorize: Bool) {
        identity = requestID.map(Identity.named) ?? .numbered(RequestID.nextNumber())
        self.name = name
        self.operation = operation
        self.retry = retry
        self.testHandler = testHandler
        self.authorize = authorize
    }
}

/// Per-call options of the raw request operations (``ServiceActor/send(_:options:)``, `stream`,
/// `download`, `downloadFile`).
///
/// ```swift
/// var options = RequestOptions(requestID: "nightly-export")
/// options.retry = .default          // raw requests are not retried unless asked
/// options.authorize = true          // add the service's credentials
/// let response = try await service.send(request, options: options)
/// // elsewhere: await service.cancel(requestID: "nightly-export")
/// ```
public struct RequestOptions: Sendable {
    /// Names the operation for ``ServiceActor/cancel(requestID:)``, events and logs; nil: a fresh one.
    public var requestID: String?
    /// nil: ``RetryPolicy/disabled`` for `send` and `stream`, whose non-2xx answers are the
    /// caller's to judge; the service's ``ServiceActor/Configuration/retry`` for downloads.
    public var retry: RetryPolicy?
    /// Add the service's ``ServiceActor/Configuration/authorizer`` credentials (refreshed once
    /// after a 401). Off by default: a raw request names its own URL, and credentials for
    /// Google's APIs must not travel to any host by accident.
    public var authorize: Bool
    /// A name for logs, events and metrics.
    public var name: String?

    public init(requestID: String? = nil, retry: RetryPolicy? = nil, authorize: Bool = false, name: String? = nil) {
        self.requestID = requestID
        self.retry = retry
        self.authorize = authorize
        self.name = name
    }
}

/// The last HTTP status an operation's requests saw, for its `finished` event (0: none yet).
final class StatusCell: Sendable {
    private let value = Atomic<Int>(0)
    func store(_ status: Int) { value.store(status, ordering: .relaxed) }
    var status: Int? {
        let status = value.load(ordering: .relaxed)
        return status == 0 ? nil : status
    }
}
