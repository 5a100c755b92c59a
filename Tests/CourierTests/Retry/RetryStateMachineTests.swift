@testable import Courier
import CourierTestServer
import CourierTesting
import Foundation
import CourierTestSupport
import Testing

/// The retry decisions as a pure state machine, without IO.
@Suite struct RetryStateMachineTests {
    func machine(_ policy: RetryPolicy = .default) -> Box<RetryStateMachine> {
        Box(RetryStateMachine(policy: policy, queryName: "q"))
    }

    let top: (ClosedRange<Double>) -> Double = { $0.upperBound }

    static func status(_ status: Int, retryAfter: Duration? = nil, reasons: [String] = []) -> RetryStateMachine.Outcome {
        .response(status: status, retryAfter: retryAfter, reasons: reasons)
    }

    /// The first decision of a fresh machine.
    func first(_ outcome: RetryStateMachine.Outcome, _ policy: RetryPolicy = .default, idempotent: Bool = true,
               replayable: Bool = true) -> RetryStateMachine.Decision {
        var machine = RetryStateMachine(policy: policy, queryName: "q")
        return machine.decide(outcome, idempotent: idempotent, replayable: replayable)
    }

    @Test func everyWaitIsFullyJitteredAndItsRangeDoubles() {
        for attempt in 0..<4 {
            var waits: [Duration] = []
            for _ in 0..<60 {
                var fresh = RetryStateMachine(policy: .default, queryName: "q")
                for _ in 0..<attempt { _ = fresh.decide(Self.status(503), idempotent: true) }
                if case .retry(let delay) = fresh.decide(Self.status(503), idempotent: true) { waits.append(delay) }
            }
            let cap = Duration.seconds(1 << attempt) // 1, 2, 4, 8 s
            #expect(waits.count == 60 && waits.allSatisfy { $0 >= .zero && $0 <= cap }, "attempt \(attempt): \(waits)")
            #expect(Set(waits).count > 10, "not random at attempt \(attempt)") // jitter on every wait, not only the first
        }
        let retry = machine()
        #expect(retry { $0.decide(Self.status(503), idempotent: true, random: top) } == .retry(after: .seconds(1)))
        #expect(retry { $0.decide(Self.status(502), idempotent: true, random: top) } == .retry(after: .seconds(2)))
        #expect(retry { $0.decide(Self.status(504), idempotent: true, random: top) } == .retry(after: .seconds(4)))
    }

    @Test func googlesTransientStatusesAndReasons() {
        for status in [408, 429, 500, 502, 503, 504] {
            #expect(first(Self.status(status)) != .giveUp, "\(status)")
        }
        for status in [400, 401, 403, 404, 409, 412] {
            #expect(first(Self.status(status)) == .giveUp, "\(status)")
        }
        #expect(first(Self.status(403, reasons: ["rateLimitExceeded"])) != .giveUp)
        #expect(first(Self.status(403, reasons: ["userRateLimitExceeded"])) != .giveUp)
        #expect(first(Self.status(403, reasons: ["forbidden"])) == .giveUp)
        var narrow = RetryPolicy.default
        narrow.retryableStatuses.remove(500)
        #expect(first(Self.status(500), narrow) == .giveUp)
    }

