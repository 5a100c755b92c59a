/// When and how long to wait before sending a failed request again, as a value.
///
/// The defaults follow Google's retry strategy for its APIs (Cloud Storage's, google-cloud-go's):
///
/// - transient: 408, 429, 500, 502, 503, 504; a 403 whose Google error reason is
///   `rateLimitExceeded` or `userRateLimitExceeded`; resets and timeouts; refused connects;
/// - only idempotent requests are re-sent once they may have reached the server (``Idempotency``);
/// - every wait is drawn at random ("full jitter") between `initialDelay.lowerBound × multiplierⁿ` and
///   `initialDelay.upperBound × multiplierⁿ`, at most `maxDelay`; `Retry-After` wins when present;
/// - at most `maxRetries` retries, no more than `maxTotalDelay` of waiting, and none that would
///   end past `deadline` counted from the first attempt.
///
/// ```swift
/// var retry = RetryPolicy.default
/// retry.retryableStatuses.remove(500)
/// retry.shouldRetry = { context in context.status == 409 ? true : nil } // nil: default rule
/// configuration.retry = retry
/// ```
///
/// Docs/Pipeline.md has the whole table.
public struct RetryPolicy: Sendable {
    /// The fields, in one copy-on-write box. Inline they were 128 bytes, and a policy sits in
    /// every request's context and options: a copy is a retain, and a request waiting in flight
    /// holds 8 bytes of it (Docs/Performance.md, "Decisions").
    private struct Fields {
        var maxRetries: Int
        var initialDelay: ClosedRange<Double>
        var multiplier: Double
        var maxDelay: Duration
        var maxTotalDelay: Duration
        var deadline: Duration?
        var retryableStatuses: Set<Int>
        var retryableReasons: Set<String>
        var retryTransportErrors: Bool
        var shouldRetry: (@Sendable (RetryContext) -> Bool?)?
    }

    /// Changed only through `update`, when not shared, so sharing it between tasks is safe, and
    /// its field skips the runtime's exclusivity check (as every copy-on-write box here does; Docs/Performance.md, "Decisions").
    private final class Storage: @unchecked Sendable {
        @exclusivity(unchecked) var fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    private var storage: Storage

    private mutating func update(_ change: (inout Fields) -> Void) {
        if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.fields) }
        change(&storage.fields)
    }

    /// Retries after the first attempt; 0 disables retrying.
    public var maxRetries: Int {
        get { storage.fields.maxRetries }
        set { update { $0.maxRetries = newValue } }
    }
    /// The first wait is drawn from this range (in seconds); later ones from the range times `multiplier`ⁿ.
    public var initialDelay: ClosedRange<Double> {
        get { storage.fields.initialDelay }
        set { update { $0.initialDelay = newValue } }
    }
    /// How much each wait's range grows.
    public var multiplier: Double {
        get { storage.fields.multiplier }
        set { update { $0.multiplier = newValue } }
    }
    /// No single wait is longer; a `Retry-After` above it ends the retries instead.
    public var maxDelay: Duration {
        get { storage.fields.maxDelay }
        set { update { $0.maxDelay = newValue } }
    }
    /// The waits of one request add up to at most this.
    public var maxTotalDelay: Duration {
        get { storage.fields.maxTotalDelay }
        set { update { $0.maxTotalDelay = newValue } }
    }
    /// No retry starts when its wait would end later than this after the first attempt began;
    /// nil: no deadline besides the others.
    public var deadline: Duration? {
        get { storage.fields.deadline }
        set { update { $0.deadline = newValue } }
    }
    /// The HTTP statuses that are transient.
    public var retryableStatuses: Set<Int> {
        get { storage.fields.retryableStatuses }
        set { update { $0.retryableStatuses = newValue } }
    }
    /// Google error reasons (`error.errors[].reason`) that make a 403 transient.
    public var retryableReasons: Set<String> {
        get { storage.fields.retryableReasons }
        set { update { $0.retryableReasons = newValue } }
    }
    /// Retry resets, timeouts and refused connects.
    public var retryTransportErrors: Bool {
        get { storage.fields.retryTransportErrors }
        set { update { $0.retryTransportErrors = newValue } }
    }
    /// Decides first: `true` or `false` overrule the rules above, `nil` defers to them. It never
    /// overrules idempotency: a request that may have reached the server and is not idempotent
    /// is not re-sent.
    public var shouldRetry: (@Sendable (RetryContext) -> Bool?)? {
        get { storage.fields.shouldRetry }
        set { update { $0.shouldRetry = newValue } }
    }

    public init(maxRetries: Int = 5, initialDelay: ClosedRange<Double> = 0...1, multiplier: Double = 2,
                maxDelay: Duration = .seconds(32), maxTotalDelay: Duration = .seconds(600), deadline: Duration? = .seconds(120),
                retryableStatuses: Set<Int> = [408, 429, 500, 502, 503, 504],
                retryableReasons: Set<String> = ["rateLimitExceeded", "userRateLimitExceeded"],
                retryTransportErrors: Bool = true, shouldRetry: (@Sendable (RetryContext) -> Bool?)? = nil) {
        storage = Storage(Fields(maxRetries: maxRetries, initialDelay: initialDelay, multiplier: multiplier, maxDelay: maxDelay,
                                 maxTotalDelay: maxTotalDelay, deadline: deadline, retryableStatuses: retryableStatuses,
                                 retryableReasons: retryableReasons, retryTransportErrors: retryTransportErrors,
                                 shouldRetry: shouldRetry))
    }

    /// Google's strategy, as above. Queries, uploads, downloads, batches and token requests use it
    /// unless configured otherwise.
    public static let `default` = RetryPolicy()
    /// Never retry: the default of raw ``ServiceActor/send(_:options:)``, whose non-2xx answers
    /// are responses for the caller to judge (a load generator or a proxy must not multiply requests).
    public static let disabled = RetryPolicy(maxRetries: 0)

    /// Whether two policies share one box: a test hook for the copy-on-write.
    var storageIdentity: ObjectIdentifier { ObjectIdentifier(storage) }
}

/// What a ``RetryPolicy/shouldRetry`` closure sees.
public struct RetryContext: Sendable {
    /// 1 for the first retry.
    public let attempt: Int
    /// The HTTP status, when a response came back.
    public let status: Int?
    /// The failure, when no response came back.
    public let error: (any Error & Sendable)?
    /// The query's method name (or the operation's name: `send`, `download`, `batch`, …).
    public let queryName: String
    /// Google error reasons of the response (`rateLimitExceeded`, …), if it had any.
    public let reasons: [String]

    init(attempt: Int, status: Int?, error: (any Error & Sendable)?, queryName: String, reasons: [String] = []) {
        self.attempt = attempt
        self.status = status
        self.error = error
        self.queryName = queryName
        self.reasons = reasons
    }
}
