@testable import Courier
import Testing

/// A context's first storage is its operation's ``AttemptTally`` too: every changed copy must
/// still record into that one tally, which the operation's `finished` event and span read.
@Suite struct RequestContextTests {
    @Test func changedCopiesShareTheFirstContextsTally() {
        let original = RequestContext(requestID: nil, name: "send", operation: .send, retry: .disabled, testHandler: nil,
                                      authorize: false)
        var copy = original
        copy.limited = false
        var copyOfCopy = copy
        copyOfCopy.isRaw = true
        #expect(original.limited && !copy.limited && !copy.isRaw && copyOfCopy.isRaw)
        #expect(copy.attempts === original.attempts && copyOfCopy.attempts === original.attempts)

        copyOfCopy.attempts.record(status: 503)
        copy.attempts.countRetry()
        #expect(original.attempts.lastStatus == 503 && original.attempts.retries == 1)
    }

    @Test func separateOperationsKeepSeparateTallies() {
        let first = RequestContext(requestID: nil, name: "send", operation: .send, retry: .disabled, testHandler: nil,
                                   authorize: false)
        let second = RequestContext(requestID: nil, name: "send", operation: .send, retry: .disabled, testHandler: nil,
                                    authorize: false)
        first.attempts.record(status: 200)
        #expect(second.attempts.lastStatus == nil && first.attempts !== second.attempts)
        #expect(first.requestID != second.requestID)
    }
}
