import Foundation

/// RFC 3339 timestamps (`2025-01-31T12:00:00.123Z`), the timestamp format of Google's APIs.
///
/// Read strictly by the RFC's grammar (section 5.6): a date that does not exist (`2025-02-30`),
/// hour 24 or a missing offset is `nil`, not a nearby instant; `t` and `z` may be lower case; a
/// leap second (`23:59:60`) is the instant after `23:59:59`; the fraction may have any number
/// of digits (a `Date` holds about a fifth of a microsecond).
///
/// Written in UTC with milliseconds, or microseconds when milliseconds would not read back as the
/// same `Date`: so a timestamp read with millisecond digits writes back as the same text, and
/// one with microsecond digits too until the year 2242 (a `Date` is a `Double` of seconds,
/// coarser the further it is from 1970). `Date.ISO8601FormatStyle` cut the fraction instead, and
/// half of all millisecond timestamps came back a millisecond early.
public enum RFC3339 {
    public static func parse(_ text: String) -> Date? {
        var scanner = Scanner(bytes: Array(text.utf8))
        return scanner.timestamp()
    }

    /// UTC: `2025-01-31T12:00:00.123Z` when those milliseconds read back as this very `Date`,
    /// otherwise to the microsecond, rounded (`…00.123457Z`). A date outside years 1 to 9999 is
    /// written as the nearest one inside; one that is not a number (`.nan` seconds) as the epoch.
    public static func format(_ date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        let millis = clamp((seconds * 1000).rounded(), to: firstMicrosecond / 1000...lastMicrosecond / 1000)
        let (wholeMillis, milli) = floorDivision(millis, 1000)
        if instant(seconds: wholeMillis, fraction: milli, digits: 3) == seconds {
            return text(seconds: wholeMillis) + pad(milli, 3) + "Z"
        }
        let micros = clamp((seconds * 1_000_000).rounded(), to: firstMicrosecond...lastMicrosecond)
        let (whole, micro) = floorDivision(micros, 1_000_000)
        return text(seconds: whole) + (micro % 1000 == 0 ? pad(micro / 1000, 3) : pad(micro, 6)) + "Z"
    }

    /// The instant a timestamp names: whole seconds and a fraction of `digits` decimal digits,
    /// computed the same way when reading and when choosing how to write.
    static func instant(seconds: Int64, fraction: Int64, digits: Int) -> Double {
        Double(seconds) + Double(fraction) / powersOfTen[digits]
    }

    private static let powersOfTen: [Double] = (0...15).map { pow(10, Double($0)) }

    private static func clamp(_ value: Double, to range: ClosedRange<Int64>) -> Int64 {
        if value.isNaN { return 0 }
        if value <= Double(range.lowerBound) { return range.lowerBound }
        if value >= Double(range.upperBound) { return range.upperBound }
        return Int64(exactly: value.rounded(.towardZero)) ?? 0 // in range: always exact
    }

    /// `YYYY-MM-DDThh:mm:ss.` of whole seconds since 1970.
    private static func text(seconds: Int64) -> String {
        let (days, secondOfDay) = floorDivision(seconds, 86_400)
        let (year, month, day) = CivilCalendar.civil(daysSince1970: days)
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T" + pad(secondOfDay / 3600, 2) + ":"
            + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2) + "."
    }

    /// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999Z, in microseconds since 1970.
    private static let firstMicrosecond: Int64 = -62_135_596_800_000_000
    private static let lastMicrosecond: Int64 = 253_402_300_799_999_999

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let remainder = value % divisor
        return remainder < 0 ? (value / divisor - 1, remainder + divisor) : (value / divisor, remainder)
    }

    /// date-time = full-date "T" full-time (section 5.6), over the text's UTF-8.
    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        mutating func timestamp() -> Date? {
            guard bytes.count >= 10, let date = CalendarDate(utf8: bytes[0..<10]) else { return nil }
            index = 10
            guard expect("T") || expect("t"),
                  let hour = number(2), expect(":"), let minute = number(2), expect(":"), let second = number(2),
                  hour <= 23, minute <= 59, second <= 60 // 60: a leap second
            else { return nil }
            var fraction: Int64 = 0
            var kept = 0
            if expect(".") {
                var digits = 0
                while index < bytes.count, let digit = Self.digit(bytes[index]) {
                    // Past 15 digits a Double holds nothing more of a fraction of a second.
                    if kept < 15 {
                        fraction = fraction * 10 + Int64(digit)
                        kept += 1
                    }
                    digits += 1
                    index += 1
                }
                guard digits > 0 else { return nil }
            }
            var offset: Int64 = 0
            if expect("Z") || expect("z") {
                offset = 0
            } else {
                let sign: Int64
                if expect("+") { sign = 1 } else if expect("-") { sign = -1 } else { return nil }
                guard let hours = number(2), expect(":"), let minutes = number(2), hours <= 23, minutes <= 59 else { return nil }
                offset = sign * (hours * 3600 + minutes * 60)
            }
            guard index == bytes.count else { return nil }
            let seconds = date.daysSince1970 * 86_400 + hour * 3600 + minute * 60 + second - offset
            return Date(timeIntervalSince1970: instant(seconds: seconds, fraction: fraction, digits: kept))
        }

        /// Exactly `count` ASCII digits.
        private mutating func number(_ count: Int) -> Int64? {
            guard index + count <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[index..<index + count] {
                guard let digit = Self.digit(byte) else { return nil }
                value = value * 10 + Int64(digit)
            }
            index += count
            return value
        }

        private mutating func expect(_ character: Unicode.Scalar) -> Bool {
            guard index < bytes.count, bytes[index] == UInt8(ascii: character) else { return false }
            index += 1
            return true
        }

        private static func digit(_ byte: UInt8) -> Int? {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) ? Int(byte - UInt8(ascii: "0")) : nil
        }
    }
}
