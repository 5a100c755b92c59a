@testable import Courier
import CourierSync
import CourierTestServer
import CourierTesting
import Foundation
import Subprocess
import CourierTestSupport
import Testing

/// Uploads of unknown length: chunks say `bytes a-b/*` until the stream ends, the last names
/// the total; pause, resume and crash resume still hold.
@Suite struct StreamUploadTests {
    static func expected(_ count: Int, offset: Int = 0) -> Data { Data(TestPattern.bytes(count: count, offset: offset)) }

    func streamed(_ count: Int, piece: Int = 50_000) -> UploadParameters {
        let stream = AsyncStream<Data> { continuation in
            var position = 0
            while position < count {
                let size = min(piece, count - position)
                continuation.yield(Self.expected(size, offset: position))
                position += size
            }
            continuation.finish()
        }
        var parameters = UploadParameters(stream: UploadStream(stream), mimeType: "application/octet-stream")
        parameters.chunkSize = 256 << 10
        parameters.adaptiveChunkSize = false
        return parameters
    }

    @Test func aStreamOfUnknownLengthNamesItsTotalOnlyInTheLastChunk() async throws {
        try await withTestServer { server in
            try await withCheckedService(configuration: .testing(server.baseURL)) { service in
                let count = 700_000 // two whole chunks and a short one
                let task = service.upload(Files.insert(server, name: "stream.bin", upload: streamed(count)))
                let object = try await task.value
                #expect(object.json["size"] == "700000")
                #expect(server.files.contents(named: "stream.bin") == Self.expected(count))
                #expect(server.files.contentRanges == ["bytes 0-262143/*", "bytes 262144-524287/*", "bytes 524288-699999/700000"])
                #expect(task.currentProgress == UploadProgress(bytesSent: 700_000, totalBytes: 700_000))
                // The server checked the X-Goog-Hash of the last chunk; its checksums match the bytes.
                let local = ChecksumAccumulator()
                local.update(Self.expected(count))
                #expect(object.json["md5Hash"]?.stringValue == local.finish().md5Base64)
            }
        }
    }

    @Test func aStreamEndingOnAChunkBoundaryStillNamesItsTotalInTheLastChunk() async throws {
        try await withTestServer { server in
            try await withCheckedService(configuration: .testing(server.baseURL)) { service in
                let count = 2 * (256 << 10)
                // The last piece waits until the first chunk has arrived, so the first is sent not knowing the end.
                let stream = AsyncStream<Data> { continuation in
                    let task = Task {
                        continuation.yield(Self.expected(count - 1000))
                        _ = await eventually(within: 30) { server.files.chunkRequestCount >= 1 }
                        continuation.yield(Self.expected(1000, offset: count - 1000))
                        continuation.finish()
                    }
                    continuation.onTermination = { _ in task.cancel() }
                }
                var parameters = UploadParameters(stream: UploadStream(stream), mimeType: "application/octet-stream")
                parameters.chunkSize = 256 << 10
                let object = try await service.execute(Files.insert(server, name: "even.bin", upload: parameters))
                #expect(object.json["size"]?.stringValue == "\(count)")
                #expect(server.files.contents(named: "even.bin") == Self.expected(count))
                // A chunk goes out once a byte past it, or the end, is known: never `bytes */total` after the fact.
                #expect(server.files.contentRanges == ["bytes 0-262143/*", "bytes 262144-524287/524288"])
            }
        }
    }

    @Test func anEmptyStreamAndPartialAcknowledgements() async throws {
        try await withTestServer { server in
            try await withCheckedService(configuration: .testing(server.baseURL)) { service in
                let empty = try await service.execute(Files.insert(server, name: "empty.bin", upload: streamed(0)))
                #expect(empty.json["size"] == "0")
                // The server keeps only 100,000 bytes of each chunk: the rest comes from the buffer again.
                let object = try await service.execute(Files.insert(server, name: "partial.bin", upload: streamed(600_000),
                                                                    faults: ["partial": "100000"]))
                #expect(object.json["size"] == "600000")
                #expect(server.files.contents(named: "partial.bin") == Self.expected(600_000))
            }
        }
    }

    @Test func aServerErrorMidStreamIsRecoveredFromTheBuffer() async throws {
        try await withTestServer { server in
            let clock = VirtualClock()
            var configuration = ServiceActor.Configuration.testing(server.baseURL, clock: clock)
            configuration.retry = RetryPolicy(initialDelay: 1...1)
            try await withCheckedService(configuration: configuration) { service in
                let object = try await service.execute(Files.insert(server, name: "retry.bin", upload: streamed(900_000),
                                                                    faults: ["fail": "2:503"]))
                #expect(object.json["size"] == "900000")
                #expect(server.files.contents(named: "retry.bin") == Self.expected(900_000))
                #expect(server.files.contentRanges.contains("bytes */*")) // the status query of unknown length
            }
        }
    }

    @Test func aVanishedSessionCannotRestartAStreamAlreadyPartlySent() async throws {
        try await withTestServer { server in
            try await withCheckedService(configuration: .testing(server.baseURL)) { service in
                let upload = Files.insert(server, name: "gone.bin", upload: streamed(900_000), faults: ["expire": "2"])
                await #expect(throws: UploadError.sessionExpired) { _ = try await service.execute(upload) }
            }
        }
    }

    @Test func theMethodsMaximumSizeIsCheckedAsTheStreamIsRead() async throws {
        try await withTestServer { server in
            try await withCheckedService(configuration: .testing(server.baseURL)) { service in
                var upload = Files.insert(server, name: "big.bin", upload: streamed(900_000))
                upload.mediaUploadLimits = MediaUploadLimits(maxSize: 500_000)
                await #expect(throws: UploadError.mediaTooLarge) { _ = try await service.execute(upload) }
                #expect(server.files.contents(named: "big.bin") == nil)
                await #expect(throws: UploadError.invalidParameters) {
                    var single = streamed(10)
                    single.uploadProtocol = .media
                    _ = try await service.execute(Files.insert(server, name: "single.bin", upload: single))
                }
            }
        }
    }

    @Test func fromAPipeWithAPauseAndAResume() async throws {
        try await withTestServer { server in
            try await withCheckedService(configuration: .testing(server.baseURL)) { service in
                let count = 3 << 20
                // The pipe holds after 1 MiB until the pause is asked for, so the upload cannot finish first.
                let open = LockedValue(false)
                let pipe = TestPattern.pipe(count: count, holdAt: 1 << 20, gate: { open.withLock { $0 } })
                defer { close(pipe) }
                var parameters = UploadParameters(stream: UploadStream(fileDescriptor: pipe), mimeType: "application/octet-stream")
                parameters.chunkSize = 256 << 10
                parameters.adaptiveChunkSize = false
                let task = service.upload(Files.insert(server, name: "pipe.bin", upload: parameters))
                #expect(await eventually(within: 30) { task.currentProgress.bytesSent > 0 })
                task.pause()
                open.withLock { $0 = true }
                #expect(await eventually(within: 30) { task.isPaused })
                let paused = try #require(task.session)
                #expect(paused.totalBytes == nil && paused.file == nil && paused.acknowledgedCRC32C != nil)
                let chunksWhilePaused = server.files.chunkRequestCount
                try await Task.sleep(for: .milliseconds(100))
                #expect(server.files.chunkRequestCount == chunksWhilePaused)
                task.resume()
                let object = try await task.value
                #expect(object.json["size"]?.stringValue == "\(count)")
                #expect(server.files.contents(named: "pipe.bin") == Self.expected(count))
                #expect(server.files.statusQueryCount == 0) // a clean pause knows its offset
            }
        }
    }
}
