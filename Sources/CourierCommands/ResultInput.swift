import ArgumentParser
import CourierLoad
import Foundation

/// Reads results named on the command line: files, `-` for standard input, or `gs://bucket/folder/`
/// for every `.json` result there, merged into one.
enum ResultInput {
    /// Checks the arguments' form before anything is read.
    static func validate(_ files: [String]) throws {
        for file in files where file.hasPrefix("gs:") && StorageLocation(file) == nil {
            throw ValidationError("\(file): expected gs://bucket/folder/")
        }
    }

    /// Every result `files` name, merged exactly; the shards of a sharded run must all be there, once each.
    static func merged(_ files: [String]) async throws -> LoadResult {
        var documents: [(name: String, data: Data)] = []
        for file in files {
            if let location = StorageLocation(file) {
                let found: [(name: String, data: Data)]
                do { found = try await CloudStorageResults.read(from: location) } catch { throw ValidationError("\(file): \(error)") }
                guard !found.isEmpty else { throw ValidationError("\(file): no .json results there") }
                documents += found
            } else {
                let data = file == "-" ? (try? FileHandle.standardInput.readToEnd()) ?? Data() : FileManager.default.contents(atPath: file)
                guard let data else { throw ValidationError("cannot read \(file)") }
                documents.append((file, data))
            }
        }
        // One result at a time: twenty shards' timelines need not all be in memory at once.
        var merged: LoadResult?
        var shards: [LoadShard?] = []
        for document in documents {
            let result: LoadResult
            do { result = try LoadResult.decode(document.data) } catch { throw ValidationError("\(document.name): \(error)") }
            shards.append(result.shard)
            if merged == nil { merged = LoadResult.merged([result]) } else { merged!.merge(result) }
        }
        do { try LoadResult.checkShards(shards) } catch { throw ValidationError("\(error)") }
        guard let merged else { throw ValidationError("nothing to merge") }
        return merged
    }
}
