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
    /// Replaced by an equal key shared with other transfers while waiting (``CurlMulti/enqueue(_:)``).
    var hostKey: HostKey
    let isHTTPS: Bool // last: it packs with the transfer's small fields

    /// The target of `url`, or nil when it is not an absolute http(s) URL with a host.
    init?(_ url: URL) {
        let string = url.absoluteString
        if let fast = string.utf8.withContiguousStorageIfAvailable({ Self.scan($0) }), let (isHTTPS, key) = fast {
            self.isHTTPS = isHTTPS
            hostKey = HostKey(key)
            return
        }
        // Foundation's reading, for everything the scan leaves to it.
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty
        else { return nil }
        isHTTPS = scheme == "https"
        hostKey = HostKey("\(scheme)://\(host):\(url.port ?? (isHTTPS ? 443 : 80))")
    }

    /// `http[s]://host[:port][/?#…]` with a lowercase scheme and a plain host: whether it is
    /// HTTPS, and the host key (`scheme://host:port`, the default port added); nil for anything else.
    private static func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> (Bool, String)? {
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
        guard hostEnd > hostStart else { return nil }
        if let colon {
            guard index - colon - 1 >= 1, index - colon - 1 <= 5 else { return nil }
            var value = 0
            for position in (colon + 1)..<index {
                let digit = bytes[position]
                guard digit >= 0x30 && digit <= 0x39 else { return nil }
                value = value * 10 + Int(digit - 0x30)
            }
            guard value <= 65535 else { return nil }
            return (isHTTPS, String(decoding: UnsafeBufferPointer(rebasing: bytes[0..<index]), as: UTF8.self))
        }
        // No port: the URL's prefix and the scheme's default, in one string.
        let prefix = UnsafeBufferPointer(rebasing: bytes[0..<index])
        let port: StaticString = isHTTPS ? ":443" : ":80"
        let key = String(unsafeUninitializedCapacity: prefix.count + port.utf8CodeUnitCount) { buffer in
            _ = buffer.initialize(fromContentsOf: prefix)
            let tail = UnsafeBufferPointer(start: port.utf8Start, count: port.utf8CodeUnitCount)
            _ = UnsafeMutableBufferPointer(rebasing: buffer[prefix.count...]).initialize(fromContentsOf: tail)
            return prefix.count + tail.count
        }
        return (isHTTPS, key)
    }

    /// Letters, digits, `-` and `.`: a registered name or an IPv4 address, nothing to decode.
    private static func isPlainHostByte(_ byte: UInt8) -> Bool {
        (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x30 && byte <= 0x39)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
    }
}

/// Scheme, host and port as one key, hashed once: admission looks a transfer's key up several
/// times per request, and a string key would be hashed again each time.
struct HostKey: Hashable, Sendable, CustomStringConvertible {
    let text: String
    private let hash: Int

    init(_ text: String) {
        self.text = text
        hash = text.hashValue
    }

    static func == (lhs: HostKey, rhs: HostKey) -> Bool { lhs.hash == rhs.hash && lhs.text == rhs.text }
    func hash(into hasher: inout Hasher) { hasher.combine(hash) }
    var description: String { text }
}

extension HTTPRequest {
    /// ``validate()``, returning what the transport needs from the URL.
    func validatedTarget() throws(TransportError) -> RequestTarget {
        guard method.isValidToken else {
            throw TransportError(.invalidRequest, message: "invalid method \(method.rawValue.debugDescription)")
        }
        guard let target = RequestTarget(url) else {
            throw TransportError(.invalidRequest, message: "only absolute http and https URLs can be sent",
                                 url: url.absoluteString)
        }
        if let field = headers.firstInvalidField() {
            throw TransportError(.invalidRequest,
                                 message: "header \(field.name.debugDescription) has a name or value that cannot be sent (CR, LF, NUL or a non-token name)")
        }
        return target
    }
}
