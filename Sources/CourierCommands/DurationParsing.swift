import ArgumentParser
import CourierLoad

/// Durations on the command line: `10s`, `500ms`, `2m`, `1h`, `1m30s`; a bare number is seconds.
enum DurationParsing {
    /// Nil for text that is not a duration, or one longer than ``LoadOptions/longestDuration``
    /// (ten years): `inf`, `1e300` and `99999999999h` parse as numbers, and would trap as
    /// `Duration`s.
    static func parse(_ text: String) -> Duration? {
        guard let seconds = seconds(text), seconds <= LoadOptions.longestSeconds else { return nil }
        return .microseconds(Int64((seconds * 1_000_000).rounded()))
    }

    /// The seconds `text` names, however many; nil when it is not a duration.
    private static func seconds(_ text: String) -> Double? {
        let units: [(String, Double)] = [("ms", 0.001), ("us", 0.000_001), ("h", 3600), ("m", 60), ("s", 1)]
        if let seconds = Double(text) { return seconds >= 0 && seconds.isFinite ? seconds : nil }
        var rest = Substring(text)
        var total = 0.0
        while !rest.isEmpty {
            let digits = rest.prefix { $0.isNumber || $0 == "." }
            guard !digits.isEmpty, let number = Double(digits) else { return nil }
            rest = rest.dropFirst(digits.count)
            guard let (unit, scale) = units.first(where: { rest.hasPrefix($0.0) }) else { return nil }
            rest = rest.dropFirst(unit.count)
            total += number * scale
        }
        guard !text.isEmpty, total.isFinite else { return nil }
        return total
    }

    static func require(_ text: String, _ option: String) throws -> Duration {
        guard let duration = parse(text) else {
            if seconds(text) != nil { throw ValidationError("\(option): \"\(text)\" is longer than ten years") }
            throw ValidationError("\(option): \"\(text)\" is not a duration (as in 10s, 500ms, 2m, 1m30s)")
        }
        return duration
    }
}
