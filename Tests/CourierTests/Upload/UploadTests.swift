@testable import Courier
import CourierSync
import CourierTestServer
import CourierTesting
import Foundation
import Glibc
import Subprocess
import Synchronization
import CourierTestSupport
import Testing

@Suite struct ResumableUploadTests {
    func uploading(_ size: Int, chunk: Int = 256 << 10, faults: [String: String] = [:],
                   configure: (inout UploadParameters) -> Void = { _ in },
                   check: (TestServer, ServiceActor, UploadTask<GenericObject>, PatternFile) async throws -> Void) async throws {
        let file = try PatternFile(size: size)
        defer { file.remove() }
        try await withTestServer { server in
            let clock = VirtualClock()
            var configuration = ServiceActor.Configuration.testing(server.baseURL, clock: clock)
            configuration.retry = RetryPolicy(initialDelay: 1...1)
            try await withCheckedService(configuration: configuration) { service in
                var parameters = UploadParameters(file: file.url, mimeType: "application/octet-stream")
                parameters.chunkSize = chunk
                configure(&parameters)
                let task = service.upload(Files.insert(server, name: file.url.lastPathComponent, upload: parameters, faults: faults))
                try await check(server, service, task, file)
            }
        }
    }

    @Test func aFileInChunksArrivesByteIdenticalWithProgress() async throws {
        try await uploading(900_000, configure: { $0.adaptiveChunkSize = false }) { server, _, task, file in
            let seen = LockedValue<[Int64]>([])
            let watcher = Task { for await progress in task.progress { seen.withLock { $0.append(progress.bytesSent) } } }
            let object = try await task.value
            _ = await watcher.value
            #expect(object.json["size"] == "900000")
            #expect(server.files.contents(named: file.url.lastPathComponent) == file.contents)
            #expect(server.files.chunkRequestCount == 4) // 3 × 256 KiB + the rest
            let values = seen.withLock { $0 }
            #expect(values.last == 900_000)
            #expect(values == values.sorted())
            #expect(task.session == nil) // done: nothing left to resume
        }
    }

    @Test func chunksGrowWithTheMeasuredThroughput() async throws {
        try await uploading(12 << 20) { server, _, task, file in
            let object = try await task.value
            #expect(object.json["size"]?.stringValue == "\(12 << 20)")
            #expect(server.files.contents(named: file.url.lastPathComponent) == file.contents)
            // 48 chunks of 256 KiB at a fixed size; loopback is fast, so they grow (4× a step at most).
            let sizes = server.files.contentRanges.compactMap { range -> Int? in
                let bounds = range.dropFirst("bytes ".count).split(separator: "/")[0].split(separator: "-").compactMap { Int($0) }
                return bounds.count == 2 ? bounds[1] - bounds[0] + 1 : nil
            }
            #expect(sizes.count < 48 && sizes.count >= 2)
            #expect(sizes.allSatisfy { $0 % (256 << 10) == 0 || $0 == sizes.last })
            #expect(zip(sizes, sizes.dropFirst()).dropLast().allSatisfy { $1 <= $0 * 4 })
        }
    }

    @Test func dataSourcesToo() async throws {
        try await withTestServer { server in
            try await withCheckedService(configuration: .testing(server.baseURL)) { service in
                let bytes = Data(TestPattern.bytes(count: 300_000))
                var parameters = UploadParameters(data: bytes, mimeType: "application/octet-stream")
                parameters.chunkSize = 256 << 10
                let object = try await service.execute(Files.insert(server, name: "data.bin", upload: parameters))
                #expect(object.json["size"] == "300000")
                #expect(server.files.contents(named: "data.bin") == bytes)
            }
        }
    }

    @Test func threeOhEightsThatAcceptOnlyPartOfAChunk() async throws {
        try await uploading(700_000, faults: ["partial": "100000"]) { server, _, task, file in
            _ = try await task.value
            #expect(server.files.contents(named: file.url.lastPathComponent) == file.contents)
            #expect(server.files.chunkRequestCount == 7) // 100,000 bytes kept per request
            #expect(server.files.statusQueryCount == 0)
        }
    }

