import Foundation

extension Checksums {
    /// The first disagreement between a whole media body held in memory and the response's
    /// `x-goog-hash`, or nil when they agree or cannot be compared: no header, a range (206), or
    /// bytes decoded on the way, by curl (a `Content-Encoding`) or by the server's decompressive
    /// transcoding (`x-guploader-response-body-transformations: gunzipped`). The header covers
    /// the stored bytes, so only those are checked, as google-cloud-go's reader does. CRC32C when
    /// the header has it (cheap), else MD5.
    static func mismatch(ofMedia response: HTTPResponse) -> String? {
        guard response.status == 200, let header = response.headers["x-goog-hash"],
              (response.headers["Content-Encoding"] ?? "identity").lowercased() == "identity",
              response.headers["x-guploader-response-body-transformations"]?.lowercased().contains("gunzipped") != true
        else { return nil }
        let hasCRC32C = parseGoogHash(header).contains { $0.0 == "crc32c" }
        let accumulator = ChecksumAccumulator(md5: !hasCRC32C)
        accumulator.update(response.body)
        return accumulator.finish().mismatch(withGoogHash: header)
    }
}
