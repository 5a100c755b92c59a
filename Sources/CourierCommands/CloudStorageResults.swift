import Courier
import CourierLoad
import Foundation
import GoogleStorage

/// A `gs://bucket/path` that `courier load --output` writes to and `courier load merge` reads from.
///
/// A path ending in `.json` names one object; any other path is a folder, which a run writes
/// `result.json` (or `shard-0003-of-0020.json`) into and a merge reads every `.json` object of.
struct StorageLocation: Equatable, CustomStringConvertible {
    var bucket: String
    var path: String

    /// nil unless `text` starts with `gs://` and names a bucket.
    init?(_ text: String) {
        guard text.hasPrefix("gs://") else { return nil }
        let rest = text.dropFirst(5)
        let bucket = rest.prefix { $0 != "/" }
        guard !bucket.isEmpty else { return nil }
        self.bucket = String(bucket)
        path = String(rest.dropFirst(bucket.count).drop { $0 == "/" })
    }

    var description: String { "gs://\(bucket)/\(path)" }

    var namesOneObject: Bool { path.hasSuffix(".json") }

    /// The folder's prefix: the path with one trailing slash, or nothing for the bucket's root.
    var folder: String { path.isEmpty || path.hasSuffix("/") ? path : path + "/" }

    /// Where a run (or one shard of it) writes its result.
    func objectName(for shard: LoadShard?) throws -> String {
        if namesOneObject {
            guard shard == nil else { throw LoadError.invalidArgument("\(self): a sharded run writes to a gs:// folder, not one object") }
            return path
        }
        guard let shard else { return folder + "result.json" }
        let digits = max(4, String(shard.count).count)
        func padded(_ number: Int) -> String { String(repeating: "0", count: max(0, digits - String(number).count)) + String(number) }
        return folder + "shard-\(padded(shard.index))-of-\(padded(shard.count)).json"
    }
}

/// Load results in Cloud Storage, through Courier's own generated GoogleStorage client.
///
/// Credentials are Application Default Credentials (on GKE, the pod's workload identity through
/// the metadata server). `STORAGE_EMULATOR_HOST` (as Google's own libraries read it) sends
/// everything to an emulator such as fake-gcs-server instead, without credentials.
enum CloudStorageResults {
    /// Makes sure results can be stored before a run spends its time: the emulator's address
    /// reads, or Application Default Credentials are there (the metadata server answers).
    static func checkCredentials(environment: [String: String] = ProcessInfo.processInfo.environment) async throws {
        if try emulatorURL(environment) != nil { return }
        _ = try await ApplicationDefaultCredentials.find(scopes: [Storage.Scope.devstorageReadWrite], environment: environment)
    }

    private static func emulatorURL(_ environment: [String: String]) throws -> URL? {
        guard let emulator = environment["STORAGE_EMULATOR_HOST"], !emulator.isEmpty else { return nil }
        let root = emulator.contains("://") ? emulator : "http://" + emulator
        guard let url = URL(string: root), url.host != nil else {
            throw LoadError.invalidArgument("STORAGE_EMULATOR_HOST \(emulator) is not a host:port or URL")
        }
        return url
    }

    static func withStorage<T: Sendable>(environment: [String: String] = ProcessInfo.processInfo.environment,
                                         _ body: (ServiceActor) async throws -> T) async throws -> T {
        var configuration = ServiceActor.Configuration()
        if let url = try emulatorURL(environment) {
            configuration.queries.rootURL = url
        } else {
            configuration.auth.authorizer = try ApplicationDefaultCredentials.authorizer(scopes: [Storage.Scope.devstorageReadWrite],
                                                                                    environment: environment)
        }
        return try await withService(configuration: configuration, body)
    }

    /// Writes `data` as the result of `shard` (or of a whole run) under `location`; returns the object's `gs://` URL.
    static func write(_ data: Data, to location: StorageLocation, shard: LoadShard?) async throws -> String {
        let name = try location.objectName(for: shard)
        return try await withStorage { service in
            var object = GoogleStorage.Object()
            object.name = name
            object.contentType = "application/json"
            var insert = Storage.Objects.insert(object, bucket: location.bucket,
                                                upload: UploadParameters(data: data, mimeType: "application/json",
                                                                         uploadProtocol: .multipart))
            insert.name = name
            _ = try await service.execute(insert)
            return "gs://\(location.bucket)/\(name)"
        }
    }

    /// Every result under `location`: the one object it names, or each `.json` object in the folder, by name.
    static func read(from location: StorageLocation) async throws -> [(name: String, data: Data)] {
        try await withStorage { service in
            var names: [String]
            if location.namesOneObject {
                names = [location.path]
            } else {
                var list = Storage.Objects.list(bucket: location.bucket)
                list.prefix = location.folder.isEmpty ? nil : location.folder
                list.execution.paging = .fetchAll()
                names = try await service.execute(list).compactMap(\.name).filter { $0.hasSuffix(".json") }.sorted()
            }
            var results: [(name: String, data: Data)] = []
            for name in names {
                let media = Storage.Objects.get(bucket: location.bucket, object: name).makeMediaQuery()
                results.append(("gs://\(location.bucket)/\(name)", try await service.execute(media).data))
            }
            return results
        }
    }
}
