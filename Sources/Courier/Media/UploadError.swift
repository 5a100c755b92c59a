/// An upload failed in a way specific to uploads. (Server errors are ``APIError``s and
/// failures below HTTP ``TransportError``s.)
public struct UploadError: CodedError, Hashable {
    enum Code: String, Sendable {
        case sessionExpired, fileChanged, protocolViolation, dataLoss, invalidParameters, mediaTooLarge, mediaTypeNotAccepted
    }

    let code: Code
    public internal(set) var message = ""

    /// The server forgot the upload session (404 or 410), and restarting was not allowed.
    public static let sessionExpired = UploadError(code: .sessionExpired)
    /// The file to resume is not the file that was being uploaded (size, date or first MiB differ).
    public static let fileChanged = UploadError(code: .fileChanged)
    /// The server answered the protocol in a way it never should (no session URI, a range beyond the data).
    public static let protocolViolation = UploadError(code: .protocolViolation)
    /// The server completed the upload with another number of bytes than were sent: Cloud
    /// Storage's object names a `size` that is not the source's (java-storage's `dataLoss`). The
    /// stored object is not the source, whether or not checksums are compared.
    public static let dataLoss = UploadError(code: .dataLoss)
    /// The query cannot be uploaded as configured.
    public static let invalidParameters = UploadError(code: .invalidParameters)
    /// The media is larger than the method's `maxSize` (``MediaUploadLimits``); nothing was sent.
    public static let mediaTooLarge = UploadError(code: .mediaTooLarge)
    /// The media's MIME type is not one the method accepts (``MediaUploadLimits``); nothing was sent.
    public static let mediaTypeNotAccepted = UploadError(code: .mediaTypeNotAccepted)
}
