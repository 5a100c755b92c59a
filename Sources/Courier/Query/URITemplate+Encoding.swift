extension URITemplate {
    /// Percent-encodes a value as an expression's operator requires: unreserved characters
    /// pass; with `allowReserved` (`{+var}`, `{#var}`), reserved characters and existing `%XX`
    /// triplets pass too (RFC 6570 section 3.2.1). Dot segments are the expansion's to encode.
    static func encode(_ value: String, allowReserved: Bool) -> String {
        allowReserved
            ? percentEncode(value, keep: { isUnreserved($0) || isReserved($0) }, keepTriplets: true)
            : percentEncode(value, keep: isUnreserved)
    }

    /// The first `length` characters of `value`, as RFC 6570's prefix modifier counts them:
    /// Unicode scalars, and with `allowReserved` a `%XX` triplet as one, so neither a UTF-8
    /// sequence nor a triplet is cut.
    static func prefix(_ value: String, _ length: Int, allowReserved: Bool) -> String {
        let scalars = Array(value.unicodeScalars)
        var index = 0
        var kept = 0
        while kept < length, index < scalars.count {
            let isTriplet = allowReserved && scalars[index] == "%" && index + 2 < scalars.count
                && isHexDigit(scalars[index + 1]) && isHexDigit(scalars[index + 2])
            index += isTriplet ? 3 : 1
            kept += 1
        }
        var keptScalars = String.UnicodeScalarView()
        keptScalars.append(contentsOf: scalars[..<index])
        return String(keptScalars)
    }

    package static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
             UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    static func isReserved(_ byte: UInt8) -> Bool {
        ":/?#[]@!$&'()*+,;=".utf8.contains(byte)
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// `value`'s UTF-8 with every byte `keep` refuses written as `%XX`; with `keepTriplets`, a
    /// valid `%XX` already there passes as it is.
    package static func percentEncode(_ value: String, keep: (UInt8) -> Bool, keepTriplets: Bool = false) -> String {
        let bytes = Array(value.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if keepTriplets, byte == UInt8(ascii: "%"), index + 2 < bytes.count,
               isHexDigit(bytes[index + 1]), isHexDigit(bytes[index + 2]) {
                output.append(contentsOf: bytes[index...index + 2])
                index += 3
                continue
            }
            if keep(byte) {
                output.append(byte)
            } else {
                output.append(UInt8(ascii: "%"))
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0xF)])
            }
            index += 1
        }
        return String(decoding: output, as: UTF8.self)
    }

    static func isHexDigit(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII && isHexDigit(UInt8(truncatingIfNeeded: scalar.value))
    }

    static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }
}
