import ArgumentParser

/// Durations on the command line: `10s`, `500ms`, `2m`, `1h`, `1m30s`; a bare number is seconds.
enum DurationParsing {
    static func parse(_ text: String) -> Duration? {
        let units: [(String, Double)] = [("ms", 0.001), ("us", 0.000_001), ("h", 3600), ("m", 60), ("s", 1)]
        if let seconds = Double(text), seconds >= 0 { return .milliseconds(Int64((seconds * 1000).rounded())) }
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
        guard !text.isEmpty else { return nil }
        return .microseconds(Int64((total * 1_000_000).rounded()))
    }

    static func require(_ text: String, _ option: String) throws -> Duration {
        guard let duration = parse(text) else {
            throw ValidationError("\(option): \"\(text)\" is not a duration (as in 10s, 500ms, 2m, 1m30s)")
        }
        return duration
    }
}
