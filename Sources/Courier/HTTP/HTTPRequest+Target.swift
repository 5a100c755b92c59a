import Foundation

/// Where a request goes, as the transport needs it: whether it is HTTPS, and the host key that
/// admission groups transfers by (scheme, host and port). curl gets the URL's own string, which
/// `absoluteString` returns without a copy, so no second one is kept here.
///
/// Read once per request, from the URL's string: Foundation's `URL.scheme`, `host` and `port`
/// parse and percent-decode again on every call, about 4,000 instructions per request on the
/// plain path where validation, the host key and the TLS options each asked (callgrind,
/// Docs/Performance.md). URLs with anything unusual in their authority (user info,
/// percent-escapes, IPv6 brackets) take Foundation's reading, so both agree on what is valid.
struct RequestTarget: Sendable {
    let hostKey: HostKey
    let isHTTPS: Bool // last: it packs with the transfer's small fields

    /// The target of `url`; a typed error naming what is wrong when it is not an absolute http(s)
    /// URL with a host and a port in range. Nothing here traps: a URL can come from a user, a
    /// file or a server's `Location`, and Foundation accepts ports and hosts curl cannot use.
    init(_ url: URL) throws(TransportError) {
        let string = url.absoluteString
        let scanned = string.utf8.withContiguousStorageIfAvailable { bytes -> Scan in
            // curl takes the URL as a C string: a NUL would cut it and send the request elsewhere.
            if bytes.count > 0, memchr(bytes.baseAddress!, 0, bytes.count) != nil { return .hasNUL }
            return Self.scan(bytes).map { .plain(isHTTPS: $0.isHTTPS, hostEnd: $0.hostEnd, port: $0.port) } ?? .unusual
        }
        switch scanned {
        case .plain(let isHTTPS, let hostEnd, let port):
            self.isHTTPS = isHTTPS
            hostKey = HostKey(text: string, hostEnd: hostEnd, port: port)
            return
        case .hasNUL:
            throw Self.invalid("the URL contains a NUL byte", url: string)
        case .unusual, nil:
            break
        }
        // Foundation's reading, for everything the scan leaves to it.
        guard !string.utf8.contains(0) else { throw Self.invalid("the URL contains a NUL byte", url: string) }
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty
        else { throw Self.invalid("only absolute http and https URLs can be sent", url: string) }
        isHTTPS = scheme == "https"
        let prefix = "\(scheme)://\(host)"
        guard prefix.utf8.count <= HostKey.maxHostEnd else {
            throw Self.invalid("the host is \(host.utf8.count) bytes long, more than a URL's host can be", url: string)
        }
        let port = url.port ?? (isHTTPS ? 443 : 80)
        guard (0...65535).contains(port) else {
            throw Self.invalid("port \(port) is out of range (0 to 65535)", url: string)
        }
        hostKey = HostKey(text: "\(prefix):\(port)", hostEnd: prefix.utf8.count, port: port)
    }

    private enum Scan {
        case plain(isHTTPS: Bool, hostEnd: Int, port: Int)
        case hasNUL
        /// Left to Foundation's reading.
        case unusual
    }

    /// The URL goes in the error redacted, and cut: a hostile one can be megabytes long.
    private static func invalid(_ message: String, url: String) -> TransportError {
        let shown = url.utf8.count > 512 ? String(decoding: url.utf8.prefix(512), as: UTF8.self) + "…" : url
        return TransportError(.invalidRequest, message: message, url: shown.replacingOccurrences(of: "\0", with: "%00"))
    }

    /// `http[s]://host[:port][/?#…]` with a lowercase scheme and a plain host: whether it is
    /// HTTPS, where the host ends and the port (the scheme's default when none is given); nil
    /// for anything else.
    private static func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> (isHTTPS: Bool, hostEnd: Int, port: Int)? {
        let count = bytes.count
        var index: Int
        let isHTTPS: Bool
        guard count > 7, bytes[0] == UInt8(ascii: "h"), bytes[1] == UInt8(ascii: "t"),
              bytes[2] == UInt8(ascii: "t"), bytes[3] == UInt8(ascii: "p")
        else { return nil }
        if bytes[4] == UInt8(ascii: ":") {
            isHTTPS = false
            index = 5
        } else if bytes[4] == UInt8(ascii: "s"), bytes[5] == UInt8(ascii: ":") {
            isHTTPS = true
            index = 6
        } else {
            return nil
        }
        guard index + 1 < count, bytes[index] == UInt8(ascii: "/"), bytes[index + 1] == UInt8(ascii: "/") else { return nil }
        index += 2
        let hostStart = index
        var colon: Int?
        while index < count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") { break }
            if byte == UInt8(ascii: ":") {
                guard colon == nil else { return nil }
                colon = index
            } else if !(Self.isPlainHostByte(byte) || (colon != nil && byte >= 0x30 && byte <= 0x39)) {
                return nil // user info, a percent-escape, brackets: Foundation decides
            }
            index += 1
        }
        let hostEnd = colon ?? index
        guard hostEnd > hostStart, hostEnd <= HostKey.maxHostEnd else { return nil }
        guard let colon else { return (isHTTPS, hostEnd, isHTTPS ? 443 : 80) }
        guard index - colon - 1 >= 1, index - colon - 1 <= 5 else { return nil }
        var value = 0
        for position in (colon + 1)..<index {
            let digit = bytes[position]
            guard digit >= 0x30 && digit <= 0x39 else { return nil }
            value = value * 10 + Int(digit - 0x30)
        }
        guard value <= 65535 else { return nil }
        return (isHTTPS, hostEnd, value)
    }

    /// Letters, digits, `-` and `.`: a registered name or an IPv4 address, nothing to decode.
    private static func isPlainHostByte(_ byte: UInt8) -> Bool {
        byte.isASCIILetterOrDigit || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
    }
}

