extension ServiceActor.Configuration {
    /// Every numeric setting in range: checked when a service starts (see ``ConfigurationError``).
    func validate() throws(ConfigurationError) {
        try transport.timeouts.validate("transport.timeouts")
        try Self.atLeast(0, transport.maxRedirects, "transport.maxRedirects")
        try Self.atLeast(0, transport.maxResponseBodySize, "transport.maxResponseBodySize")
        try retry.validate("retry")
        let connections = limits.connections
        try Self.atLeast(1, connections.maxConnectionsPerHost, "limits.connections.maxConnectionsPerHost")
        try Self.atLeast(0, connections.maxConnectionsTotal, "limits.connections.maxConnectionsTotal") // 0: no limit
        try Self.atLeast(1, connections.maxConcurrentTransfersPerHost, "limits.connections.maxConcurrentTransfersPerHost")
        try Self.atLeast(1, connections.maxConcurrentTransfers, "limits.connections.maxConcurrentTransfers")
        try Self.atLeast(1, connections.maxConcurrentStreamsPerConnection, "limits.connections.maxConcurrentStreamsPerConnection")
        if let queries = limits.maxConcurrentQueries { try Self.atLeast(1, queries, "limits.maxConcurrentQueries") }
        try Self.atLeast(1, limits.batchConcurrency, "limits.batchConcurrency")
        try Self.atLeast(1, limits.maxBatchSize, "limits.maxBatchSize")
        if let rateLimits = limits.rateLimits {
            try rateLimits.limit.validate("limits.rateLimits.limit")
            for (key, limit) in rateLimits.overrides { try limit.validate("limits.rateLimits.overrides[\"\(key)\"]") }
        }
        if let breaker = limits.circuitBreaker {
            try Self.atLeast(1, breaker.failureThreshold, "limits.circuitBreaker.failureThreshold")
            try Self.atLeast(1, breaker.halfOpenProbes, "limits.circuitBreaker.halfOpenProbes")
            try Self.positive(breaker.openDuration, "limits.circuitBreaker.openDuration")
            try Self.positive(breaker.maximumOpenDuration, "limits.circuitBreaker.maximumOpenDuration")
        }
    }

    static func atLeast(_ minimum: Int, _ value: Int, _ setting: String) throws(ConfigurationError) {
        guard value >= minimum else { throw ConfigurationError(setting, "is \(value); it must be at least \(minimum)") }
    }

    static func positive(_ value: Duration, _ setting: String) throws(ConfigurationError) {
        guard value > .zero else { throw ConfigurationError(setting, "is \(value); it must be more than zero") }
    }

    static func finite(_ value: Double, atLeast minimum: Double, _ setting: String) throws(ConfigurationError) {
        guard value.isFinite, value >= minimum else {
            throw ConfigurationError(setting, "is \(value); it must be a finite number of at least \(minimum)")
        }
    }
}

extension Timeouts {
    func validate(_ path: String) throws(ConfigurationError) {
        if let connect { try ServiceActor.Configuration.positive(connect, "\(path).connect") }
        if let total { try ServiceActor.Configuration.positive(total, "\(path).total") }
        if let idle { try ServiceActor.Configuration.positive(idle, "\(path).idle") }
    }
}

extension RetryPolicy {
    func validate(_ path: String) throws(ConfigurationError) {
        typealias Check = ServiceActor.Configuration
        try Check.atLeast(0, maxRetries, "\(path).maxRetries")
        try Check.finite(initialDelay.lowerBound, atLeast: 0, "\(path).initialDelay.lowerBound")
        try Check.finite(initialDelay.upperBound, atLeast: 0, "\(path).initialDelay.upperBound")
        try Check.finite(multiplier, atLeast: 0, "\(path).multiplier")
        guard maxDelay >= .zero else { throw ConfigurationError("\(path).maxDelay", "is \(maxDelay); it must not be negative") }
        guard maxTotalDelay >= .zero else {
            throw ConfigurationError("\(path).maxTotalDelay", "is \(maxTotalDelay); it must not be negative")
        }
        if let deadline { try Check.positive(deadline, "\(path).deadline") }
    }
}

extension RateLimit {
    func validate(_ path: String) throws(ConfigurationError) {
        typealias Check = ServiceActor.Configuration
        guard requestsPerSecond.isFinite, requestsPerSecond > 0 else {
            throw ConfigurationError("\(path).requestsPerSecond", "is \(requestsPerSecond); it must be a finite number above zero")
        }
        guard minimumRequestsPerSecond.isFinite, minimumRequestsPerSecond > 0 else {
            throw ConfigurationError("\(path).minimumRequestsPerSecond",
                                     "is \(minimumRequestsPerSecond); it must be a finite number above zero")
        }
        try Check.positive(window, "\(path).window")
        if let burst { try Check.atLeast(1, burst, "\(path).burst") }
    }
}