    /// A server that keeps nothing it is sent answers every chunk with a 308 and no `Range`.
    /// Found by FuzzResponse: the upload sent its first chunk again and again, for ever. Now it
    /// fails after five chunks in a row that took the server no further.
    @Test func aServerThatKeepsNothingEndsTheUploadAfterFiveChunks() async throws {
        try await uploading(700_000, faults: ["partial": "0"]) { server, _, task, _ in
            await #expect(throws: UploadError.protocolViolation) { try await task.value }
            #expect(server.files.chunkRequestCount == UploadStateMachine.maxChunksWithoutProgress)
            #expect(server.files.contentRanges.allSatisfy { $0.hasPrefix("bytes 0-") }, "the first chunk, each time")
        }
    }

    @Test func aServerErrorOnAChunkLeadsToAStatusQueryAndContinues() async throws {
        try await uploading(900_000, faults: ["fail": "2:503"]) { server, _, task, file in
            _ = try await task.value
            #expect(server.files.contents(named: file.url.lastPathComponent) == file.contents)
            #expect(server.files.statusQueryCount == 1)
        }
    }

    @Test func aDroppedConnectionMidChunkIsRecovered() async throws {
        try await uploading(900_000, faults: ["drop": "100000"]) { server, _, task, file in
            _ = try await task.value
            #expect(server.files.contents(named: file.url.lastPathComponent) == file.contents)
            #expect(server.files.statusQueryCount == 1)
        }
    }

    @Test func anExpiredSessionRestartsFromZero() async throws {
        try await uploading(900_000, faults: ["expire": "2"]) { server, _, task, file in
            _ = try await task.value
            #expect(server.files.contents(named: file.url.lastPathComponent) == file.contents)
        }
        try await uploading(900_000, faults: ["expire": "2"], configure: { $0.restartWhenSessionExpires = false }) { _, _, task, _ in
            await #expect(throws: UploadError.sessionExpired) { try await task.value }
        }
    }

    @Test func pauseLetsTheChunkFinishAndResumeNeedsNoStatusQuery() async throws {
        // Fixed chunks: growing ones could make the chunk in flight the last, which no pause can stop.
        try await uploading(8 << 20, configure: { $0.adaptiveChunkSize = false }) { server, _, task, file in
            // After a chunk is acknowledged (32 of them: the pause lands well before the end), so
            // that the session the pause keeps is known.
            #expect(await eventually { task.currentProgress.bytesSent > 0 })
            task.pause()
            #expect(await eventually { task.isPaused })
            let received = task.currentProgress.bytesSent
            #expect(received < 8 << 20)
            try await Task.sleep(for: .milliseconds(100))
            #expect(task.currentProgress.bytesSent == received) // nothing moves while paused
            #expect(task.session != nil)
            task.resume()
            _ = try await task.value
            #expect(server.files.contents(named: file.url.lastPathComponent) == file.contents)
            #expect(server.files.statusQueryCount == 0)
        }
    }

    @Test func cancelStopsTheUpload() async throws {
        try await uploading(4_000_000) { _, service, task, _ in
            task.pause()
            #expect(await eventually { task.isPaused })
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            await expectNoLeaks(service)
        }
    }

    @Test func multipartAndMediaUploads() async throws {
        try await withTestServer { server in
            try await withCheckedService(configuration: .testing(server.baseURL)) { service in
                let file = try PatternFile(size: 123_457)
                defer { file.remove() }
                let related = try await service.execute(Files.insert(
                    server, name: "ignored", upload: UploadParameters(file: file.url, mimeType: "image/png", uploadProtocol: .multipart),
                    metadata: ["name": "from-metadata.png", "metadata": ["owner": "me"]]))
                #expect(related.json["name"] == "from-metadata.png")
                #expect(related.json["contentType"] == "image/png")
                #expect(related.json["metadata"]?["owner"] == "me")
                #expect(server.files.contents(named: "from-metadata.png") == file.contents)

                let media = try await service.execute(Files.insert(
                    server, name: "plain.bin", upload: UploadParameters(data: Data("media bytes".utf8), mimeType: "text/plain", uploadProtocol: .media)))
                #expect(media.json["size"] == "11")
                #expect(server.files.contents(named: "plain.bin") == Data("media bytes".utf8))
            }
        }
    }

