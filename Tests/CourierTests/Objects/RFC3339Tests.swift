@testable import Courier
import Foundation
import Testing

@Suite struct RFC3339Tests {
    /// RFC 3339 section 5.8's examples, with the instants they name (seconds since 1970).
    @Test(arguments: [
        ("1985-04-12T23:20:50.52Z", 482_196_050.52),
        ("1996-12-19T16:39:57-08:00", 851_042_397),
        ("1990-12-31T23:59:60Z", 662_688_000), // a leap second: the instant after 23:59:59
        ("1990-12-31T15:59:60-08:00", 662_688_000),
        ("1937-01-01T12:00:27.87+00:20", -1_041_337_172.13),
    ])
    func theRFCsExamples(text: String, seconds: Double) throws {
        let date = try #require(RFC3339.parse(text))
        #expect(abs(date.timeIntervalSince1970 - seconds) < 1e-6)
    }

    @Test(arguments: [
        "2025-02-30T12:00:00Z", "2023-02-29T12:00:00Z", "2025-13-01T00:00:00Z", "2025-00-10T00:00:00Z",
        "2025-01-31T24:00:00Z", "2025-01-31T12:60:00Z", "2025-01-31T12:00:61Z", "2025-01-31T12:00:00",
        "2025-01-31 12:00:00Z", "25-01-31T12:00:00Z", "2025-01-31T12:00:00.Z", "2025-01-31T12:00:00Zjunk",
        "2025-01-31T12:00:00+24:00", "2025-01-31T12:00:00+0100", "2025-1-31T12:00:00Z", "", "２０２５-01-31T12:00:00Z",
    ])
    func aTimestampTheGrammarDoesNotAllowIsNil(text: String) {
        #expect(RFC3339.parse(text) == nil, "\(text) is not RFC 3339")
    }

    @Test func lowerCaseSeparatorsLeapDaysAndLongFractionsAreRead() throws {
        #expect(RFC3339.parse("2025-01-31t12:00:00z") == RFC3339.parse("2025-01-31T12:00:00Z"))
        #expect(RFC3339.parse("2024-02-29T00:00:00Z") != nil && RFC3339.parse("2000-02-29T00:00:00Z") != nil)
        #expect(RFC3339.parse("1900-02-29T00:00:00Z") == nil)
        let nanos = try #require(RFC3339.parse("2025-01-31T12:00:00.123456789Z"))
        #expect(RFC3339.format(nanos) == "2025-01-31T12:00:00.123457Z") // a Date holds about 0.2 µs
    }

    @Test func everyMillisecondAndMicrosecondTimestampWritesBackAsItWasRead() throws {
        // Date.ISO8601FormatStyle cut the fraction: 496 of these 1,000 came back a millisecond early.
        for millisecond in 0..<1000 {
            let text = "2024-05-01T10:11:12." + String(format: "%03d", millisecond) + "Z"
            #expect(RFC3339.format(try #require(RFC3339.parse(text))) == text)
        }
        for text in ["2024-05-01T10:11:12.000001Z", "2024-05-01T10:11:12.999999Z", "1969-12-31T23:59:59.500001Z",
                     "0001-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z", "2000-02-29T23:59:59.999Z",
                     "2241-12-31T23:59:59.999999Z"] {
            #expect(RFC3339.format(try #require(RFC3339.parse(text))) == text, "\(text)")
        }
    }

    @Test func writtenInUTCToTheMicrosecond() {
        #expect(RFC3339.format(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(RFC3339.format(Date(timeIntervalSince1970: -0.25)) == "1969-12-31T23:59:59.750Z")
        #expect(RFC3339.format(Date(timeIntervalSince1970: 1.000_000_4)) == "1970-01-01T00:00:01.000Z")
        #expect(RFC3339.format(Date(timeIntervalSince1970: 1.000_000_6)) == "1970-01-01T00:00:01.000001Z")
        let now = Date()
        // Half a microsecond of rounding, plus the Date's own resolution (2 ulps: once written, once read).
        #expect(abs(RFC3339.parse(RFC3339.format(now))!.timeIntervalSince(now)) <= 0.000_000_5 + 2 * now.timeIntervalSince1970.ulp)
    }

    @Test func datesNoTimestampCanHoldAreWrittenAtTheEdgeNeverTrap() {
        #expect(RFC3339.format(.distantFuture) == "4001-01-01T00:00:00.000Z")
        #expect(RFC3339.format(Date(timeIntervalSince1970: 1e300)) == "9999-12-31T23:59:59.999999Z")
        #expect(RFC3339.format(Date(timeIntervalSince1970: -.infinity)) == "0001-01-01T00:00:00.000Z")
        #expect(RFC3339.format(Date(timeIntervalSince1970: .nan)) == "1970-01-01T00:00:00.000Z")
    }

    @Test func theCalendarArithmeticAgreesWithFoundationsForEightHundredYears() {
        // From 1600 on: before 1582 Foundation's Gregorian calendar is Julian; RFC 3339's is proleptic.
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        for days in stride(from: Int64(-135_140), through: 157_000, by: 37) {
            let civil = CivilCalendar.civil(daysSince1970: days)
            let components = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: Double(days) * 86_400))
            #expect([civil.year, civil.month, civil.day] == [components.year, components.month, components.day].map { Int64($0!) })
            #expect(CalendarDate(year: Int(civil.year), month: Int(civil.month), day: Int(civil.day))?.daysSince1970 == days)
        }
    }
}
