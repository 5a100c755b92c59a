import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import GoogleStorage
import Testing

/// Google's Cloud Storage retry conformance cases (`Tests/Conformance/`, pinned), every scenario ×
/// case × method, through `GoogleStorage` on a `ServiceActor`, against the test server's model of
/// storage-testbench, as google-cloud-go's runner runs them against the emulator:
///
/// - the resources a method needs are made first, outside the retry test;
/// - `POST /retry_test` plans the case's instructions for the method;
/// - the method runs once, with `x-retry-test-id` on its query, and with the preconditions
///   google-cloud-go's runner gives when the scenario says `preconditionProvided`;
/// - the case holds when the outcome is what `expectSuccess` says **and** `GET /retry_test/{id}`
///   answers `completed` (every planned fault was consumed).
///
/// `objects.insert` runs three ways (multipart, media, resumable) and `objects.get` three ways
/// (metadata, media into memory, `downloadFile`); the resumable scenario (7) runs its upload from a
/// file and from a stream, and the download scenario (8) as media into memory and `downloadFile`.
@Suite struct RetryConformanceTests {
    struct File: Decodable {
        struct Scenario: Decodable {
            var id: Int
            var description: String
            var cases: [Case]
            var methods: [Method]
            var preconditionProvided: Bool
            var expectSuccess: Bool
        }

        struct Case: Decodable { var instructions: [String] }
        struct Method: Decodable { var name: String; var resources: [String] }

        var retryTests: [Scenario]
    }

    /// How a method is called: most one way, `objects.insert` and `objects.get` several.
    enum Way: String, Sendable {
        case plain, multipart, media, resumable, resumableFile, resumableStream, metadata, mediaIntoMemory, downloadFile
    }

    struct Expanded: Sendable, CustomStringConvertible {
        var scenario: Int
        var instructions: [String]
        var method: String
        var way: Way
        var preconditions: Bool
        var expectSuccess: Bool

        var description: String {
            "scenario \(scenario) \(method)\(way == .plain ? "" : " (\(way.rawValue))") \(instructions)"
        }
    }

    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Conformance/googleapis-conformance-tests/retry_tests.json")

    static func expandedCases() throws -> [Expanded] {
        let file = try JSONDecoder().decode(File.self, from: Data(contentsOf: Self.file))
        return file.retryTests.flatMap { scenario in
            scenario.cases.flatMap { testCase in
                scenario.methods.flatMap { method in
                    ways(method.name, scenario: scenario.id).map { way in
                        Expanded(scenario: scenario.id, instructions: testCase.instructions, method: method.name, way: way,
                                 preconditions: scenario.preconditionProvided, expectSuccess: scenario.expectSuccess)
                    }
                }
            }
        }
    }

    static func ways(_ method: String, scenario: Int) -> [Way] {
        switch method {
        case "storage.objects.insert": scenario == 7 ? [.resumableFile, .resumableStream] : [.multipart, .media, .resumable]
        case "storage.objects.get": scenario == 8 ? [.mediaIntoMemory, .downloadFile] : [.metadata, .mediaIntoMemory, .downloadFile]
        default: [.plain]
        }
    }

    @Test func everyCaseHolds() async throws {
        let cases = try Self.expandedCases()
        #expect(cases.count == 353, "the pinned file expands to 353 cases")
        let testbench = try await StorageTestbench.start()
        defer { Task { await testbench.stop() } }
        var configuration = ServiceActor.Configuration.suite()
        configuration.queries.rootURL = testbench.baseURL
        // The cases test which requests are re-sent, not the waits between them.
        configuration.retry = RetryPolicy(maxRetries: 5, initialDelay: 0...0.005, maxDelay: .milliseconds(20))
        let failures = try await withCheckedService(configuration: configuration) { service in
            try await withThrowingTaskGroup(of: String?.self) { group in
                var failures: [String] = []
                var next = 0
                func add() {
                    let expanded = cases[next]
                    let index = next
                    group.addTask { try await Self.run(expanded, index: index, testbench: testbench, service: service) }
                    next += 1
                }
                while next < min(16, cases.count) { add() }
                while let failure = try await group.next() {
                    if let failure { failures.append(failure) }
                    if next < cases.count { add() }
                }
                return failures
            }
        }
        for failure in failures { Issue.record(Comment(rawValue: failure)) }
        let held = cases.count - failures.count
        print("RetryConformanceTests: \(held)/\(cases.count) retry conformance cases hold")
        #expect(held == cases.count, "\(held)/\(cases.count) retry conformance cases")
        await testbench.stop()
    }