    /// A single-shot upload whose 200 was cut: no session can read the object again, so the
    /// error says it may be stored (a caller must not repeat the write blindly).
    @Test(arguments: [UploadParameters.UploadProtocol.multipart, .media])
    func aCutAnswerToASingleShotUploadSaysTheObjectMayExist(uploadProtocol: UploadParameters.UploadProtocol) async throws {
        try await withTestServer { server in
            try await withCheckedService(configuration: .testing(server.baseURL)) { service in
                let bytes = Data("stored all the same".utf8)
                let query = Files.insert(server, name: "cut.bin", upload: UploadParameters(data: bytes, mimeType: "text/plain", uploadProtocol: uploadProtocol),
                                         faults: ["cut": "10"], metadata: ["name": "cut.bin"])
                let error = await #expect(throws: QueryError.malformedResponse) { try await service.execute(query) }
                #expect(error?.message.hasPrefix("the server answered 200, so the object may be stored") == true, "\(String(describing: error))")
                #expect(server.files.contents(named: "cut.bin") == bytes)
            }
        }
    }

    @Test func anIntegrityMismatchIsATypedError() async throws {
        let mock = MockTransport()
        mock.on(.post, path: "/upload/files/v1/files") { _ in
            HTTPResponse(status: 200, headers: ["Location": "https://mock.invalid/session/1"], url: URL(string: "https://mock.invalid/")!)
        }
        mock.on(.put, path: "/session/1") { _ in
            try .json(["id": "f", "size": "5", "md5Hash": "XUFAKrxLKna5cZ2REBfFkg==", "crc32c": "AAAAAA=="])
        }
        var configuration = ServiceActor.Configuration.suite()
        configuration.testing.handler = mock.handler
        try await withCheckedService(configuration: configuration) { service in
            var query = Query<GenericObject>(api: TestAPIs.notes, name: "files.insert", method: .post, path: "files")
            query.uploadPath = "/upload/files/v1/files"
            query.upload = UploadParameters(data: Data("other".utf8), mimeType: "text/plain")
            let error = await #expect(throws: IntegrityError.self) { try await service.execute(query) }
            #expect(error?.message.contains("md5") == true)
        }
    }

    @Test func uploadsAreNotAllowedInWireBatches() async throws {
        try await withTestServer { server in
            try await withCheckedService(configuration: .testing(server.baseURL)) { service in
                let query = Files.insert(server, name: "x", upload: UploadParameters(data: Data("x".utf8), mimeType: "text/plain"))
                let results = try await service.executeBatch(QueryBatch(query))
                #expect(results.failures[query.requestID] as? BatchError == .notAllowed)
            }
        }
    }
}

/// Separate processes: a gibibyte with flat memory, a stream from a pipe with bounded memory, and
/// crashes in the middle of an upload (of a file, and of a pipe). They run in the suite's second,
/// serial phase (`HEAVY_TESTS` in the Makefile): a child process that waits for the test process's
/// server must not share the parallel phase with other tests that run processes.
@Suite(.serialized) struct UploadProcessTests {
    struct Report: Decodable {
        var size: String
        var md5Hash: String
        var crc32c: String
        var baselineKiB: Int
        var peakKiB: Int
    }

