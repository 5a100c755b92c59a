@testable import Courier
import Testing

/// ``RetryPolicy`` keeps its fields in one copy-on-write box: copies share it until one changes,
/// and must still behave as independent values.
@Suite struct RetryPolicyTests {
    @Test func everyFieldReadsBackAsSet() {
        let decide: @Sendable (RetryContext) -> Bool? = { $0.status == 409 ? true : nil }
        let built = RetryPolicy(maxRetries: 3, initialDelay: 0.5...2, multiplier: 3, maxDelay: .seconds(9),
                                maxTotalDelay: .seconds(40), deadline: nil, retryableStatuses: [409],
                                retryableReasons: ["backendError"], retryTransportErrors: false, shouldRetry: decide)
        var assigned = RetryPolicy.default
        assigned.maxRetries = 3
        assigned.initialDelay = 0.5...2
        assigned.multiplier = 3
        assigned.maxDelay = .seconds(9)
        assigned.maxTotalDelay = .seconds(40)
        assigned.deadline = nil
        assigned.retryableStatuses = [409]
        assigned.retryableReasons = ["backendError"]
        assigned.retryTransportErrors = false
        assigned.shouldRetry = decide
        for policy in [built, assigned] {
            #expect(policy.maxRetries == 3 && policy.initialDelay == 0.5...2 && policy.multiplier == 3)
            #expect(policy.maxDelay == .seconds(9) && policy.maxTotalDelay == .seconds(40) && policy.deadline == nil)
            #expect(policy.retryableStatuses == [409] && policy.retryableReasons == ["backendError"])
            #expect(!policy.retryTransportErrors)
            #expect(policy.shouldRetry?(RetryContext(attempt: 1, status: 409, error: nil, queryName: "q")) == true)
        }
    }

    @Test func aChangedCopyLeavesTheOriginalAndTheSharedDefaultsAlone() {
        var copy = RetryPolicy.default
        #expect(copy.storageIdentity == RetryPolicy.default.storageIdentity)
        copy.maxRetries = 1
        copy.retryableStatuses.insert(409)
        #expect(copy.storageIdentity != RetryPolicy.default.storageIdentity)
        #expect(copy.maxRetries == 1 && copy.retryableStatuses.contains(409))
        #expect(RetryPolicy.default.maxRetries == 5 && !RetryPolicy.default.retryableStatuses.contains(409))
        #expect(RetryPolicy.disabled.maxRetries == 0)
    }

    @Test func aPolicyThatIsNotSharedChangesInPlace() {
        var policy = RetryPolicy(maxRetries: 2)
        let box = policy.storageIdentity
        policy.maxRetries = 4
        policy.deadline = .seconds(1)
        #expect(policy.storageIdentity == box)
        #expect(policy.maxRetries == 4 && policy.deadline == .seconds(1))
    }
}
