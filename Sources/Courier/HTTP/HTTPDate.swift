import Foundation

/// HTTP-date (RFC 9110 §5.6.7) in the three formats a recipient must accept:
///
/// - IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT` (what servers send today);
/// - the obsolete RFC 850 form: `Sunday, 06-Nov-94 08:49:37 GMT`, whose two-digit year is the
///   most recent past year with those digits when it would be more than 50 years ahead;
/// - ANSI C's `asctime()`: `Sun Nov  6 08:49:37 1994`.
///
/// Read by the grammar: a day that does not exist, an hour past 23 or anything after the date is
/// nil. The day name is not checked against the date (the RFC calls it redundant).
enum HTTPDate {
    static func parse(_ text: String, now: Date = Date()) -> Date? {
        let bytes = Array(text.utf8)
        return imfFixdate(bytes) ?? rfc850(bytes, now: now) ?? asctime(bytes)
    }

    private static let dayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    private static let longDayNames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    private static func imfFixdate(_ bytes: [UInt8]) -> Date? {
        var scanner = Scanner(bytes: bytes)
        guard scanner.word(dayNames) != nil, scanner.literal(", "), let day = scanner.digits(2), scanner.literal(" "),
              let month = scanner.word(months), scanner.literal(" "), let year = scanner.digits(4), scanner.literal(" "),
              let time = scanner.timeOfDay(), scanner.literal(" GMT"), scanner.atEnd
        else { return nil }
        return date(year: year, month: month + 1, day: day, time: time)
    }

    private static func rfc850(_ bytes: [UInt8], now: Date) -> Date? {
        var scanner = Scanner(bytes: bytes)
        guard scanner.word(longDayNames) != nil, scanner.literal(", "), let day = scanner.digits(2), scanner.literal("-"),
              let month = scanner.word(months), scanner.literal("-"), let twoDigits = scanner.digits(2), scanner.literal(" "),
              let time = scanner.timeOfDay(), scanner.literal(" GMT"), scanner.atEnd
        else { return nil }
        let seconds = now.timeIntervalSince1970
        let thisYear = seconds.isFinite
            ? Int(clamping: CivilCalendar.civil(daysSince1970: Int64(max(-1e15, min(1e15, (seconds / 86400).rounded(.down))))).year)
            : 2000
        var year = thisYear - thisYear % 100 + twoDigits
        if year > thisYear + 50 { year -= 100 }
        return date(year: year, month: month + 1, day: day, time: time)
    }

    private static func asctime(_ bytes: [UInt8]) -> Date? {
        var scanner = Scanner(bytes: bytes)
        guard scanner.word(dayNames) != nil, scanner.literal(" "), let month = scanner.word(months), scanner.literal(" ") else {
            return nil
        }
        let day = scanner.literal(" ") ? scanner.digits(1) : scanner.digits(2)
        guard let day, scanner.literal(" "), let time = scanner.timeOfDay(), scanner.literal(" "),
              let year = scanner.digits(4), scanner.atEnd
        else { return nil }
        return date(year: year, month: month + 1, day: day, time: time)
    }

    private static func date(year: Int, month: Int, day: Int, time: Int) -> Date? {
        guard CivilCalendar.isValid(year: year, month: month, day: day) else { return nil }
        let days = CivilCalendar.daysSince1970(year: Int64(year), month: Int64(month), day: Int64(day))
        return Date(timeIntervalSince1970: Double(days * 86400 + Int64(time)))
    }

    /// A cursor over the text's bytes; each reader advances only past what it matched.
    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        var atEnd: Bool { index == bytes.count }

        mutating func literal(_ text: StaticString) -> Bool {
            text.withUTF8Buffer { expected in
                guard index + expected.count <= bytes.count, expected.elementsEqual(bytes[index..<index + expected.count]) else {
                    return false
                }
                index += expected.count
                return true
            }
        }

        /// Exactly `count` ASCII digits.
        mutating func digits(_ count: Int) -> Int? {
            guard index + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<index + count] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            index += count
            return value
        }

        /// The position in `words` of the one the text continues with (case-sensitive, as the grammar).
        mutating func word(_ words: [String]) -> Int? {
            for (position, word) in words.enumerated() {
                let utf8 = Array(word.utf8)
                if index + utf8.count <= bytes.count, bytes[index..<index + utf8.count].elementsEqual(utf8) {
                    index += utf8.count
                    return position
                }
            }
            return nil
        }

        /// `HH:MM:SS` as seconds into the day; a leap second (60) counts into the next minute.
        mutating func timeOfDay() -> Int? {
            guard let hour = digits(2), hour <= 23, literal(":"), let minute = digits(2), minute <= 59, literal(":"),
                  let second = digits(2), second <= 60
            else { return nil }
            return hour * 3600 + minute * 60 + second
        }
    }
}
