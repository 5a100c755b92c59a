/// Google's `google-duration` format: seconds with up to nine fractional digits and an `s`
/// suffix (`"3.5s"`, `"-0.000000001s"`), as protobuf's Duration maps to JSON.
extension Duration: JSONConvertible, QueryParameterValue {
    public init?(jsonValue: JSONValue) {
        guard case .string(let text) = jsonValue, let duration = Self(googleDuration: text) else { return nil }
        self = duration
    }

    public var jsonValue: JSONValue { .string(googleDurationText) }
    public var queryParameterText: String { googleDurationText }

    /// Parses `"3.5s"`; nil for anything else.
    init?(googleDuration text: String) {
        guard text.hasSuffix("s") else { return nil }
        var number = text.dropLast()
        let negative = number.hasPrefix("-")
        if negative { number = number.dropFirst() }
        let parts = number.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, whole.allSatisfy(\.isASCIIDigit), let seconds = Int64(whole) else { return nil }
        var nanoseconds: Int64 = 0
        if parts.count == 2 {
            let fraction = parts[1]
            guard !fraction.isEmpty, fraction.count <= 9, fraction.allSatisfy(\.isASCIIDigit) else { return nil }
            nanoseconds = Int64(fraction + String(repeating: "0", count: 9 - fraction.count))!
        }
        let magnitude = Duration.seconds(seconds) + .nanoseconds(nanoseconds)
        self = negative ? .zero - magnitude : magnitude
    }

    /// `"3.5s"`: whole seconds, then the fraction without trailing zeros.
    var googleDurationText: String {
        let negative = self < .zero
        let magnitude = negative ? .zero - self : self
        let (seconds, attoseconds) = magnitude.components
        let nanoseconds = attoseconds / 1_000_000_000
        var text = (negative ? "-" : "") + String(seconds)
        if nanoseconds > 0 {
            var fraction = String(nanoseconds)
            fraction = String(repeating: "0", count: 9 - fraction.count) + fraction
            while fraction.hasSuffix("0") { fraction.removeLast() }
            text += "." + fraction
        }
        return text + "s"
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
