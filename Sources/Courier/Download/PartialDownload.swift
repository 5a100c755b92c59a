import Foundation

/// What an unfinished download keeps beside its file: the bytes so far in `<file>.courier-download`
/// (never under the file's own name until they are whole and verified) and this record in
/// `<file>.courier-partial`, for `If-Range`/`If-Match` and, for a sliced download, each slice's progress.
struct PartialDownload: Codable, Sendable {
    var url: String
    var etag: String?
    var lastModified: String?
    var totalBytes: Int64?
    /// The server's `x-goog-hash` of the whole object, to verify a download resumed in another process.
    var googHash: String? = nil
    /// A sliced download's slices; nil for one stream (whose progress is the data file's size).
    var slices: [Slice]? = nil
    /// The stored bytes' `Content-Encoding` (`gzip`), nil for none: a resumption must get the
    /// same, and the whole is decoded at the end.
    var contentEncoding: String? = nil
    /// Cloud Storage's `x-goog-generation` of the first answer: every later request of the
    /// download asks for that generation (see ``pinned(_:generation:)``).
    var generation: String? = nil

    struct Slice: Codable, Sendable, Hashable {
        var start: Int64
        var end: Int64
        /// Bytes of `start..<end` on disk.
        var written: Int64
    }

    /// `url` asking for `generation`, when it is a Cloud Storage JSON API object URL that names
    /// none. A resumed range or a slice then reads the bytes of the object the download began
    /// with, as Google's libraries do: the JSON API honours no `If-Range`, so a range of an
    /// object replaced meanwhile would be the new object's bytes joined to the old one's. Other
    /// URLs are left as they are (a signed URL's signature covers its query).
    static func pinned(_ url: URL, generation: String?) -> URL {
        guard let generation, !generation.isEmpty, generation.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              url.path.contains("/storage/v1/b/"),
              var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
              !(components.queryItems ?? []).contains(where: { $0.name == "generation" })
        else { return url }
        components.percentEncodedQuery = (components.percentEncodedQuery.map { $0 + "&" } ?? "") + "generation=\(generation)"
        return components.url ?? url
    }

    /// The error for a pinned generation that is gone: the object changed (or was deleted)
    /// while it downloaded. The partial data is removed, so the next download starts afresh.
    static func objectChanged(_ file: URL, generation: String?, status: Int) -> TransportError {
        remove(for: file)
        return TransportError(.protocolError, message: "the object changed while it downloaded: generation \(generation ?? "?") "
            + "is gone (\(status)); the partial data was discarded, and a new download reads the current generation")
    }

    static func sidecar(for file: URL) -> URL { file.appendingPathExtension("courier-partial") }
    /// Where the bytes go until they are whole and verified.
    static func dataFile(for file: URL) -> URL { file.appendingPathExtension("courier-download") }

    /// The record for `file` if it belongs to a download of `url` whose data is still there.
    static func read(for file: URL, url: URL) -> PartialDownload? {
        guard FileManager.default.fileExists(atPath: dataFile(for: file).path),
              let data = try? Data(contentsOf: sidecar(for: file)),
              let partial = try? JSONDecoder().decode(PartialDownload.self, from: data), partial.url == url.absoluteString,
              partial.isConsistent
        else { return nil }
        return partial
    }

    /// Whether the record could have been written by a download: a size of at least 0, and
    /// slices in order that tile `0..<totalBytes` with what each wrote within it. A damaged
    /// record (its offsets are added and ranged over) starts the download afresh instead.
    var isConsistent: Bool {
        if let totalBytes, totalBytes < 0 { return false }
        guard let slices else { return true }
        guard let totalBytes, let first = slices.first, first.start == 0, slices.last?.end == totalBytes else { return false }
        return zip(slices, slices.dropFirst()).allSatisfy { $0.end == $1.start }
            && slices.allSatisfy { $0.start <= $0.end && $0.written >= 0 && $0.written <= $0.end - $0.start }
    }

    func write(for file: URL) throws {
        try JSONEncoder().encode(self).write(to: Self.sidecar(for: file), options: .atomic)
    }

    /// Removes the data and the record (after success, or data that failed verification).
    static func remove(for file: URL) {
        try? FileManager.default.removeItem(at: dataFile(for: file))
        try? FileManager.default.removeItem(at: sidecar(for: file))
    }

    /// Closes a file the download wrote. A file system that writes back later (NFS) may report
    /// a failed write only here, and the bytes are then not on disk.
    static func close(_ handle: FileHandle, _ file: URL) throws(TransportError) {
        do {
            try handle.close()
        } catch {
            throw TransportError(.fileError, message: "closing \(file.path) failed: \(error)")
        }
    }

    static func size(of file: URL) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: file.path)[.size]) as? NSNumber)?.int64Value ?? 0
    }
}
