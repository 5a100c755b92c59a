import Foundation

/// What a method accepts as media, from its Discovery document's `mediaUpload` (`accept`,
/// `maxSize`): checked before anything is sent, so a file the server would refuse after the
/// last byte fails at once with a clear error.
///
/// Generated queries set it; a hand-written query may too:
///
/// ```swift
/// query.mediaUploadLimits = MediaUploadLimits(accept: ["image/*"], maxSize: 10 << 20)
/// ```
public struct MediaUploadLimits: Sendable, Hashable {
    /// MIME type patterns the method takes (`image/*`, `*/*`, `application/pdf`); empty takes any.
    public var accept: [String]
    /// The largest media, in bytes; nil for no limit.
    public var maxSize: Int64?

    public init(accept: [String] = [], maxSize: Int64? = nil) {
        self.accept = accept
        self.maxSize = maxSize
    }

    /// Throws ``UploadError/mediaTooLarge`` or ``UploadError/mediaTypeNotAccepted``.
    func check(_ parameters: UploadParameters, method: String) throws(UploadError) {
        // A stream's length is checked as it is read (``checkSize(_:method:)``).
        if let size = try parameters.byteCount() { try checkSize(size, method: method) }
        if !accept.isEmpty, !accept.contains(where: { Self.matches(pattern: $0, mimeType: parameters.mimeType) }) {
            throw UploadError(code: .mediaTypeNotAccepted,
                              message: "\(method) does not take \(parameters.mimeType); it takes \(accept.joined(separator: ", "))")
        }
    }

    /// Throws ``UploadError/mediaTooLarge`` once `size` bytes exceed ``maxSize``.
    func checkSize(_ size: Int64, method: String) throws(UploadError) {
        if let maxSize, size > maxSize {
            throw UploadError(code: .mediaTooLarge, message: "\(method) takes at most \(maxSize) bytes of media; this upload has \(size)")
        }
    }

    /// `type/subtype` against a pattern whose either part may be `*`; parameters (`; charset=…`)
    /// and case are ignored.
    static func matches(pattern: String, mimeType: String) -> Bool {
        func parts(_ text: String) -> (type: String, subtype: String) {
            let essence = text.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
            let halves = essence.lowercased().split(separator: "/", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            return (halves.first ?? "", halves.count > 1 ? halves[1] : "")
        }
        let wanted = parts(pattern)
        let given = parts(mimeType)
        return (wanted.type == "*" || wanted.type == given.type) && (wanted.subtype == "*" || wanted.subtype == given.subtype)
    }
}