    /// One case: nil when it holds, else what went wrong.
    static func run(_ expanded: Expanded, index: Int, testbench: StorageTestbench, service: ServiceActor) async throws -> String? {
        let resources = Resources(testbench: testbench, index: index, objectSize: expanded.scenario == 8 ? 512 << 10 : 1 << 10)
        let id = try await createRetryTest(expanded, testbench: testbench, service: service)
        let outcome: Result<Void, any Error>
        do {
            try await call(expanded, resources: resources, testID: id, service: service)
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        let completed = try await isCompleted(id, testbench: testbench, service: service)
        var problems: [String] = []
        switch (outcome, expanded.expectSuccess) {
        case (.failure(let error), true): problems.append("failed: \(error)")
        case (.success, false): problems.append("succeeded where it must fail")
        default: break
        }
        if !completed { problems.append("not every instruction was consumed") }
        try? FileManager.default.removeItem(at: resources.scratch)
        return problems.isEmpty ? nil : "\(expanded): " + problems.joined(separator: "; ")
    }

    static func createRetryTest(_ expanded: Expanded, testbench: StorageTestbench, service: ServiceActor) async throws -> String {
        let body = try JSONSerialization.data(withJSONObject: ["instructions": [expanded.method: expanded.instructions],
                                                               "transport": "HTTP"])
        var request = HTTPRequest(method: .post, url: testbench.baseURL.appendingPathComponent("retry_test"), body: .data(body))
        request.headers["Content-Type"] = "application/json"
        let response = try await service.send(request)
        let object = try JSONSerialization.jsonObject(with: response.body) as? [String: Any]
        return try #require(object?["id"] as? String, "POST /retry_test answered \(response.status)")
    }

    static func isCompleted(_ id: String, testbench: StorageTestbench, service: ServiceActor) async throws -> Bool {
        let response = try await service.send(HTTPRequest(url: testbench.baseURL.appendingPathComponent("retry_test/\(id)")))
        let object = try JSONSerialization.jsonObject(with: response.body) as? [String: Any]
        return object?["completed"] as? Bool == true
    }

    /// What a case works on, made before its retry test.
    struct Resources {
        let bucket: String
        let object = "object"
        let objectContents: Data
        let generation: Int64
        let notification: String
        let hmacKey: String
        let entity = "user-test@example.com"
        let scratch: URL

        init(testbench: StorageTestbench, index: Int, objectSize: Int) {
            bucket = "bucket-\(index)"
            testbench.createBucket(bucket, entity: entity)
            objectContents = Data(TestPattern.bytes(count: objectSize))
            generation = testbench.createObject(bucket: bucket, name: object, contents: objectContents, entity: entity)
            notification = testbench.createNotification(bucket: bucket)
            hmacKey = testbench.createHMACKey()
            scratch = FileManager.default.temporaryDirectory.appendingPathComponent("courier-conformance-\(UUID())")
        }
    }

    // MARK: The methods

    static func call(_ expanded: Expanded, resources r: Resources, testID: String, service: ServiceActor) async throws {
        let pre = expanded.preconditions
        /// Executes `convertible` with the test's header.
        func run<Convertible: QueryConvertible>(_ convertible: Convertible) async throws {
            var query = convertible.makeQuery()
            query.headers["x-retry-test-id"] = testID
            _ = try await service.execute(query)
        }
        func acl(_ role: String = "WRITER") -> GoogleStorage.BucketAccessControl {
            var entry = GoogleStorage.BucketAccessControl()
            entry.entity = r.entity
            entry.role = role
            return entry
        }
        func objectACL(_ role: String = "WRITER") -> GoogleStorage.ObjectAccessControl {
            var entry = GoogleStorage.ObjectAccessControl()
            entry.entity = r.entity
            entry.role = role
            return entry
        }
        switch expanded.method {
        case "storage.bucket_acl.get": try await run(Storage.BucketAccessControls.get(bucket: r.bucket, entity: r.entity))
        case "storage.bucket_acl.list": try await run(Storage.BucketAccessControls.list(bucket: r.bucket))
        case "storage.bucket_acl.insert": try await run(Storage.BucketAccessControls.insert(acl(), bucket: r.bucket))
        case "storage.bucket_acl.patch": try await run(Storage.BucketAccessControls.patch(acl(), bucket: r.bucket, entity: r.entity))
        case "storage.bucket_acl.update": try await run(Storage.BucketAccessControls.update(acl(), bucket: r.bucket, entity: r.entity))
        case "storage.bucket_acl.delete": try await run(Storage.BucketAccessControls.delete(bucket: r.bucket, entity: r.entity))
        case "storage.default_object_acl.get": try await run(Storage.DefaultObjectAccessControls.get(bucket: r.bucket, entity: r.entity))
        case "storage.default_object_acl.list": try await run(Storage.DefaultObjectAccessControls.list(bucket: r.bucket))
        case "storage.default_object_acl.insert": try await run(Storage.DefaultObjectAccessControls.insert(objectACL(), bucket: r.bucket))
        case "storage.default_object_acl.patch":
            try await run(Storage.DefaultObjectAccessControls.patch(objectACL(), bucket: r.bucket, entity: r.entity))
        case "storage.default_object_acl.update":
            try await run(Storage.DefaultObjectAccessControls.update(objectACL(), bucket: r.bucket, entity: r.entity))
        case "storage.default_object_acl.delete":
            try await run(Storage.DefaultObjectAccessControls.delete(bucket: r.bucket, entity: r.entity))
        case "storage.object_acl.get": try await run(Storage.ObjectAccessControls.get(bucket: r.bucket, object: r.object, entity: r.entity))
        case "storage.object_acl.list": try await run(Storage.ObjectAccessControls.list(bucket: r.bucket, object: r.object))
        case "storage.object_acl.insert": try await run(Storage.ObjectAccessControls.insert(objectACL(), bucket: r.bucket, object: r.object))
        case "storage.object_acl.patch":
            try await run(Storage.ObjectAccessControls.patch(objectACL(), bucket: r.bucket, object: r.object, entity: r.entity))
        case "storage.object_acl.update":
            try await run(Storage.ObjectAccessControls.update(objectACL(), bucket: r.bucket, object: r.object, entity: r.entity))
        case "storage.object_acl.delete":
            try await run(Storage.ObjectAccessControls.delete(bucket: r.bucket, object: r.object, entity: r.entity))

        case "storage.buckets.get": try await run(Storage.Buckets.get(bucket: r.bucket))
        case "storage.buckets.list": try await run(Storage.Buckets.list(project: "test-project"))
        case "storage.buckets.insert":
            var bucket = GoogleStorage.Bucket()
            bucket.name = r.bucket + "-new"
            try await run(Storage.Buckets.insert(bucket, project: "test-project"))
        case "storage.buckets.delete": try await run(Storage.Buckets.delete(bucket: r.bucket))
        case "storage.buckets.getIamPolicy": try await run(Storage.Buckets.getIamPolicy(bucket: r.bucket))
        case "storage.buckets.testIamPermissions":
            try await run(Storage.Buckets.testIamPermissions(bucket: r.bucket, permissions: ["storage.buckets.get"]))
        case "storage.buckets.lockRetentionPolicy":
            try await run(Storage.Buckets.lockRetentionPolicy(bucket: r.bucket, ifMetagenerationMatch: 1))
        case "storage.buckets.patch", "storage.buckets.update":
            var bucket = GoogleStorage.Bucket()
            bucket.name = r.bucket
            if expanded.method.hasSuffix("patch") {
                var patch = Storage.Buckets.patch(bucket, bucket: r.bucket)
                if pre { patch.ifMetagenerationMatch = 1 }
                try await run(patch)
            } else {
                var update = Storage.Buckets.update(bucket, bucket: r.bucket)
                if pre { update.ifMetagenerationMatch = 1 }
                try await run(update)
            }
        case "storage.buckets.setIamPolicy":
            // As a user does: read the policy, change it, send it back with the etag it came with.
            var policy = try await service.execute(Storage.Buckets.getIamPolicy(bucket: r.bucket))
            if !pre { policy.json["etag"] = nil }
            try await run(Storage.Buckets.setIamPolicy(policy, bucket: r.bucket))

        case "storage.hmacKey.create":
            try await run(Storage.Projects.HmacKeys.create(projectId: "test-project", serviceAccountEmail: "sa@example.com"))
        case "storage.hmacKey.get": try await run(Storage.Projects.HmacKeys.get(projectId: "test-project", accessId: r.hmacKey))
        case "storage.hmacKey.list": try await run(Storage.Projects.HmacKeys.list(projectId: "test-project"))
        case "storage.hmacKey.delete": try await run(Storage.Projects.HmacKeys.delete(projectId: "test-project", accessId: r.hmacKey))
        case "storage.hmacKey.update":
            var key = try await service.execute(Storage.Projects.HmacKeys.get(projectId: "test-project", accessId: r.hmacKey))
            key.json["state"] = .string("INACTIVE")
            if !pre { key.json["etag"] = nil }
            try await run(Storage.Projects.HmacKeys.update(key, projectId: "test-project", accessId: r.hmacKey))

        case "storage.notifications.get": try await run(Storage.Notifications.get(bucket: r.bucket, notification: r.notification))
        case "storage.notifications.list": try await run(Storage.Notifications.list(bucket: r.bucket))
        case "storage.notifications.delete": try await run(Storage.Notifications.delete(bucket: r.bucket, notification: r.notification))
        case "storage.notifications.insert":
            var notification = GoogleStorage.Notification()
            notification.topic = "projects/test-project/topics/t"
            notification.payloadFormat = "JSON_API_V1"
            try await run(Storage.Notifications.insert(notification, bucket: r.bucket))

        case "storage.serviceaccount.get": try await run(Storage.Projects.ServiceAccount.get(projectId: "test-project"))

        case "storage.objects.list": try await run(Storage.Objects.list(bucket: r.bucket))
        case "storage.objects.delete":
            var delete = Storage.Objects.delete(bucket: r.bucket, object: r.object)
            if pre { delete.ifGenerationMatch = r.generation }
            try await run(delete)
        case "storage.objects.patch", "storage.objects.update":
            var object = GoogleStorage.Object()
            object.metadata = ["conformance": "yes"]
            if expanded.method.hasSuffix("patch") {
                var patch = Storage.Objects.patch(object, bucket: r.bucket, object: r.object)
                if pre { patch.ifMetagenerationMatch = 1 }
                try await run(patch)
            } else {
                var update = Storage.Objects.update(object, bucket: r.bucket, object: r.object)
                if pre { update.ifMetagenerationMatch = 1 }
                try await run(update)
            }
        case "storage.objects.compose":
            var request = GoogleStorage.ComposeRequest()
            var source = GoogleStorage.ComposeRequest.SourceObjects()
            source.name = r.object
            request.sourceObjects = [source]
            var compose = Storage.Objects.compose(request, destinationBucket: r.bucket, destinationObject: "composed")
            if pre { compose.ifGenerationMatch = 0 }
            try await run(compose)
        case "storage.objects.copy":
            var copy = Storage.Objects.copy(GoogleStorage.Object(), sourceBucket: r.bucket, sourceObject: r.object,
                                            destinationBucket: r.bucket, destinationObject: "copied")
            if pre { copy.ifGenerationMatch = 0 }
            try await run(copy)
        case "storage.objects.rewrite":
            var rewrite = Storage.Objects.rewrite(GoogleStorage.Object(), sourceBucket: r.bucket, sourceObject: r.object,
                                                  destinationBucket: r.bucket, destinationObject: "rewritten")
            if pre { rewrite.ifGenerationMatch = 0 }
            try await run(rewrite)
        case "storage.objects.insert":
            try await insert(expanded, resources: r, testID: testID, service: service)
        case "storage.objects.get":
            try await get(expanded.way, resources: r, testID: testID, service: service)
        default:
            Issue.record("the runner does not know \(expanded.method)")
            throw CancellationError()
        }
    }

    static func insert(_ expanded: Expanded, resources r: Resources, testID: String, service: ServiceActor) async throws {
        // Large enough to cross the 8 MiB the resumable scenario's faults wait for.
        let contents = Data(TestPattern.bytes(count: expanded.scenario == 7 ? 9 << 20 : 300 << 10))
        let parameters: UploadParameters
        switch expanded.way {
        case .multipart: parameters = UploadParameters(data: contents, mimeType: "application/octet-stream", uploadProtocol: .multipart)
        case .media: parameters = UploadParameters(data: contents, mimeType: "application/octet-stream", uploadProtocol: .media)
        case .resumable: parameters = UploadParameters(data: contents, mimeType: "application/octet-stream")
        case .resumableFile:
            try contents.write(to: r.scratch)
            parameters = UploadParameters(file: r.scratch, mimeType: "application/octet-stream")
        default:
            let chunks = AsyncStream<Data> { continuation in
                for start in stride(from: 0, to: contents.count, by: 1 << 20) {
                    continuation.yield(contents.subdata(in: start..<min(start + (1 << 20), contents.count)))
                }
                continuation.finish()
            }
            parameters = UploadParameters(stream: UploadStream(chunks), mimeType: "application/octet-stream")
        }
        var object = GoogleStorage.Object()
        object.name = "uploaded"
        var insert = Storage.Objects.insert(object, bucket: r.bucket, upload: parameters)
        insert.name = "uploaded"
        if expanded.preconditions { insert.ifGenerationMatch = 0 }
        var query = insert.makeQuery()
        query.headers["x-retry-test-id"] = testID
        let stored = try await service.execute(query)
        #expect(stored.size == UInt64(contents.count), "\(expanded)")
    }

    static func get(_ way: Way, resources r: Resources, testID: String, service: ServiceActor) async throws {
        let get = Storage.Objects.get(bucket: r.bucket, object: r.object)
        switch way {
        case .metadata:
            var query = get.makeQuery()
            query.headers["x-retry-test-id"] = testID
            _ = try await service.execute(query)
        case .mediaIntoMemory:
            var query = get.makeMediaQuery()
            query.headers["x-retry-test-id"] = testID
            let media = try await service.execute(query)
            #expect(media.data == r.objectContents, "the media arrived whole")
        default:
            var query = get.makeMediaQuery()
            query.headers["x-retry-test-id"] = testID
            _ = try await service.downloadFile(query, to: r.scratch)
            #expect(try Data(contentsOf: r.scratch) == r.objectContents, "the file holds the object")
        }
    }
}
