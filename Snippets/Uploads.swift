// Uploads and downloads: resumable chunks with progress, pause and resume, a session saved for
// crash recovery, single-request uploads, and a download that resumes with Range.
import Courier
import CourierTestServer
import Foundation

let server = try await TestServer.start() // its Files API speaks Google's upload protocols
let api = APIDescription(name: "files", version: "v1", rootURL: server.baseURL, servicePath: "files/v1/")

// A 20 MiB file to send.
let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-upload-\(UUID()).bin")
try Data((0..<(20 << 20)).map { UInt8(truncatingIfNeeded: $0) }).write(to: file)
let sessionFile = file.appendingPathExtension("session.json")
defer {
    try? FileManager.default.removeItem(at: file)
    try? FileManager.default.removeItem(at: sessionFile)
}

func insert(_ name: String, _ upload: UploadParameters) -> Query<GenericObject> {
    var query = Query<GenericObject>(api: api, name: "files.files.insert", method: .post, path: "files")
    query.uploadPath = "/upload/files/v1/files"     // from the discovery document's mediaUpload
    query.parameters.set("name", name)
    query.upload = upload
    return query
}

try await withService(configuration: { var c = ServiceActor.Configuration(); c.rootURL = server.baseURL; return c }()) { service in
    // Resumable (the default): 4 MiB chunks, progress, a pause, and the session kept on disk.
    var parameters = UploadParameters(file: file, mimeType: "application/octet-stream")
    parameters.chunkSize = 4 << 20
    parameters.sessionFile = sessionFile            // resumeUpload(from:query:) continues it after a crash
    let task = service.upload(insert("big.bin", parameters))
    let watcher = Task { for await progress in task.progress { print(String(format: "  %3.0f%%", progress.fractionCompleted * 100)) } }
    while task.currentProgress.bytesSent == 0 { try await Task.sleep(for: .milliseconds(5)) }
    task.pause()                                    // the chunk in flight finishes first
    while !task.isPaused { try await Task.sleep(for: .milliseconds(5)) }
    print("paused at", task.session?.offset ?? 0, "bytes")
    task.resume()
    let object = try await task.value               // MD5 and CRC32C checked against the server's
    _ = await watcher.value
    print("uploaded", object.json["size"]?.stringValue ?? "?", "bytes, md5", object.json["md5Hash"]?.stringValue ?? "")

    // Small files in one request: metadata and media together (multipart), or media alone.
    var small = insert("note.txt", UploadParameters(data: Data("hello".utf8), mimeType: "text/plain", uploadProtocol: .multipart))
    small.body = ["name": "note.txt", "metadata": ["source": "snippet"]]
    print("multipart:", try await service.execute(small).json["name"]?.stringValue ?? "")

    // Download to a file, with Range resume and x-goog-hash verification.
    var media = Query<MediaData>(api: api, name: "files.files.get", path: "/download/files/v1/files/{id}",
                                 pathParameters: ["id": object.json["id"]?.stringValue ?? ""])
    media.downloadsMedia = true
    let target = file.appendingPathExtension("copy")
    defer { try? FileManager.default.removeItem(at: target) }
    let result = try await service.downloadFile(media, to: target)
    print("downloaded", result.bytes, "bytes; identical:", try Data(contentsOf: target) == Data(contentsOf: file))
}
await server.stop()
