/// When and how long to wait before sending a failed query again, as a value.
///
/// By default Courier retries 408, 502, 503 and 504 and transient transport failures (resets,
/// timeouts, refused connects), which are GTMSessionFetcher's defaults. 429 and 500 are opt-in. The first
/// wait is random between 1 and 2 seconds and doubles each time, up to `maxDelay` per wait
/// and `maxTotalDelay` overall. `Retry-After` is honoured. Only requests whose body can be
/// sent again are retried.
///
/// ```swift
/// var retry = RetryPolicy.default
/// retry.retryableStatuses.formUnion([429, 500])
/// retry.shouldRetry = { context in context.status == 409 ? true : nil } // nil: default rule
/// configuration.retry = retry
/// ```
public struct RetryPolicy: Sendable {
    /// Retries after the first attempt; 0 disables retrying.
    public var maxRetries: Int
    /// The first wait is drawn from this range (in seconds).
    public var initialDelay: ClosedRange<Double>
    /// Each wait is the previous one times this.
    public var multiplier: Double
    /// No single wait is longer; a `Retry-After` above it ends the retries instead.
    public var maxDelay: Duration
    /// The waits of one query add up to at most this.
    public var maxTotalDelay: Duration
    public var retryableStatuses: Set<Int>
    /// Retry resets, timeouts and refused connects.
    public var retryTransportErrors: Bool
    /// Decides first: `true` or `false` overrule the rules above, `nil` defers to them.
    public var shouldRetry: (@Sendable (RetryContext) -> Bool?)?

    public init(maxRetries: Int = 5, initialDelay: ClosedRange<Double> = 1...2, multiplier: Double = 2,
                maxDelay: Duration = .seconds(60), maxTotalDelay: Duration = .seconds(600),
                retryableStatuses: Set<Int> = [408, 502, 503, 504], retryTransportErrors: Bool = true,
                shouldRetry: (@Sendable (RetryContext) -> Bool?)? = nil) {
        self.maxRetries = maxRetries
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maxDelay = maxDelay
        self.maxTotalDelay = maxTotalDelay
        self.retryableStatuses = retryableStatuses
        self.retryTransportErrors = retryTransportErrors
        self.shouldRetry = shouldRetry
    }

    public static let `default` = RetryPolicy()
    /// Never retry.
    public static let disabled = RetryPolicy(maxRetries: 0)
}

/// What a ``RetryPolicy/shouldRetry`` closure sees.
public struct RetryContext: Sendable {
    /// 1 for the first retry.
    public let attempt: Int
    /// The HTTP status, when a response came back.
    public let status: Int?
    /// The failure, when no response came back.
    public let error: (any Error & Sendable)?
    /// The query's method name.
    public let queryName: String
}
