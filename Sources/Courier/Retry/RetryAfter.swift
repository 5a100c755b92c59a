import Foundation

/// `Retry-After` (RFC 9110 §10.2.3): delay seconds or an HTTP date.
enum RetryAfter {
    /// The wait the server asked for; nil when the field is absent or not one of its two forms.
    /// Delay seconds too large for a `Duration` saturate: a server that says "not for ages" is
    /// not retried soon (the policy's cap then gives up).
    static func parse(_ value: String?, now: Date = Date()) -> Duration? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            return .seconds(Int64(value) ?? .max)
        }
        guard let date = HTTPDate.parse(value, now: now) else { return nil }
        let seconds = max(0, date.timeIntervalSince(now))
        return .milliseconds(Int64(saturating: seconds * 1000))
    }
}
