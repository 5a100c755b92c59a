/// A day of the calendar with no time and no time zone: Discovery's `format: date`
/// (`"2026-11-23"`), as birthdays, billing days and report dates are.
///
/// A `Date` would be wrong here: it is an instant, and turning a day into one picks a time zone
/// the API never named.
///
/// ```swift
/// let day = CalendarDate("2026-11-23")                   // nil for text that is not a valid day
/// rule.condition.createdBefore = CalendarDate(year: 2026, month: 11, day: 23)
/// print(day?.year ?? 0, day?.description ?? "")           // 2026 2026-11-23
/// ```
public struct CalendarDate: Sendable, Hashable, Comparable, Codable, LosslessStringConvertible {
    public let year: Int
    /// 1 to 12.
    public let month: Int
    /// 1 to the month's last day.
    public let day: Int

    /// A valid day of the proleptic Gregorian calendar, years 1 to 9999 (as RFC 3339's full-date).
    public init?(year: Int, month: Int, day: Int) {
        guard CivilCalendar.isValid(year: year, month: month, day: day) else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses `YYYY-MM-DD`; nil for anything else, or for a day that does not exist.
    public init?(_ text: String) {
        self.init(utf8: Array(text.utf8)[...])
    }

    /// `YYYY-MM-DD` in exactly these bytes; RFC 3339's full-date, which a timestamp starts with too.
    init?(utf8 bytes: ArraySlice<UInt8>) {
        guard bytes.count == 10 else { return nil }
        let start = bytes.startIndex
        guard bytes[start + 4] == UInt8(ascii: "-"), bytes[start + 7] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[(start + range.lowerBound)..<(start + range.upperBound)] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10) else { return nil }
        self.init(year: year, month: month, day: day)
    }

    /// `YYYY-MM-DD`.
    public var description: String {
        func padded(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(padded(year, 4))-\(padded(month, 2))-\(padded(day, 2))"
    }

    public static func < (lhs: CalendarDate, rhs: CalendarDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let date = CalendarDate(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a YYYY-MM-DD date: \(text)"))
        }
        self = date
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    /// Days since 1970-01-01.
    var daysSince1970: Int64 {
        CivilCalendar.daysSince1970(year: Int64(year), month: Int64(month), day: Int64(day))
    }
}

extension CalendarDate: JSONConvertible {
    public init?(jsonValue: JSONValue) {
        guard case .string(let text) = jsonValue else { return nil }
        self.init(text)
    }

    public var jsonValue: JSONValue { .string(description) }
}

extension CalendarDate: QueryParameterValue {
    public var queryParameterText: String { description }
}
