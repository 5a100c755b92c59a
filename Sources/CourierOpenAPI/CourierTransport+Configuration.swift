import Courier

extension CourierTransport {
    /// How the transport's operations use the pipeline.
    public struct Configuration: Sendable {
        /// The retry policy of every operation; `.default` is Google's rules: transient
        /// failures and 408, 429, 5xx retried with backoff, but a request that may have reached
        /// the server only when it is idempotent (by method, by a precondition, or listed in
        /// ``idempotentOperations``). `.disabled` turns retries off.
        public var retry: RetryPolicy
        /// Add the service's authorizer's credentials, refreshed once after a 401. On by
        /// default: a transport is made for one API's server, so its credentials are meant for it.
        public var authorize: Bool
        /// Operations (by `operationID`) that may be re-sent even after they may have reached
        /// the server, such as a POST keyed by a client-chosen ID.
        public var idempotentOperations: Set<String>
        /// A request body of known length up to this many bytes is read into memory before it is
        /// sent, so a retry or a redirect can send it again; a longer one, or one of unknown
        /// length, streams and is never re-sent once it may have reached the server.
        public var replayableBodyLimit: Int

        public init(retry: RetryPolicy = .default, authorize: Bool = true, idempotentOperations: Set<String> = [],
                    replayableBodyLimit: Int = 1 << 20) {
            self.retry = retry
            self.authorize = authorize
            self.idempotentOperations = idempotentOperations
            self.replayableBodyLimit = replayableBodyLimit
        }
    }
}
