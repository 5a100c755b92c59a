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
        guard (1...9999).contains(year), (1...12).contains(month),
              day >= 1, day <= Self.days(inMonth: month, year: year) else { return nil }
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

    /// Days since 1970-01-01 (Howard Hinnant's `days_from_civil`).
    var daysSince1970: Int64 {
        let (year, month, day) = (Int64(self.year), Int64(self.month), Int64(self.day))
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The year, month and day `days` after 1970-01-01 (Hinnant's `civil_from_days`), in the
    /// proleptic Gregorian calendar, with no bound on the year.
    static func civil(daysSince1970 days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func days(inMonth month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
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
