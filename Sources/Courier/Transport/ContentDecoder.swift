import CZlib
import Foundation

/// Decodes a gzip or deflate body as it arrives, and knows whether it ended where its encoding
/// says it ends.
///
/// libcurl's own decoding (7.88.1 and 8.14.1 alike) takes a gzip stream that stops halfway, in a
/// response whose framing is complete, as a whole body: the call succeeded with half the data.
/// So libcurl never decodes: Courier offers the codings it decodes itself (``offer``), lets
/// libcurl pass the bytes as they came, and fails a body whose stream has not ended
/// (``isComplete``) when the transfer does. (A request that names its own `Accept-Encoding` gets
/// any other coding as sent: ``Transfer``'s `received`.)
/// gzip's own CRC-32 and length are checked by zlib at the member's end. Loop-confined, as its
/// ``Transfer`` is.
final class ContentDecoder {
    enum Coding: Equatable {
        case gzip, deflate
    }

    /// The `Accept-Encoding` Courier sends: what it decodes.
    static let offer = "deflate, gzip"

    /// What a `Content-Encoding` value asks of the receiver.
    enum Decoding: Equatable {
        /// None, or `identity`: the bytes are the body.
        case identity
        case decode(Coding)
        /// A coding Courier does not decode (`br`, `zstd`), or a chain of codings.
        case unsupported
    }

    static func decoding(of value: String) -> Decoding {
        let codings = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            .filter { !$0.isEmpty && $0 != "identity" }
        switch codings {
        case []: return .identity
        case ["gzip"], ["x-gzip"]: return .decode(.gzip)
        case ["deflate"]: return .decode(.deflate)
        default: return .unsupported
        }
    }

    /// The error for a coding Courier did not offer and cannot decode.
    static func unofferedError(_ value: String) -> TransportError {
        TransportError(.protocolError, message: "the response's Content-Encoding \(value.prefix(100)) was not offered and cannot be decoded (Courier offers \(offer))")
    }

    private let coding: Coding
    private let stream: UnsafeMutablePointer<z_stream>
    private let output: UnsafeMutableRawBufferPointer
    /// Whether the last member (gzip) or the stream (deflate) ended.
    private(set) var isComplete = false
    /// Bytes decoded so far, for the error message.
    private(set) var decodedCount: Int64 = 0
    /// deflate: undecided until two bytes tell zlib's wrapper from raw deflate, holding the
    /// first while it waits for the second; decided from the start for gzip.
    private enum Wrapper { case decided, undecided(first: UInt8?) }
    private var wrapper: Wrapper

    init(_ coding: Coding) throws(TransportError) {
        self.coding = coding
        wrapper = coding == .deflate ? .undecided(first: nil) : .decided
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        output = .allocate(byteCount: 32 << 10, alignment: 16)
        // gzip: 16 + 15 (a gzip wrapper, the largest window); deflate: zlib's wrapper (15), or
        // raw deflate when its first two bytes are no zlib header (``decode(_:_:)``).
        guard inflateInit2_(stream, coding == .gzip ? 16 + 15 : 15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            stream.deallocate()
            output.deallocate()
            throw TransportError(.unknown, message: "zlib did not start")
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
        output.deallocate()
    }

    /// Decodes `input`, handing each piece to `deliver`, which returns false to stop (the body's
    /// limit, say): then nothing more is decoded. Throws for bytes that are not the coding.
    func decode(_ input: UnsafeRawBufferPointer, _ deliver: (UnsafeRawBufferPointer) -> Bool) throws(TransportError) -> Bool {
        guard !input.isEmpty else { return true }
        guard case .undecided(let first) = wrapper else { return try decodeDecided(input, deliver) }
        return try decodeDeflateStart(first, input, deliver)
    }

    /// HTTP's `deflate` is zlib's format (RFC 9110 §8.4.1.2), but some servers send raw deflate:
    /// as browsers do, the first two bytes decide. A zlib header names method 8 with a window of
    /// at most 32 KiB, and reads as a multiple of 31 (RFC 1950 §2.2). A raw stream that began
    /// the same way is vanishingly rare; one split before its second byte used to fail.
    private func decodeDeflateStart(_ first: UInt8?, _ input: UnsafeRawBufferPointer,
                                    _ deliver: (UnsafeRawBufferPointer) -> Bool) throws(TransportError) -> Bool {
        guard let first else {
            guard input.count >= 2 else {
                wrapper = .undecided(first: input[0])
                return true
            }
            decide(input[0], input[1])
            return try decodeDecided(input, deliver)
        }
        decide(first, input[0])
        let kept = try withUnsafeBytes(of: first) { byte throws(TransportError) in try decodeDecided(byte, deliver) }
        return kept ? try decodeDecided(input, deliver) : false
    }

    private func decide(_ first: UInt8, _ second: UInt8) {
        wrapper = .decided
        let zlib = first & 0x0F == 8 && first >> 4 <= 7 && (UInt16(first) << 8 | UInt16(second)) % 31 == 0
        if !zlib { inflateReset2(stream, -15) }
    }

    private func decodeDecided(_ input: UnsafeRawBufferPointer, _ deliver: (UnsafeRawBufferPointer) -> Bool) throws(TransportError) -> Bool {
        guard let base = input.baseAddress, !input.isEmpty else { return true }
        var consumed = 0
        while true {
            if isComplete {
                // Another gzip member may follow (RFC 1952 §2.2: it starts 1f 8b); other bytes after
                // the end (padding) are ignored, as after a deflate stream.
                guard consumed < input.count, coding == .gzip, input[consumed] == 0x1F else { return true }
                inflateReset(stream)
                isComplete = false
            }
            // At most 1 GiB a call: curl hands at most its buffer's size, but uInt is 32 bits.
            let offered = min(input.count - consumed, 1 << 30)
            let status = inflate(from: base + consumed, count: offered)
            let produced = output.count - Int(stream.pointee.avail_out)
            consumed += offered - Int(stream.pointee.avail_in)
            guard status == Z_OK || status == Z_STREAM_END || (status == Z_BUF_ERROR && produced == 0) else {
                let detail = stream.pointee.msg.map { String(cString: $0) } ?? "zlib \(status)"
                throw TransportError(.protocolError, message: "the response body is not valid \(coding) (\(detail) after \(decodedCount) decoded bytes)")
            }
            if status == Z_STREAM_END { isComplete = true }
            if produced > 0 {
                decodedCount += Int64(produced)
                guard deliver(UnsafeRawBufferPointer(rebasing: output[0..<produced])) else { return false }
            }
            // A full output buffer may leave more to give; otherwise done once the input is taken.
            if produced < output.count, consumed >= input.count || status == Z_BUF_ERROR { return true }
        }
    }

    private func inflate(from input: UnsafeRawPointer, count: Int) -> Int32 {
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(truncatingIfNeeded: count) // at most 1 GiB
        stream.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(truncatingIfNeeded: output.count) // 32 KiB
        return CZlib.inflate(stream, Z_NO_FLUSH)
    }

    /// The error for a body whose transfer ended before its coding did.
    var incompleteError: TransportError {
        TransportError(.protocolError, message: "the \(coding) body ended before its end: the response is incomplete (\(decodedCount) bytes decoded)")
    }
}
