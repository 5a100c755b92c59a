extension UInt8 {
    /// An ASCII letter or digit: with `-`, what a host name's labels are made of (RFC 1123).
    var isASCIILetterOrDigit: Bool {
        (self >= 0x61 && self <= 0x7A) || (self >= 0x41 && self <= 0x5A) || (self >= 0x30 && self <= 0x39)
    }
}
