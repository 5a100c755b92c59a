import Courier
import CourierTestServer
import Foundation

// A separate process for measurements that must not see the test process's own memory:
// `CourierTestHelper stream-both <baseURL> <bytes>` sends and receives <bytes> through one
// service and prints a JSON line with byte counts, hashes and the peak RSS of the transfers;
// `openapi-stream` does the same through a generated OpenAPI client over CourierTransport.

func pattern(count: Int, offset: Int) -> Data {
    Data(TestPattern.bytes(count: count, offset: offset))
}

func kilobytes(_ field: String) -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix(field) } ?? ""
    return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
}

/// Resets VmHWM to the current RSS, so the next reading is the peak of what follows.
func resetPeak() {
    try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
}

/// What `stream` and `openapi-stream` print: bytes and hashes each way, and the peak RSS.
struct Report: Encodable {
    var uploadedBytes = 0
    var uploadHash = ""
    var downloadedBytes = 0
    var downloadHash = ""
    var fileUploadBytes = 0
    var fileDownloadBytes = 0
    var baselineKiB = 0
    var peakKiB = 0
}

let arguments = CommandLine.arguments
switch arguments.dropFirst().first {
case "stream-both" where arguments.count == 4:
    try await streamBoth(base: arguments[2], total: Int(arguments[3]) ?? 0)
case "get" where arguments.count == 3 || (arguments.count == 4 && arguments[3] == "no-proxy"):
    try await get(arguments[2], proxy: arguments.count == 4 ? .none : .environment)
case "openapi-stream" where arguments.count == 4:
    try await openAPIStream(base: arguments[2], total: Int(arguments[3]) ?? 0)
case "upload" where arguments.count == 6:
    try await upload(base: arguments[2], file: URL(fileURLWithPath: arguments[3]), chunkSize: Int(arguments[4]) ?? (8 << 20),
                     sessionFile: arguments[5] == "-" ? nil : URL(fileURLWithPath: arguments[5]))
case "upload-pipe" where arguments.count == 6 || arguments.count == 7:
    try await uploadPipe(base: arguments[2], name: arguments[3], count: Int(arguments[4]) ?? 0,
                         sessionFile: arguments[5] == "-" ? nil : URL(fileURLWithPath: arguments[5]), adaptive: arguments.count == 7)
default:
    FileHandle.standardError.write(Data("""
    usage: CourierTestHelper stream-both <baseURL> <bytes>
           CourierTestHelper get <url> [no-proxy]
           CourierTestHelper openapi-stream <baseURL> <bytes>
           CourierTestHelper upload <baseURL> <file> <chunkBytes> <sessionFile|->
           CourierTestHelper upload-pipe <baseURL> <name> <bytes> <sessionFile|-> [adaptive]

    """.utf8))
    exit(2)
}

/// One GET through a service of the default configuration (or with `proxy`), as a program
/// started in this process's environment makes it: prints `<status> <body>`, or `error <code>`
/// on a transport error.
func get(_ url: String, proxy: ProxyConfiguration) async throws {
    var configuration = ServiceActor.Configuration()
    configuration.transport.proxy = proxy
    try await withService(configuration: configuration) { service in
        do {
            let response = try await service.send(HTTPRequest(url: URL(string: url)!))
            print("\(response.status) \(String(decoding: response.body, as: UTF8.self))")
        } catch let error as TransportError {
            print("error \(error.kind)")
        }
    }
}