/// Scheme, host and port: what admission groups transfers by, looked up several times per
/// request.
///
/// It makes no string of its own: it keeps the URL's string, which the request holds anyway,
/// with the host's end in it, and compares the `scheme://host` prefix and the port. Its hash,
/// FNV-1a over that prefix and the port, is taken once; a dictionary lookup hashes only that
/// number. (A `scheme://host:port` string of its own cost an allocation and a SipHash of the
/// text per request: see Docs/Performance.md.)
struct HostKey: Hashable, Sendable, CustomStringConvertible {
    /// Starts with the lowercase scheme, `://` and the host, which ends at `hostEnd`.
    private let text: String
    private let hash: UInt32
    private let hostEnd: UInt16
    let port: UInt16
    // 16 + 4 + 2 + 2 bytes, as many as a key string and its hash took: each waiting query holds one.

    /// The longest `scheme://host` a key holds: longer than any host name DNS allows.
    static let maxHostEnd = Int(UInt16.max)

    /// `hostEnd` and `port` are checked by ``RequestTarget`` (at most ``maxHostEnd``, 0...65535);
    /// out of range they are clamped here rather than trap.
    init(text: String, hostEnd: Int, port: Int) {
        self.text = text
        self.hostEnd = UInt16(clamping: hostEnd)
        self.port = UInt16(clamping: port)
        func fnv1a(_ bytes: some Sequence<UInt8>) -> UInt32 {
            var hash: UInt32 = 2_166_136_261
            for byte in bytes { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
            return (hash ^ UInt32(truncatingIfNeeded: port)) &* 16_777_619
        }
        // Over the contiguous bytes: the generic UTF-8 view costs about 30 instructions a byte.
        hash = text.utf8.withContiguousStorageIfAvailable { fnv1a(UnsafeBufferPointer(rebasing: $0[..<hostEnd])) }
            ?? fnv1a(text.utf8.prefix(hostEnd))
    }

    static func == (lhs: HostKey, rhs: HostKey) -> Bool {
        guard lhs.hash == rhs.hash, lhs.hostEnd == rhs.hostEnd, lhs.port == rhs.port else { return false }
        let count = Int(lhs.hostEnd)
        let equal = lhs.text.utf8.withContiguousStorageIfAvailable { left in
            rhs.text.utf8.withContiguousStorageIfAvailable { right in
                left.baseAddress == right.baseAddress || memcmp(left.baseAddress!, right.baseAddress!, count) == 0
            }
        }
        // Strings without contiguous UTF-8 (bridged ones, not on Linux) compare the slow way.
        return (equal ?? nil) ?? lhs.text.utf8.prefix(count).elementsEqual(rhs.text.utf8.prefix(count))
    }

    func hash(into hasher: inout Hasher) { hasher.combine(hash) }

    /// `scheme://host:port`.
    var description: String { "\(String(decoding: Array(text.utf8.prefix(Int(hostEnd))), as: UTF8.self)):\(port)" }
}

extension HTTPRequest {
    /// ``validate()``, returning what the transport needs from the URL.
    func validatedTarget() throws(TransportError) -> RequestTarget {
        guard method.isValidToken else {
            throw TransportError(.invalidRequest, message: "invalid method \(method.rawValue.debugDescription)")
        }
        let target = try RequestTarget(url)
        if let field = headers.firstInvalidField() {
            throw TransportError(.invalidRequest,
                                 message: "header \(field.name.debugDescription) has a name or value that cannot be sent (CR, LF, NUL or a non-token name)")
        }
        return target
    }
}
