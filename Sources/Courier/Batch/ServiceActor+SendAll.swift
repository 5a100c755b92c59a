import Foundation

extension ServiceActor {
    /// Sends `requests` with at most `maxInFlight` in flight and returns their results as they
    /// complete: the window a hand-written task group keeps, without a task per request.
    ///
    /// ```swift
    /// for await (index, result) in service.sendAll(requests, maxInFlight: 64) {
    ///     let response = try result.get()
    ///     print(index, response.status)
    /// }
    /// ```
    ///
    /// `maxInFlight` workers each send their next request when their last completes, on the loop
    /// thread: a completed transfer's worker starts the next transfer in the same turn, and the
    /// results that completed while the consumer was busy reach it together. Each request takes
    /// the one pipeline with its own ``RequestOptions`` (its request ID cancels it alone).
    ///
    /// Every request gets exactly one result, in the order they complete; `index` is its position
    /// in `requests`. A non-2xx status is a response, as with ``send(_:options:)``. With
    /// `failFast`, the first error cancels the requests in flight and those not yet started
    /// (each then fails with `CancellationError`). Cancelling the iterating task, ending the
    /// iteration early, or ``cancel(requestID:)`` with `requestID` does the same.
    @inlinable
    public nonisolated func sendAll(_ requests: some Sequence<HTTPRequest>, options: RequestOptions = RequestOptions(),
                                    maxInFlight: Int? = nil, failFast: Bool = false, requestID: String? = nil) -> SendAllResults {
        // Inlinable so that `Array(requests)` is specialised for the caller's sequence: unspecialised,
        // copying a `repeatElement` or a lazy map cost about 2,300 instructions a request.
        sendAll(collected: Array(requests), options: options, maxInFlight: maxInFlight, failFast: failFast, requestID: requestID)
    }

    /// ``sendAll(_:options:maxInFlight:failFast:requestID:)`` once the caller's sequence is an array.
    @usableFromInline
    nonisolated func sendAll(collected requests: [HTTPRequest], options: RequestOptions, maxInFlight: Int?, failFast: Bool,
                             requestID: String?) -> SendAllResults {
        SendAllResults(service: self, requests: .shared(requests, options), width: width(maxInFlight),
                       failFast: failFast, requestID: requestID)
    }

    /// ``sendAll(_:options:maxInFlight:failFast:requestID:)`` with options of each request's own.
    public nonisolated func sendAll(_ requests: [(request: HTTPRequest, options: RequestOptions)], maxInFlight: Int? = nil,
                                    failFast: Bool = false, requestID: String? = nil) -> SendAllResults {
        SendAllResults(service: self, requests: .each(requests), width: width(maxInFlight), failFast: failFast, requestID: requestID)
    }

    private nonisolated func width(_ maxInFlight: Int?) -> Int {
        max(1, maxInFlight ?? configuration.limits.batchConcurrency)
    }
}

/// The results of ``ServiceActor/sendAll(_:options:maxInFlight:failFast:requestID:)`` as they
/// complete: one `(index, result)` per request. Each iteration sends the requests anew.
public struct SendAllResults: AsyncSequence, Sendable {
    public typealias Element = (index: Int, result: Result<HTTPResponse, any Error>)
    public typealias Failure = Never

    let service: ServiceActor
    let requests: Requests
    let width: Int
    let failFast: Bool
    let requestID: String?

    public func makeAsyncIterator() -> Iterator {
        let window = ResultWindow<HTTPResponse>(count: requests.count, width: width, failFast: failFast, loop: service.loop,
                                                registeredAs: requestID, in: service.requests,
                                                job: SendJob(service: service, requests: requests))
        return Iterator(window: window)
    }

    /// The requests and their options. One set of options for all is kept once, not once per
    /// request: with 100,000 requests in flight every byte per request shows.
    enum Requests: Sendable {
        case shared([HTTPRequest], RequestOptions)
        case each([(request: HTTPRequest, options: RequestOptions)])

        var count: Int {
            switch self {
            case .shared(let requests, _): requests.count
            case .each(let requests): requests.count
            }
        }

        subscript(index: Int) -> (request: HTTPRequest, options: RequestOptions) {
            switch self {
            case .shared(let requests, let options): (requests[index], options)
            case .each(let requests): requests[index]
            }
        }
    }

    /// One request of the run, sent through the one pipeline.
    struct SendJob: WindowJob {
        let service: ServiceActor
        let requests: Requests

        func run(_ index: Int) async -> Result<HTTPResponse, any Error> {
            let (request, options) = requests[index]
            do { return .success(try await service.send(request, options: options)) } catch {
                return .failure(error)
            }
        }
    }

    public struct Iterator: AsyncIteratorProtocol {
        let window: ResultWindow<HTTPResponse>
        /// Results taken from the inbox in one hand-off and not yet returned, last first: each is
        /// moved out with `removeLast()`, never copied, so the array is empty (nothing for the
        /// runtime's generic `swift_arrayDestroy` to walk) when its storage goes back to the inbox.
        private var taken: [Element] = []

        init(window: ResultWindow<HTTPResponse>) { self.window = window }

        public mutating func next() async -> Element? {
            await next(isolation: nil)
        }

        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async -> Element? {
            if taken.isEmpty {
                let window = window, spent = taken
                taken = []
                taken = await window.take(spent)
                guard !taken.isEmpty else { return nil }
                taken.reverseByMoving()
            }
            return taken.removeLast()
        }
    }
}