/// Streams `total` bytes both ways and through files, reporting the peak RSS of the transfers.
func streamBoth(base: String, total: Int) async throws {
    let chunkSize = 256 << 10
    var report = Report()
    try await withService { service in
        _ = try await service.send(HTTPRequest(url: URL(string: "\(base)/echo")!)) // warm up
        report.baselineKiB = kilobytes("VmRSS:")
        resetPeak()

        // Upload: an async sequence that makes each chunk on demand, so only the transport buffers.
        let lazyChunks = LazyChunks(total: total, chunkSize: chunkSize)
        let upload = try await service.send(HTTPRequest(method: .post, url: URL(string: "\(base)/upload")!,
                                                        body: .stream(lazyChunks, length: Int64(total))))
        let uploaded = try JSONSerialization.jsonObject(with: upload.body) as? [String: Any] ?? [:]
        report.uploadedBytes = uploaded["bytes"] as? Int ?? -1
        report.uploadHash = uploaded["hash"] as? String ?? ""

        // Download: consume the stream chunk by chunk.
        let download = try await service.stream(HTTPRequest(url: URL(string: "\(base)/bytes/\(total)")!))
        var hasher = TestPattern.Hasher()
        for try await chunk in download.body { hasher.update(chunk) }
        report.downloadedBytes = hasher.count
        report.downloadHash = hasher.hex

        // The same size through a file both ways.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-helper-\(getpid()).bin")
        defer { try? FileManager.default.removeItem(at: file) }
        _ = try await service.send(HTTPRequest(url: URL(string: "\(base)/bytes/\(total)")!), writingBodyTo: file)
        report.fileDownloadBytes = (try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? -1
        let fileUpload = try await service.send(HTTPRequest(method: .put, url: URL(string: "\(base)/upload")!, body: .file(file)))
        let fileResult = try JSONSerialization.jsonObject(with: fileUpload.body) as? [String: Any] ?? [:]
        report.fileUploadBytes = fileResult["bytes"] as? Int ?? -1

        report.peakKiB = kilobytes("VmHWM:")
    }
    print(String(decoding: try JSONEncoder().encode(report), as: UTF8.self))
}

struct UploadReport: Encodable {
    var size = ""
    var md5Hash = ""
    var crc32c = ""
    var baselineKiB = 0
    var peakKiB = 0
}

/// A resumable upload of `file` to the test server's Files API, reporting the result and peak RSS.
/// With a session file it writes its progress there after every chunk (another process can resume it).
func upload(base: String, file: URL, chunkSize: Int, sessionFile: URL?) async throws {
    var parameters = UploadParameters(file: file, mimeType: "application/octet-stream")
    parameters.chunkSize = chunkSize
    parameters.sessionFile = sessionFile
    FileHandle.standardError.write(Data("started\n".utf8))
    try await measuredUpload(base: base, name: file.lastPathComponent, parameters)
}

/// A resumable upload of `count` pattern bytes read from a pipe (length unknown to the upload), in
/// 256 KiB chunks (or sized from throughput, `adaptive`), saving its session after every chunk;
/// reports the result and peak RSS.
func uploadPipe(base: String, name: String, count: Int, sessionFile: URL?, adaptive: Bool) async throws {
    let pipe = TestPattern.pipe(count: count)
    var parameters = UploadParameters(stream: UploadStream(fileDescriptor: pipe), mimeType: "application/octet-stream")
    parameters.chunkSize = 256 << 10
    parameters.adaptiveChunkSize = adaptive
    parameters.sessionFile = sessionFile
    try await measuredUpload(base: base, name: name, parameters)
}

/// files.insert with `parameters` on the test server; prints the object's size and checksums and
/// the peak RSS of the upload as JSON.
func measuredUpload(base: String, name: String, _ parameters: UploadParameters) async throws {
    let api = APIDescription(name: "files", version: "v1", rootURL: URL(string: base)!, servicePath: "files/v1/")
    var query = Query<GenericObject>(api: api, name: "files.files.insert", method: .post, path: "files")
    query.uploadPath = "/upload/files/v1/files"
    query.parameters.set("name", name)
    query.upload = parameters
    var report = UploadReport()
    try await withService { service in
        report.baselineKiB = kilobytes("VmRSS:")
        resetPeak()
        let object = try await service.execute(query)
        report.size = object.json["size"]?.stringValue ?? ""
        report.md5Hash = object.json["md5Hash"]?.stringValue ?? ""
        report.crc32c = object.json["crc32c"]?.stringValue ?? ""
        report.peakKiB = kilobytes("VmHWM:")
    }
    print(String(decoding: try JSONEncoder().encode(report), as: UTF8.self))
}

/// Chunks of the test pattern, made only when the transport asks for them.
struct LazyChunks: AsyncSequence, Sendable {
    typealias Element = Data
    let total: Int
    let chunkSize: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        let total: Int
        let chunkSize: Int
        var offset = 0
        mutating func next() async -> Data? {
            guard offset < total else { return nil }
            let count = Swift.min(chunkSize, total - offset)
            defer { offset += count }
            return pattern(count: count, offset: offset)
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(total: total, chunkSize: chunkSize) }
}
