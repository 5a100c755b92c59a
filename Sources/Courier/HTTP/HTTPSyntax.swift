/// Byte classes from RFC 9110 used to validate what goes on the wire.
enum HTTPSyntax {
    /// Whether every UTF-8 byte of `text` is in the class `byte`. Over the contiguous bytes:
    /// the generic `utf8.allSatisfy` cost about 60 instructions a byte, 182 for "GET" (Docs/Performance.md, "Decisions").
    @inline(__always)
    static func all(_ text: String, are byte: (UInt8) -> Bool) -> Bool {
        var text = text // withUTF8 may make it contiguous, so it needs a var; a copy is a retain
        return text.withUTF8 { bytes in
            for value in bytes where !byte(value) { return false }
            return true
        }
    }

    /// `tchar` from RFC 9110 §5.6.2.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
             UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// A field value may hold visible characters, spaces, tabs and obs-text, never CR, LF or NUL.
    static func isFieldValueByte(_ byte: UInt8) -> Bool {
        byte == 0x09 || (byte >= 0x20 && byte != 0x7F)
    }

    /// ASCII case-insensitive comparison, for header names.
    static func namesEqual(_ a: String, _ b: String) -> Bool {
        var ia = a.utf8.makeIterator()
        var ib = b.utf8.makeIterator()
        while true {
            switch (ia.next(), ib.next()) {
            case (nil, nil): return true
            case let (x?, y?):
                if x != y && lower(x) != lower(y) { return false }
            default: return false
            }
        }
    }

    /// A space or a tab: optional whitespace around a field value (RFC 9110 §5.6.3).
    @inline(__always) static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }

    @inline(__always) static func lower(_ b: UInt8) -> UInt8 {
        (b >= 65 && b <= 90) ? b | 0x20 : b
    }
}
