import Foundation
import Synchronization

/// What the pipeline needs to know about the operation a request belongs to: who it is (for
/// events, logs, metrics and `cancel(requestID:)`) and which promises apply to it.
///
/// A value with its fields in one copy-on-write box: it is copied into every frame of the
/// pipeline, and those frames live as long as a request is in flight, so one reference beats a
/// dozen fields per copy (10,000 requests in flight are measured in `make bench`).
struct RequestContext: Sendable {
    /// The operations, as metrics and events name them.
    enum Operation: String, Sendable {
        case execute, send, stream, download, batch, upload, token
    }

    private enum Identity: Sendable { case named(String), numbered(UInt64) }

    /// Mutated only while uniquely referenced (`mutate`), so sharing it between tasks is safe.
    private final class Storage: @unchecked Sendable {
        let identity: Identity
        var name: String
        var operation: Operation
        var retry: RetryPolicy
        var testHandler: TestHandler?
        var authorize: Bool
        var limited = true
        var accepts: @Sendable (Int) -> Bool = { (200..<300).contains($0) }
        var throwsRefusedStatus = true
        /// The API a query belongs to, for rate limits keyed by API.
        var api: String?
        var rateLimitKey: String?
        /// A raw request (`send`, `stream`, `send(_:writingBodyTo:)`, token requests).
        var isRaw = false
        let attempts: AttemptTally

        init(identity: Identity, name: String, operation: Operation, retry: RetryPolicy, testHandler: TestHandler?,
             authorize: Bool, attempts: AttemptTally = AttemptTally()) {
            self.identity = identity
            self.attempts = attempts
            self.name = name
            self.operation = operation
            self.retry = retry
            self.testHandler = testHandler
            self.authorize = authorize
        }

        func copy() -> Storage {
            let copy = Storage(identity: identity, name: name, operation: operation, retry: retry, testHandler: testHandler,
                               authorize: authorize, attempts: attempts)
            copy.limited = limited
            copy.accepts = accepts
            copy.throwsRefusedStatus = throwsRefusedStatus
            copy.api = api
            copy.rateLimitKey = rateLimitKey
            copy.isRaw = isRaw
            return copy
        }
    }

    private var storage: Storage

    init(requestID: String?, name: String, operation: Operation, retry: RetryPolicy, testHandler: TestHandler?,
         authorize: Bool) {
        storage = Storage(identity: requestID.map(Identity.named) ?? .numbered(RequestID.nextNumber()), name: name,
                          operation: operation, retry: retry, testHandler: testHandler, authorize: authorize)
    }

    private mutating func mutate(_ change: (Storage) -> Void) {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        change(storage)
    }

    /// The operation's ID: the caller's, or a number spelled `courier-N` only when something
    /// reads it (an event subscriber, a log), so an unnamed raw request formats no string.
    var requestID: String {
        switch storage.identity {
        case .named(let id): id
        case .numbered(let number): RequestID.format(number)
        }
    }

    /// The query's method name (`notes.get`), or the operation's for raw requests.
    var name: String { storage.name }
    var operation: Operation { storage.operation }
    var retry: RetryPolicy {
        get { storage.retry }
        set { mutate { $0.retry = newValue } }
    }
    /// Answers in place of the network (``ServiceActor/Configuration/TestHooks/handler``).
    var testHandler: TestHandler? { storage.testHandler }
    /// Add the service's credentials, and refresh them once after a 401.
    var authorize: Bool { storage.authorize }
    /// Hold a slot of the service-wide limiter during each attempt. Token requests do not: the
    /// request waiting for its token may hold the last slot.
    var limited: Bool {
        get { storage.limited }
        set { mutate { $0.limited = newValue } }
    }
    /// Statuses the caller takes as the answer; any other is retried as the policy says and then
    /// thrown as ``APIError`` (or returned, when `throwsRefusedStatus` is false).
    var accepts: @Sendable (Int) -> Bool {
        get { storage.accepts }
        set { mutate { $0.accepts = newValue } }
    }
    var throwsRefusedStatus: Bool {
        get { storage.throwsRefusedStatus }
        set { mutate { $0.throwsRefusedStatus = newValue } }
    }
    /// The API a query belongs to (`storage`), for rate limits keyed by API.
    var api: String? {
        get { storage.api }
        set { mutate { $0.api = newValue } }
    }
    /// The rate limit's key the caller named, if any.
    var rateLimitKey: String? {
        get { storage.rateLimitKey }
        set { mutate { $0.rateLimitKey = newValue } }
    }
    /// A raw request, which circuit breakers guard only when asked.
    var isRaw: Bool {
        get { storage.isRaw }
        set { mutate { $0.isRaw = newValue } }
    }
    /// Where the pipeline leaves the last status it saw and the retries it made; a changed copy
    /// shares it (same operation).
    var attempts: AttemptTally { storage.attempts }
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
    public var retry: RetryPolicy? {
        get { retryOverride?.policy }
        set { retryOverride = newValue.map(RetryOverride.init) }
    }

    /// The policy, boxed: inline it made options 184 bytes, and a caller that lets `send`'s
    /// `options` default builds several temporaries of them, all kept in its async frame while
    /// the request is in flight (960 bytes for `try await service.send(request)`, 1 KiB of
    /// every waiting query; Docs/Performance.md). Most requests override no policy.
    private var retryOverride: RetryOverride?

    private final class RetryOverride: Sendable {
        let policy: RetryPolicy
        init(_ policy: RetryPolicy) { self.policy = policy }
    }
    /// Add the service's ``ServiceActor/Configuration/Auth-swift.struct/authorizer`` credentials (refreshed once
    /// after a 401). Off by default: a raw request names its own URL, and credentials for
    /// Google's APIs must not travel to any host by accident.
    public var authorize: Bool
    /// A name for logs, events and metrics.
    public var name: String?
    /// The rate limit this request takes tokens from (``RateLimits``); nil: by the service's scope.
    public var rateLimitKey: String?

    public init(requestID: String? = nil, retry: RetryPolicy? = nil, authorize: Bool = false, name: String? = nil,
                rateLimitKey: String? = nil) {
        self.requestID = requestID
        self.retryOverride = retry.map(RetryOverride.init)
        self.authorize = authorize
        self.name = name
        self.rateLimitKey = rateLimitKey
    }
}