    @Test func googleErrorReasonsAreReadFromTheBody() {
        let body = Data(#"{"error":{"code":403,"errors":[{"reason":"userRateLimitExceeded"}],"status":"PERMISSION_DENIED"}}"#.utf8)
        #expect(GoogleErrorReasons.of(status: 403, body: body) == ["userRateLimitExceeded"])
        #expect(GoogleErrorReasons.of(status: 404, body: body) == []) // only a 403 can be made transient
        let exhausted = Data(#"{"error":{"code":403,"status":"RESOURCE_EXHAUSTED"}}"#.utf8)
        #expect(GoogleErrorReasons.of(status: 403, body: exhausted) == ["rateLimitExceeded"])
        #expect(GoogleErrorReasons.of(status: 403, body: Data("not json".utf8)) == [])
    }

    @Test func transientTransportFailuresAreRetried() {
        #expect(first(.transportFailure(.connectionLost)) != .giveUp)
        #expect(first(.transportFailure(.timedOut)) != .giveUp)
        #expect(first(.transportFailure(.connectionFailed)) != .giveUp)
        #expect(first(.transportFailure(.hostNotFound)) == .giveUp)
        #expect(first(.transportFailure(.tlsFailure)) == .giveUp)
        var off = RetryPolicy.default
        off.retryTransportErrors = false
        #expect(first(.transportFailure(.connectionLost), off) == .giveUp)
    }

    @Test func aNonIdempotentRequestIsResentOnlyWhenItCannotHaveArrived() {
        // An answer, or a reset after sending: the server may have acted on it.
        #expect(first(Self.status(503), idempotent: false) == .giveUp)
        #expect(first(.transportFailure(.connectionLost), idempotent: false) == .giveUp)
        #expect(first(.transportFailure(.timedOut), idempotent: false) == .giveUp)
        // A refused connect: no byte left, so any method may go again.
        #expect(TransportError.connectionFailed.requestMayHaveBeenSent == false)
        #expect(first(.transportFailure(.connectionFailed), idempotent: false) != .giveUp)
        var unsent = TransportError.timedOut
        unsent.requestMayHaveBeenSent = false // a connect timeout of a request never handed to a connection
        #expect(first(.transportFailure(unsent), idempotent: false) != .giveUp)
        // A custom rule cannot overrule idempotency.
        var eager = RetryPolicy.default
        eager.shouldRetry = { _ in true }
        #expect(first(Self.status(409), eager, idempotent: false) == .giveUp)
    }

    @Test func idempotencyByMethodPreconditionAndDeclaration() {
        let url = URL(string: "http://127.0.0.1/o")!
        for method in [HTTPMethod.get, .head, .put, .delete, .options] {
            #expect(HTTPRequest(method: method, url: url).isIdempotent, "\(method)")
        }
        #expect(!HTTPRequest(method: .post, url: url).isIdempotent)
        #expect(!HTTPRequest(method: .patch, url: url).isIdempotent)
        #expect(HTTPRequest(method: .post, url: URL(string: "http://127.0.0.1/o?name=a&ifGenerationMatch=0")!).isIdempotent)
        #expect(HTTPRequest(method: .patch, url: URL(string: "http://127.0.0.1/o?ifMetagenerationMatch=3")!).isIdempotent)
        #expect(!HTTPRequest(method: .post, url: URL(string: "http://127.0.0.1/o?notifGenerationMatch=0")!).isIdempotent)
        #expect(HTTPRequest(method: .patch, url: url, headers: ["If-Match": "\"e1\""]).isIdempotent)
        var declared = HTTPRequest(method: .post, url: url)
        declared.idempotency = .always
        #expect(declared.isIdempotent)
        var never = HTTPRequest(method: .get, url: url)
        never.idempotency = .never
        #expect(!never.isIdempotent)
    }

    @Test func retryAfterIsHonouredUpToTheCap() {
        let retry = machine()
        #expect(retry { $0.decide(Self.status(503, retryAfter: .seconds(7)), idempotent: true) } == .retry(after: .seconds(7)))
        #expect(retry { $0.decide(Self.status(429, retryAfter: .seconds(33)), idempotent: true) } == .giveUp) // cap: 32 s
    }

    @Test func capAttemptsTotalWaitAndDeadline() {
        var policy = RetryPolicy(maxRetries: 10, initialDelay: 1...1, maxDelay: .seconds(5), maxTotalDelay: .seconds(20),
                                 deadline: nil)
        let retry = machine(policy)
        var delays: [Duration] = []
        while true {
            guard case .retry(let delay) = retry.value.decide(Self.status(503), idempotent: true) else { break }
            delays.append(delay)
        }
        #expect(delays == [.seconds(1), .seconds(2), .seconds(4), .seconds(5), .seconds(5)]) // 17 s; a 6th would pass 20
        policy.maxRetries = 2
        let few = machine(policy)
        #expect(few { $0.decide(Self.status(503), idempotent: true) } != .giveUp)
        #expect(few { $0.decide(Self.status(503), idempotent: true) } != .giveUp)
        #expect(few { $0.decide(Self.status(503), idempotent: true) } == .giveUp)
        // The deadline counts the time already spent, attempts included.
        policy = RetryPolicy(initialDelay: 1...1, deadline: .seconds(10))
        let late = machine(policy)
        #expect(late { $0.decide(Self.status(503), idempotent: true, elapsed: .seconds(8)) } == .retry(after: .seconds(1)))
        #expect(late { $0.decide(Self.status(503), idempotent: true, elapsed: .seconds(9)) } == .giveUp) // 9 + 2 > 10
    }

    @Test func bodiesThatCannotBeReplayedAreNotRetried() {
        #expect(first(Self.status(503), replayable: false) == .giveUp)
    }

    @Test func customRuleDecidesFirst() {
        var policy = RetryPolicy.default
        policy.shouldRetry = { context in context.status == 409 ? true : (context.status == 503 ? false : nil) }
        #expect(first(Self.status(409), policy) != .giveUp)
        #expect(first(Self.status(503), policy) == .giveUp)
        #expect(first(Self.status(502), policy) != .giveUp) // nil: default rule
    }

    @Test func retryAfterParsesSecondsAndDates() {
        #expect(RetryAfter.parse("120") == .seconds(120))
        let now = Date(timeIntervalSince1970: 784_111_717) // Sun, 06 Nov 1994 08:48:37 GMT
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT", now: now) == .seconds(60))
        #expect(RetryAfter.parse("soon") == nil)
        #expect(RetryAfter.parse(nil) == nil)
    }
}
