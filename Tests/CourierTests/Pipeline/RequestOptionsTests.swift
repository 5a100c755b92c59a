@testable import Courier
import Foundation
import Testing

/// ``RequestOptions`` keeps its fields in one box, none for the defaults, shared by copies until
/// one changes: copies must still behave as independent values.
@Suite struct RequestOptionsTests {
    @Test func theDefaultsHoldNoBoxAndReadAsDefaults() {
        for options in [RequestOptions(), RequestOptions(requestID: nil, retry: nil, authorize: false)] {
            #expect(options.storageIdentity == nil)
            #expect(options.requestID == nil && options.retry == nil && !options.authorize)
            #expect(options.name == nil && options.rateLimitKey == nil)
        }
    }

    @Test func everyFieldReadsBackAsSet() {
        let policy = RetryPolicy(maxRetries: 7, initialDelay: 1...2)
        let built = RequestOptions(requestID: "r-1", retry: policy, authorize: true, name: "notes.get", rateLimitKey: "k")
        var assigned = RequestOptions()
        assigned.requestID = "r-1"
        assigned.retry = policy
        assigned.authorize = true
        assigned.name = "notes.get"
        assigned.rateLimitKey = "k"
        for options in [built, assigned] {
            #expect(options.storageIdentity != nil)
            #expect(options.requestID == "r-1" && options.retry?.maxRetries == 7 && options.retry?.initialDelay == 1...2)
            #expect(options.authorize && options.name == "notes.get" && options.rateLimitKey == "k")
        }
        assigned.retry = nil
        #expect(assigned.retry == nil && assigned.requestID == "r-1")
    }

    @Test func aChangedCopyLeavesTheOriginalAlone() {
        let original = RequestOptions(requestID: "a", authorize: true)
        var copy = original
        #expect(copy.storageIdentity == original.storageIdentity)
        copy.requestID = "b"
        copy.authorize = false
        copy.retry = .default
        #expect(copy.storageIdentity != original.storageIdentity)
        #expect(original.requestID == "a" && original.authorize && original.retry == nil)
        #expect(copy.requestID == "b" && !copy.authorize && copy.retry != nil)

        var fromDefaults = RequestOptions()
        let untouched = fromDefaults
        fromDefaults.name = "x"
        #expect(fromDefaults.name == "x" && untouched.name == nil && untouched.storageIdentity == nil)
    }

    @Test func optionsThatAreNotSharedChangeInPlace() {
        var options = RequestOptions(name: "one")
        let box = options.storageIdentity
        options.name = "two"
        options.rateLimitKey = "k"
        #expect(options.storageIdentity == box && options.name == "two" && options.rateLimitKey == "k")
    }
}
