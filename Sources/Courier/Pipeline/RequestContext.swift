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

    /// Mutated only while uniquely referenced (`mutate`), so sharing it between tasks is safe, and
    /// its fields skip the runtime's exclusivity check (as every copy-on-write box here does; Docs/Performance.md, "Decisions").
    ///
    /// A request in flight holds one, so it is laid out to be small: the operation's first
    /// storage is its ``AttemptTally`` too (a copy points at it), and the one-byte fields sit
    /// together after the identity's tag (Docs/Performance.md, "Decisions").
    private final class Storage: AttemptTally, @unchecked Sendable {
        /// The tally of the operation's first storage, when this is a changed copy of it.
        let sharedTally: AttemptTally?
        let identity: Identity
        @exclusivity(unchecked) var operation: Operation
        @exclusivity(unchecked) var authorize: Bool
        @exclusivity(unchecked) var limited = true
        @exclusivity(unchecked) var throwsRefusedStatus = true
        /// A raw request (`send`, `stream`, `send(_:writingBodyTo:)`, token requests).
        @exclusivity(unchecked) var isRaw = false
        /// Sends Cloud Storage's invocation headers on each attempt (``InvocationHeaders``).
        @exclusivity(unchecked) var stampsInvocation = false
        @exclusivity(unchecked) var name: String
        @exclusivity(unchecked) var retry: RetryPolicy
        @exclusivity(unchecked) var testHandler: TestHandler?
        @exclusivity(unchecked) var accepts: @Sendable (Int) -> Bool = { (200..<300).contains($0) }
        /// The API a query belongs to, for rate limits keyed by API.
        @exclusivity(unchecked) var api: String?
        @exclusivity(unchecked) var rateLimitKey: String?

        init(identity: Identity, name: String, operation: Operation, retry: RetryPolicy, testHandler: TestHandler?,
             authorize: Bool, sharedTally: AttemptTally? = nil) {
            self.identity = identity
            self.sharedTally = sharedTally
            self.name = name
            self.operation = operation
            self.retry = retry
            self.testHandler = testHandler
            self.authorize = authorize
        }

        var attempts: AttemptTally { sharedTally ?? self }

        func copy() -> Storage {
            let copy = Storage(identity: identity, name: name, operation: operation, retry: retry, testHandler: testHandler,
                               authorize: authorize, sharedTally: attempts)
            copy.limited = limited
            copy.accepts = accepts
            copy.throwsRefusedStatus = throwsRefusedStatus
            copy.api = api
            copy.rateLimitKey = rateLimitKey
            copy.isRaw = isRaw
            copy.stampsInvocation = stampsInvocation
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
    /// Each attempt carries Cloud Storage's invocation headers (``InvocationHeaders``).
    var stampsInvocation: Bool {
        get { storage.stampsInvocation }
        set { mutate { $0.stampsInvocation = newValue } }
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
    public var requestID: String? {
        get { storage?.requestID }
        set { update { $0.requestID = newValue } }
    }
    /// nil: ``RetryPolicy/disabled`` for `send` and `stream`, whose non-2xx answers are the
    /// caller's to judge; the service's ``ServiceActor/Configuration/retry`` for downloads.
    public var retry: RetryPolicy? {
        get { storage?.retry }
        set { update { $0.retry = newValue } }
    }
    /// Add the service's ``ServiceActor/Configuration/Auth-swift.struct/authorizer`` credentials (refreshed once
    /// after a 401). Off by default: a raw request names its own URL, and credentials for
    /// Google's APIs must not travel to any host by accident.
    public var authorize: Bool {
        get { storage?.authorize ?? false }
        set { update { $0.authorize = newValue } }
    }
    /// A name for logs, events and metrics.
    public var name: String? {
        get { storage?.name }
        set { update { $0.name = newValue } }
    }
    /// The rate limit this request takes tokens from (``RateLimits``); nil: by the service's scope.
    public var rateLimitKey: String? {
        get { storage?.rateLimitKey }
        set { update { $0.rateLimitKey = newValue } }
    }

    /// The fields, in one box shared by copies until one changes; nil while all are defaults.
    /// Inline they made options 184 bytes (a retry policy is 128), and a caller that lets
    /// `send`'s `options` default kept several temporaries of them in its async frame for as
    /// long as the request was in flight: 960 bytes for `try await service.send(request)`,
    /// most of a task-allocator slab per waiting query (Docs/Performance.md).
    private var storage: Storage?

    /// Which box the options use; copies share it until one changes (for tests).
    var storageIdentity: ObjectIdentifier? { storage.map(ObjectIdentifier.init) }

    // Changed only through `update`, when not shared: its fields skip the exclusivity check (Docs/Performance.md, "Decisions").
    private final class Storage: @unchecked Sendable { // changed only through `update`, when not shared
        @exclusivity(unchecked) var requestID: String?
        @exclusivity(unchecked) var retry: RetryPolicy?
        @exclusivity(unchecked) var authorize = false
        @exclusivity(unchecked) var name: String?
        @exclusivity(unchecked) var rateLimitKey: String?

        func copy() -> Storage {
            let copy = Storage()
            copy.requestID = requestID
            copy.retry = retry
            copy.authorize = authorize
            copy.name = name
            copy.rateLimitKey = rateLimitKey
            return copy
        }
    }

    private mutating func update(_ change: (Storage) -> Void) {
        if storage == nil {
            storage = Storage()
        } else if !isKnownUniquelyReferenced(&storage) {
            storage = storage?.copy()
        }
        change(storage!)
    }

    /// The defaults. Its own initializer, so that `RequestOptions()` (`send`'s default) builds
    /// no default arguments in the caller's frame.
    public init() {}

    public init(requestID: String? = nil, retry: RetryPolicy? = nil, authorize: Bool = false, name: String? = nil,
                rateLimitKey: String? = nil) {
        guard requestID != nil || retry != nil || authorize || name != nil || rateLimitKey != nil else { return }
        let storage = Storage()
        storage.requestID = requestID
        storage.retry = retry
        storage.authorize = authorize
        storage.name = name
        storage.rateLimitKey = rateLimitKey
        self.storage = storage
    }
}