    static var helper: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("CourierTestHelper")
    }

    @Test(.timeLimit(.minutes(5)))
    func aGibibyteUploadKeepsPeakRSSUnder64MiB() async throws {
        let size = 1 << 30
        let file = try await onOwnThread { try PatternFile(size: size, name: "gib") }
        defer { file.remove() }
        let local = try await onOwnThread {
            let expected = ChecksumAccumulator()
            try ChecksumAccumulator.file(file.url, range: 0..<Int64(size), into: expected)
            return expected.finish()
        }
        try await withTestServer { server in
            let run = try await runProcess(Self.helper, ["upload", server.baseURL.absoluteString, file.url.path, "\(8 << 20)", "-"])
            #expect(run.status == 0, "\(run.error)")
            let report = try JSONDecoder().decode(Report.self, from: run.output)
            #expect(report.size == "\(size)")
            #expect(report.md5Hash == local.md5Base64)
            #expect(report.crc32c == local.crc32cBase64)
            let peakMiB = Double(report.peakKiB) / 1024
            print("1 GiB upload: peak RSS \(peakMiB) MiB (baseline \(report.baselineKiB / 1024) MiB)")
            #expect(peakMiB < 64)
        }
    }

    @Test(.timeLimit(.minutes(5)))
    func aStreamFromAPipeKeepsMemoryBounded() async throws {
        let size = 256 << 20
        try await withTestServer { server in
            let run = try await runProcess(Self.helper, ["upload-pipe", server.baseURL.absoluteString, "piped-256m", "\(size)", "-", "adaptive"])
            #expect(run.status == 0, "\(run.error)")
            let report = try JSONDecoder().decode(Report.self, from: run.output)
            #expect(report.size == "\(size)")
            let expected = ChecksumAccumulator()
            var offset = 0
            while offset < size {
                expected.update(Data(TestPattern.bytes(count: min(8 << 20, size - offset), offset: offset)))
                offset += 8 << 20
            }
            #expect(report.md5Hash == expected.finish().md5Base64)
            // Chunks grow to 16 MiB; the chunk in flight, the one read ahead and a copy for the request.
            let growthMiB = Double(report.peakKiB - report.baselineKiB) / 1024
            print("256 MiB from a pipe: peak RSS \(Double(report.peakKiB) / 1024) MiB (baseline \(report.baselineKiB / 1024) MiB)")
            #expect(growthMiB < 64)
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func fromAPipeKilledWithSignalNineThenResumed() async throws {
        let count = 6 << 20
        let sessionFile = FileManager.default.temporaryDirectory.appendingPathComponent("courier-stream-session-\(UUID()).json")
        defer { try? FileManager.default.removeItem(at: sessionFile) }
        let server = try await TestServer.start(latency: .milliseconds(40))
        do {
            let (_, status) = try await withChildProcess(Self.helper.path, [
                "upload-pipe", server.baseURL.absoluteString, "piped.bin", "\(count)", sessionFile.path,
            ]) { pid in
                #expect(await eventually(within: 30) { ((try? UploadSession(contentsOf: sessionFile))?.offset ?? 0) >= 1 << 20 })
                kill(pid, SIGKILL)
            }
            #expect(status == .signaled(SIGKILL))
            let saved = try UploadSession(contentsOf: sessionFile)
            #expect(saved.totalBytes == nil && saved.offset > 0 && saved.offset < count)
            let checksumOfSaved = ChecksumAccumulator(md5: false)
            checksumOfSaved.update(StreamUploadTests.expected(Int(saved.offset)))
            #expect(saved.acknowledgedCRC32C == checksumOfSaved.finish().crc32c)

            try await withCheckedService(configuration: .testing(server.baseURL)) { service in
                // The rest of the stream, from the saved offset: the server may hold more (the chunk in flight).
                let pipe = TestPattern.pipe(count: count - Int(saved.offset), offset: Int(saved.offset))
                defer { close(pipe) }
                var parameters = UploadParameters(stream: UploadStream(fileDescriptor: pipe), mimeType: "application/octet-stream")
                parameters.sessionFile = sessionFile
                let object = try await service.resumeUpload(from: sessionFile, query: Files.insert(server, name: "piped.bin", upload: parameters)).value
                #expect(server.files.contents(named: "piped.bin") == StreamUploadTests.expected(count))
                let whole = ChecksumAccumulator()
                whole.update(StreamUploadTests.expected(count))
                #expect(object.json["crc32c"]?.stringValue == whole.finish().crc32cBase64) // checked on both sides
                #expect(server.files.statusQueryCount == 1)
                #expect(!FileManager.default.fileExists(atPath: sessionFile.path))
            }
        }
        await server.stop()
    }

    @Test(.timeLimit(.minutes(2)))
    func killNineThenResumeInANewProcessIsByteIdentical() async throws {
        let file = try PatternFile(size: 6 << 20, name: "crash")
        defer { file.remove() }
        let sessionFile = FileManager.default.temporaryDirectory.appendingPathComponent("courier-session-\(UUID()).json")
        defer { try? FileManager.default.removeItem(at: sessionFile) }
        // Each request waits 40 ms on the server, so the upload takes long enough to be killed midway.
        let server = try await TestServer.start(latency: .milliseconds(40))
        do {
            let (_, status) = try await withChildProcess(Self.helper.path, [
                "upload", server.baseURL.absoluteString, file.url.path, "\(256 << 10)", sessionFile.path,
            ]) { pid in
                // Wait until a few chunks are acknowledged and saved, then kill it without warning.
                #expect(await eventually(within: 30) { ((try? UploadSession(contentsOf: sessionFile))?.offset ?? 0) >= 1 << 20 })
                kill(pid, SIGKILL)
            }
            #expect(status == .signaled(SIGKILL))
            let saved = try UploadSession(contentsOf: sessionFile)
            #expect(saved.offset > 0 && saved.offset < saved.totalBytes ?? 0)

            try await withCheckedService(configuration: .testing(server.baseURL)) { service in
                var parameters = UploadParameters(file: file.url, mimeType: "application/octet-stream")
                parameters.sessionFile = sessionFile
                let query = Files.insert(server, name: file.url.lastPathComponent, upload: parameters)
                let object = try await service.resumeUpload(from: sessionFile, query: query).value
                let stored = try #require(server.files.contents(named: file.url.lastPathComponent))
                #expect(stored == file.contents)
                let local = ChecksumAccumulator()
                local.update(file.contents)
                let sums = local.finish()
                #expect(object.json["md5Hash"]?.stringValue == sums.md5Base64)
                #expect(object.json["crc32c"]?.stringValue == sums.crc32cBase64)
                #expect(server.files.statusQueryCount == 1) // the new process asked where to continue
                #expect(!FileManager.default.fileExists(atPath: sessionFile.path))
            }
        }
        await server.stop()
    }

    /// A session is the caller's to keep: offsets outside its bytes are refused before anything
    /// is sent, and a chunk size of Int64.max (whose read-ahead, twice a chunk, overflowed) is
    /// held at 5 TiB, so the upload completes.
    @Test func aDamagedSessionIsRefusedOrHeldWithinBounds() async throws {
        try await withTestServer { server in
            let file = try PatternFile(size: 600_000)
            defer { file.remove() }
            func session(offset: Int64, chunkSize: Int64 = 262_144) throws -> UploadSession {
                UploadSession(sessionURI: server.url("/upload/files/v1/files?upload_id=none"), offset: offset, totalBytes: 600_000,
                              chunkSize: chunkSize, mimeType: "application/octet-stream",
                              file: try UploadSession.FileIdentity(of: file.url), queryName: "files.insert", verifyIntegrity: true)
            }
            try await withCheckedService(configuration: .testing(server.baseURL)) { service in
                let query = Files.insert(server, name: "damaged", upload: UploadParameters(file: file.url, mimeType: "application/octet-stream"))
                for offset in [-1, 600_001, Int64.max] as [Int64] {
                    await #expect(throws: UploadError.invalidParameters) { try await service.resumeUpload(try session(offset: offset), query: query).value }
                }
                #expect(server.files.chunkRequestCount == 0 && server.files.statusQueryCount == 0)
                // A chunk size past any object: the server has forgotten the session, so the
                // upload starts again, with chunks held at 5 TiB (here: the whole file at once).
                let uploaded = try await service.resumeUpload(try session(offset: 0, chunkSize: .max), query: query).value
                #expect(uploaded.json["name"]?.stringValue == "damaged")
                #expect(server.files.contents(named: "damaged") == file.contents)
            }
        }
    }

    /// A session's URI is caller input too, and its chunks carry the service's credentials: one
    /// that points anywhere but this upload's host (another port, another host, another scheme)
    /// or an https host of the service's universe is refused before anything is sent. The test
    /// server's raw fault listener, on another port of the same address, sees nothing.
    @Test func aSessionElsewhereThanTheUploadsHostIsRefused() async throws {
        try await withTestServer { server in
            let file = try PatternFile(size: 300_000)
            defer { file.remove() }
            let identity = try UploadSession.FileIdentity(of: file.url)
            func session(_ uri: URL) -> UploadSession {
                UploadSession(sessionURI: uri, offset: 0, totalBytes: 300_000, chunkSize: 262_144, mimeType: "application/octet-stream",
                              file: identity, queryName: "files.insert", verifyIntegrity: true)
            }
            var configuration = ServiceActor.Configuration.testing(server.baseURL)
            configuration.auth.authorizer = BearerTokenAuthorizer(token: "TOKEN-s3kr1t")
            try await withCheckedService(configuration: configuration) { service in
                let query = Files.insert(server, name: "elsewhere", upload: UploadParameters(file: file.url, mimeType: "application/octet-stream"))
                let reached = server.counters.requests // the main listener's and the raw fault listener's
                let path = "/upload/files/v1/files?upload_id=none"
                var http = URLComponents(url: server.baseURL, resolvingAgainstBaseURL: false)!
                http.scheme = "https"
                for uri in [URL(string: server.faultURL.absoluteString + path)!, URL(string: "https://evil.example" + path)!,
                            URL(string: "http://storage.googleapis.com" + path)!, http.url!.appendingPathComponent("upload")] {
                    let error = await #expect(throws: UploadError.invalidParameters) {
                        try await service.resumeUpload(session(uri), query: query).value
                    }
                    #expect(error?.message.contains("s3kr1t") == false)
                }
                #expect(server.counters.requests == reached)
                #expect(server.files.chunkRequestCount == 0 && server.files.statusQueryCount == 0)
                // At the upload's own host it goes ahead (the server has forgotten it: a new session).
                let uploaded = try await service.resumeUpload(session(server.url(path)), query: query).value
                #expect(uploaded.json["name"]?.stringValue == "elsewhere")
            }
            // In the service's universe over https, a regional endpoint say, it is the upload's to use.
            let root = URL(string: "https://storage.googleapis.com/")!
            try ResumableUpload<Note>.checkSessionHost(URL(string: "https://storage.us-east1.rep.googleapis.com/upload?upload_id=x")!,
                                                             root: root, universe: UniverseDomain.googleDefault)
            #expect(throws: UploadError.invalidParameters) {
                try ResumableUpload<Note>.checkSessionHost(URL(string: "https://storage.evilgoogleapis.com/upload")!, root: root,
                                                                 universe: UniverseDomain.googleDefault)
            }
        }
    }

    /// Any process can set a file's time past 2262 (`touch -d 2400-01-01`): its identity in
    /// nanoseconds overflowed Int64 and stopped the process before the upload began. Now held at
    /// Int64's ends, and such a file uploads, its session saved and removed as any other's.
    /// (Before 1678 the same held the other way; ext4 keeps times from 1901 only, so only the
    /// arithmetic shows that end.)
    @Test func aFileDatedPastWhatNanosecondsHoldUploads() async throws {
        let file = try PatternFile(size: 600_000)
        defer { file.remove() }
        // 2413-08-20, which ext4 keeps (to 2446).
        var times = [timespec(tv_sec: 14_000_000_000, tv_nsec: 5), timespec(tv_sec: 14_000_000_000, tv_nsec: 5)]
        #expect(utimensat(AT_FDCWD, file.url.path, &times, 0) == 0)
        #expect(try UploadSession.FileIdentity(of: file.url).modifiedNanoseconds == .max)
        #expect(UploadSession.FileIdentity.nanoseconds(seconds: 1_700_000_000, nanoseconds: 5) == 1_700_000_000_000_000_005)
        #expect(UploadSession.FileIdentity.nanoseconds(seconds: -20_000_000_000, nanoseconds: 5) == .min)
        #expect(UploadSession.FileIdentity.nanoseconds(seconds: Int64.max / 1_000_000_000, nanoseconds: 999_999_999) == .max)
        let sessionFile = FileManager.default.temporaryDirectory.appendingPathComponent("courier-dated-\(UUID()).session")
        defer { try? FileManager.default.removeItem(at: sessionFile) }
        try await withTestServer { server in
            try await withCheckedService(configuration: .testing(server.baseURL)) { service in
                var parameters = UploadParameters(file: file.url, mimeType: "application/octet-stream")
                parameters.sessionFile = sessionFile
                parameters.chunkSize = 262_144
                _ = try await service.upload(Files.insert(server, name: "dated", upload: parameters)).value
                #expect(server.files.contents(named: "dated") == file.contents)
            }
        }
    }

    @Test func aChangedFileIsRefused() async throws {
        try await withTestServer { server in
            let file = try PatternFile(size: 600_000)
            defer { file.remove() }
            // A session saved while uploading this file...
            let session = UploadSession(sessionURI: server.url("/upload/files/v1/files?upload_id=none"), offset: 262_144,
                                        totalBytes: 600_000, chunkSize: 262_144, mimeType: "application/octet-stream",
                                        file: try UploadSession.FileIdentity(of: file.url), queryName: "files.insert",
                                        verifyIntegrity: true)
            // ...then the file changes (same size, new bytes) before the resume.
            let handle = try FileHandle(forWritingTo: file.url)
            try handle.write(contentsOf: Data("changed".utf8))
            try handle.close()
            try await withCheckedService(configuration: .testing(server.baseURL)) { service in
                let query = Files.insert(server, name: "changing", upload: UploadParameters(file: file.url, mimeType: "application/octet-stream"))
                await #expect(throws: UploadError.fileChanged) { try await service.resumeUpload(session, query: query).value }
            }
            #expect(server.files.chunkRequestCount == 0 && server.files.statusQueryCount == 0) // refused before sending
        }
    }
}
