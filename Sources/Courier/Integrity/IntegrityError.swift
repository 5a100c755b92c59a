/// The checksums of bytes that went over the wire disagree: the server's MD5 or CRC32C of an
/// uploaded object, or an `x-goog-hash` of a downloaded one, differ from the local bytes.
///
/// Nothing corrupted is kept: a download's file is not put under its name, and Cloud Storage
/// refuses an upload whose bytes disagree with the `X-Goog-Hash` sent with it.
public struct IntegrityError: CourierError, Hashable {
    /// Which checksum and both values.
    public let message: String
    /// `checksumMismatch`: the one kind.
    public var kind: String { "checksumMismatch" }

    public init(message: String) {
        self.message = message
    }

    public var description: String { "IntegrityError: \(message)" }

    /// Cloud Storage's refusal of media that disagrees with the `X-Goog-Hash` sent with it: a 400
    /// saying `Provided MD5 hash "…" doesn't match calculated MD5 hash "…"` (or CRC32C); nil for
    /// any other error.
    init?(refusal error: APIError) {
        guard error.status == 400, error.message.range(of: "doesn't match calculated", options: .caseInsensitive) != nil else {
            return nil
        }
        message = "the server refused the upload: \(error.message)"
    }
}
