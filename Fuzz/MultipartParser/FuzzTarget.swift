import Foundation

// libFuzzer entry point for the batch response parser (Sources/Courier/Batch/MultipartParser.swift,
// compiled alongside this file). Any input must parse or throw a MultipartError: never crash,
// never loop forever.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: start, count: count)
    // The first byte picks the boundary, so the fuzzer can also vary it.
    let boundaries = ["b", "batch_x", "--", "a b", "\u{0}"]
    let boundary = boundaries[Int(data.first ?? 0) % boundaries.count]
    if let parsed = try? MultipartParser.parse(data.dropFirst(), boundary: boundary) {
        for part in parsed.parts {
            _ = part.header("Content-ID")
            _ = try? MultipartParser.httpResponse(part.body)
        }
    }
    _ = try? MultipartParser.boundary(fromContentType: String(decoding: data, as: UTF8.self))
    return 0
}
