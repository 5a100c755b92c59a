import Foundation

/// Numbers as the reports print them, independent of the locale.
enum Format {
    /// Microseconds as `850.00us`, `1.23ms` or `2.50s`.
    static func latency(_ microseconds: Double) -> String {
        switch microseconds {
        case ..<1000: String(format: "%.2fus", microseconds)
        case ..<1_000_000: String(format: "%.2fms", microseconds / 1000)
        default: String(format: "%.2fs", microseconds / 1_000_000)
        }
    }

    /// 1234567 → `1,234,567`.
    static func count(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var grouped = ""
        for (offset, digit) in digits.enumerated() {
            if offset > 0 && (digits.count - offset) % 3 == 0 { grouped.append(",") }
            grouped.append(digit)
        }
        return value < 0 ? "-" + grouped : grouped
    }

    /// A fraction as a percentage: 0.00123 → `0.12%`.
    static func percent(_ fraction: Double) -> String {
        String(format: "%.2f%%", fraction * 100)
    }

    static func rate(_ perSecond: Double) -> String {
        String(format: "%.2f", perSecond)
    }

    /// Bytes with binary prefixes: `353.92MB` as wrk prints them.
    static func bytes(_ count: Double) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = count
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(Int(saturating: value))B" : String(format: "%.2f", value) + units[unit] // NaN (0 bytes in 0 s) is 0B
    }

    /// Seconds as `10.00s`, or `1m30s` past a minute.
    static func seconds(_ seconds: Double) -> String {
        guard seconds >= 60 else { return String(format: "%.2fs", seconds) }
        let whole = Int(saturating: seconds) // a merged file's duration may be anything finite
        return "\(whole / 60)m\(whole % 60)s"
    }

    /// A fraction as a percentage's number, to a tenth: 0.95 → `95`, 0.001 → `0.1`.
    static func percentNumber(_ fraction: Double) -> String {
        number((fraction * 1000).rounded() / 10)
    }

    /// A number as short as it reads exactly: 30 → `30`, 2.5 → `2.5`.
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}
