@testable import Courier
import Foundation
import Testing

/// HTTP-date as RFC 9110 §5.6.7 defines it: the RFC's own three examples of one instant, its
/// two-digit-year rule, and what its grammar refuses. Before, `Retry-After` read the first form
/// only, through a lenient calendar (`31 Feb` was March 3), and ignored the other two.
@Suite struct HTTPDateTests {
    /// The instant of the RFC's examples.
    static let example = Date(timeIntervalSince1970: 784_111_777)
    static let now2026 = Date(timeIntervalSince1970: 1_795_000_000) // 2026-11-18

    @Test(arguments: ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"])
    func theRFCsThreeFormsOfOneInstant(text: String) {
        #expect(HTTPDate.parse(text, now: Self.now2026) == Self.example)
    }

    /// "more than 50 years in the future": the most recent past year with those digits.
    @Test(arguments: [("70", 2070), ("76", 2076), ("77", 1977), ("94", 1994), ("00", 2000), ("26", 2026)])
    func aTwoDigitYearIsNeverMoreThanFiftyYearsAhead(digits: String, year: Int) throws {
        let date = try #require(HTTPDate.parse("Thursday, 01-Jan-\(digits) 00:00:00 GMT", now: Self.now2026))
        let expected = try #require(CalendarDate(year: year, month: 1, day: 1))
        #expect(date.timeIntervalSince1970 == Double(expected.daysSince1970 * 86400))
    }

    @Test func theFieldsTheGrammarAllows() {
        #expect(HTTPDate.parse("Tue, 29 Feb 2028 23:59:59 GMT") == Date(timeIntervalSince1970: 1_835_481_599))
        #expect(HTTPDate.parse("Thu, 01 Jan 1970 00:00:00 GMT") == Date(timeIntervalSince1970: 0))
        #expect(HTTPDate.parse("Wed Dec 31 23:59:60 2025") == Date(timeIntervalSince1970: 1_767_225_600), "a leap second")
        #expect(HTTPDate.parse("Sat Jan 10 00:00:00 2026") != nil, "a two-digit day in asctime")
    }

    @Test(arguments: [
        "Sun, 31 Feb 2025 08:49:37 GMT", "Sun, 29 Feb 2025 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nov 1994 08:60:00 GMT", "Sun, 06 Nov 1994 08:49:61 GMT", "Sun, 06 Nov 1994 08:49:37 gmt",
        "Sun, 06 Nov 1994 08:49:37 UTC", "sun, 06 nov 1994 08:49:37 GMT", "Sun, 6 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 94 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT ", "Sun, 06 Nov 1994 08:49:37",
        "Sun Nov 6 08:49:37 1994", "Sun Nov  6 08:49:37 94", "Sunday, 06-Nov-1994 08:49:37 GMT",
        "Sun, 06-Nov-94 08:49:37 GMT", "Sun, 06 Nov 0000 08:49:37 GMT", "", "Sun, ", "Sun, 06 Nov 1994 08:49:3",
        "Sun, 06 Nov 1994 08:49:37 GMT\u{0}", "Sun, 06 Nov 1994 ０8:49:37 GMT",
    ])
    func whatTheGrammarRefuses(text: String) {
        #expect(HTTPDate.parse(text, now: Self.now2026) == nil, "\(text)")
    }

    @Test func retryAfterReadsEveryFormAndSaturates() {
        let before = Self.example.addingTimeInterval(-60)
        for text in ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"] {
            #expect(RetryAfter.parse(text, now: before) == .seconds(60), "\(text)")
        }
        #expect(RetryAfter.parse("99999999999999999999999") == .seconds(Int64.max), "too long for a Duration: the longest wait")
        #expect(RetryAfter.parse("+5") == nil, "delay-seconds is digits only")
        #expect(RetryAfter.parse("-5") == nil)
        #expect(RetryAfter.parse("1.5") == nil)
        #expect(RetryAfter.parse(" 7 ") == .seconds(7))
    }
}
