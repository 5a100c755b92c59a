// Written by hand (not generated): parallel composite uploads, as `gcloud storage cp` does them.
import Courier
import Foundation

/// How ``Courier/ServiceActor/uploadObject(from:bucket:metadata:mimeType:composite:ifGenerationMatch:)``
/// uploads a large file as parallel parts composed on the server (`objects.compose`), as
/// `gcloud storage cp` does above `parallel_composite_upload_threshold`.
///
/// Trade-offs, as Cloud Storage documents them: a composite object has a CRC32C but **no MD5**
/// (`md5Hash` is absent, so tools that check MD5 cannot); downloading it with a client that
/// cannot compute CRC32C loses integrity checking; the temporary parts are billed while they
/// exist, and in a bucket with a retention policy or Autoclass they may not be deletable at once;
/// the parts count as operations. Opt in where the bandwidth wins matter.
public struct ParallelCompositeUpload: Sendable, Hashable {
    /// Files at least this large are split: 150 MiB, gcloud's default.
    public var threshold: Int64
    /// Parts at most: 32, what one `compose` takes.
    public var maximumParts: Int
    /// Parts at least this large: 32 MiB.
    public var minimumPartSize: Int64
    /// Parts uploading at once: 4.
    public var concurrency: Int
    /// Where the parts live until they are composed and deleted: `courier-tmp/parallel-composite/`.
    public var temporaryPrefix: String

    public init(threshold: Int64 = 150 << 20, maximumParts: Int = 32, minimumPartSize: Int64 = 32 << 20, concurrency: Int = 4,
                temporaryPrefix: String = "courier-tmp/parallel-composite/") {
        self.threshold = threshold
        self.maximumParts = maximumParts
        self.minimumPartSize = minimumPartSize
        self.concurrency = concurrency
        self.temporaryPrefix = temporaryPrefix
    }

    /// The parts of a file of `size` bytes: near-equal ranges in order; nil for one upload.
    public func ranges(size: Int64) -> [Range<Int64>]? {
        guard size >= threshold else { return nil }
        let count = Int(min(Int64(min(maximumParts, 32)), max(1, size / max(1, minimumPartSize))))
        guard count > 1 else { return nil }
        return ByteRanges.split(size, into: count)
    }
}

extension ServiceActor {
    /// Uploads `file` as the object `metadata.name` in `bucket`. Below the ``ParallelCompositeUpload``
    /// threshold (or with `composite` nil, the default) it is one resumable upload; above it, the
    /// file goes up as parts in parallel (each a resumable upload that sends its checksums), is
    /// composed on the server, the parts are deleted (after a failure or cancellation too), and
    /// the final object's CRC32C is checked against the file's.
    ///
    /// - Throws: ``IntegrityError`` if the composed object's CRC32C differs (the object is then
    ///   deleted), an `APIError` or `TransportError` from a part, the compose or a precondition.
    public nonisolated func uploadObject(from file: URL, bucket: String, metadata: GoogleStorage.Object,
                                         mimeType: String = "application/octet-stream",
                                         composite: ParallelCompositeUpload? = nil,
                                         ifGenerationMatch: Int64? = nil) async throws -> GoogleStorage.Object {
        guard let name = metadata.name else { throw UploadError.invalidParameters }
        let size = ((try FileManager.default.attributesOfItem(atPath: file.path)[.size]) as? NSNumber)?.int64Value ?? 0
        guard let composite, let ranges = composite.ranges(size: size) else {
            var insert = Storage.Objects.insert(metadata, bucket: bucket, upload: UploadParameters(file: file, mimeType: mimeType))
            insert.name = name
            insert.ifGenerationMatch = ifGenerationMatch
            return try await execute(insert)
        }
        let prefix = composite.temporaryPrefix + UUID().uuidString.lowercased() + "/"
        let partNames = ranges.indices.map { prefix + String(format: "%05d", $0) }
        do {
            let parts = try await uploadParts(file, ranges: ranges, names: partNames, bucket: bucket, mimeType: mimeType,
                                              concurrency: composite.concurrency)
            var request = GoogleStorage.ComposeRequest()
            request.sourceObjects = parts.map { part in
                var source = GoogleStorage.ComposeRequest.SourceObjects()
                source.name = part.object.name
                source.generation = part.object.generation
                return source
            }
            var destination = metadata
            if destination.contentType == nil { destination.contentType = mimeType }
            request.destination = destination
            var compose = Storage.Objects.compose(request, destinationBucket: bucket, destinationObject: name)
            compose.ifGenerationMatch = ifGenerationMatch
            let composed = try await execute(compose)
            let local = Checksums.concatenating(parts.map(\.checksums))
            if let reported = composed.crc32c, reported != local.crc32cBase64 {
                var delete = Storage.Objects.delete(bucket: bucket, object: name)
                delete.generation = composed.generation
                _ = try? await execute(delete)
                await deleteParts(partNames, bucket: bucket)
                throw IntegrityError.composed(reported: reported, local: local.crc32cBase64)
            }
            await deleteParts(partNames, bucket: bucket)
            return composed
        } catch {
            await deleteParts(partNames, bucket: bucket)
            throw error
        }
    }

