import Courier
import Foundation
import PluginStorage
import CourierTestSupport
import Testing

/// The client CourierGeneratorPlugin generates at build time (target `PluginStorage`, from
/// Cloud Storage's document) against fake-gcs-server: it compiles, and it pages like the
/// committed one. This file imports only the plugin-built module, so every name below is its own.
@Suite struct PluginBuiltClientTests {
    @Test func fetchAllThroughAPluginBuiltClientMergesEveryPage() async throws {
        try await withFakeGCS { gcs in
            var configuration = ServiceActor.Configuration.suite()
            configuration.queries.rootURL = gcs.baseURL
            try await withCheckedService(configuration: configuration) { service in
                var bucket = PluginStorage.Bucket()
                bucket.name = "plugin"
                _ = try await service.execute(Storage.Buckets.insert(bucket, project: "test"))
                for index in 0..<5 {
                    var object = PluginStorage.Object()
                    object.name = "object-\(index)"
                    var insert = Storage.Objects.insert(object, bucket: "plugin",
                                                        upload: UploadParameters(data: Data("\(index)".utf8), mimeType: "text/plain",
                                                                                 uploadProtocol: .multipart))
                    insert.name = "object-\(index)"
                    _ = try await service.execute(insert)
                }
                var list = Storage.Objects.list(bucket: "plugin")
                list.maxResults = 2
                var pages = 0
                for try await _ in service.pages(of: list) { pages += 1 }
                #expect(pages == 3)
                list.execution.paging = .fetchAll()
                let all = try await service.execute(list)
                #expect(all.compactMap(\.name) == (0..<5).map { "object-\($0)" })
                #expect(all.nextPageToken == nil)
            }
        }
    }
}