    /// Each part a resumable upload of its byte range, `concurrency` at a time, each only if new
    /// (`ifGenerationMatch=0`); returns the parts' objects and local checksums, in order.
    ///
    /// When a part fails, no new part starts, but the parts in flight are let finish rather than
    /// cancelled: a cancelled upload whose last request already reached the server can still
    /// create its object after the cleanup's delete, leaving a part behind (seen under
    /// AddressSanitizer's slowness). Cancelling the whole upload still cancels them all.
    private nonisolated func uploadParts(_ file: URL, ranges: [Range<Int64>], names: [String], bucket: String, mimeType: String,
                                         concurrency: Int) async throws -> [(object: GoogleStorage.Object, checksums: Checksums)] {
        typealias Part = (object: GoogleStorage.Object, checksums: Checksums)
        let outcome = await withTaskGroup(of: (Int, Result<Part, any Error>).self) { group -> Result<[Part], any Error> in
            var results = [Part?](repeating: nil, count: ranges.count)
            var failure: (any Error)?
            var next = 0
            func addPart() {
                let index = next
                next += 1
                group.addTask {
                    do {
                        var metadata = GoogleStorage.Object()
                        metadata.name = names[index]
                        var insert = Storage.Objects.insert(metadata, bucket: bucket,
                                                            upload: UploadParameters(file: file, range: ranges[index], mimeType: mimeType))
                        insert.name = names[index]
                        insert.ifGenerationMatch = 0
                        let object = try await self.execute(insert)
                        return (index, .success((object, try Checksums.of(file: file, range: ranges[index], md5: false))))
                    } catch {
                        return (index, .failure(error))
                    }
                }
            }
            while next < min(max(1, concurrency), ranges.count) { addPart() }
            while let (index, result) = await group.next() {
                switch result {
                case .success(let part):
                    results[index] = part
                    if failure == nil, next < ranges.count { addPart() }
                case .failure(let error):
                    if failure == nil { failure = error }
                }
            }
            if let failure { return .failure(failure) }
            return .success(results.compactMap { $0 })
        }
        return try outcome.get()
    }

    /// Deletes the temporary parts, whatever happened before: in a task of its own, so a
    /// cancelled upload still cleans up. A part that was never created answers 404, which is fine.
    private nonisolated func deleteParts(_ names: [String], bucket: String) async {
        await Task {
            await withTaskGroup(of: Void.self) { group in
                for name in names {
                    group.addTask { _ = try? await self.execute(Storage.Objects.delete(bucket: bucket, object: name)) }
                }
            }
        }.value
    }
}

extension IntegrityError {
    static func composed(reported: String, local: String) -> IntegrityError {
        IntegrityError(message: "crc32c: composed object \(reported), local file \(local)")
    }
}
