import ArgumentParser
import Courier
import Foundation

/// Uploads a file on loopback to the test server (run `CourierBench serve` first): `curl -T` and
/// Courier's single PUT to the `/discard` sink (counts bytes, keeps none), Courier's resumable
/// upload to the Files API's sink (the same) with chunks sized from throughput and with fixed
/// 8 MiB chunks, and the realistic resumable upload (the server writes to disk, both sides
/// compute MD5 and CRC32C, the last chunk carries X-Goog-Hash). Median MiB/s of `runs`, and the
/// peak RSS of this process.
struct UploadBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "upload", abstract: "A large upload: Courier vs curl -T.")

    @Option(help: "The test server's base URL.") var url: String
    @Option(help: "File size in MiB.") var mebibytes = 1024
    @Option(help: "Runs per form.") var runs = 3

    func run() async throws {
        let size = mebibytes << 20
        let file = URL(fileURLWithPath: "/tmp/courier-bench-\(mebibytes)m.bin")
        if ((try? FileManager.default.attributesOfItem(atPath: file.path)[.size]) as? Int) != size {
            _ = FileManager.default.createFile(atPath: file.path, contents: nil)
            let handle = try FileHandle(forWritingTo: file)
            let block = Data((0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            for _ in 0..<(size / block.count) { try handle.write(contentsOf: block) }
            try handle.close()
        }
        func megabytesPerSecond(_ body: () async throws -> Void) async rethrows -> Double {
            var rates: [Double] = []
            for _ in 0..<runs {
                let start = ContinuousClock.now
                try await body()
                let elapsed = ContinuousClock.now - start
                rates.append(Double(size) / 1_048_576 / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18))
            }
            return rates.sorted()[rates.count / 2]
        }
        let curl = try await megabytesPerSecond {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
            process.arguments = ["-s", "-o", "/dev/null", "-T", file.path, "-H", "Expect:", "\(url)/discard"]
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw ValidationError("curl failed") }
        }
        var configuration = ServiceActor.Configuration()
        configuration.transport.timeouts = Timeouts(connect: .seconds(10), idle: .seconds(120))
        let (single, resumable) = try await withService(configuration: configuration) { service in
            let single = try await megabytesPerSecond {
                let response = try await service.send(HTTPRequest(method: .put, url: URL(string: "\(url)/discard")!, body: .file(file)))
                guard response.status == 200 else { throw ValidationError("status \(response.status)") }
            }
            let api = APIDescription(name: "files", version: "v1", rootURL: URL(string: url)!, servicePath: "files/v1/")
            func resumable(sink: Bool, adaptive: Bool) async throws -> Double {
                try await megabytesPerSecond {
                    var query = Query<GenericObject>(api: api, name: "files.insert", method: .post, path: "files")
                    query.uploadPath = "/upload/files/v1/files"
                    query.parameters.set("name", "bench-\(UUID().uuidString)")
                    if sink { query.parameters.set("sink", 1) }
                    var parameters = UploadParameters(file: file, mimeType: "application/octet-stream")
                    parameters.verifyIntegrity = !sink
                    parameters.adaptiveChunkSize = adaptive
                    query.upload = parameters
                    _ = try await service.execute(query)
                }
            }
            return (single, (try await resumable(sink: true, adaptive: true), try await resumable(sink: true, adaptive: false),
                             try await resumable(sink: false, adaptive: true)))
        }
        let rss = Double(peakResidentKiB()) / 1024
        print(String(format: "%d MiB upload, median of %d: curl -T %.0f MiB/s | Courier PUT %.0f MiB/s (%.2fx curl) | Courier resumable, adaptive chunks, no hashing %.0f MiB/s (%.2fx curl) | resumable, fixed 8 MiB chunks %.0f MiB/s (%.2fx curl) | resumable with MD5/CRC32C on both sides and X-Goog-Hash, server writes to disk %.0f MiB/s (%.2fx curl) | peak RSS %.0f MiB",
                     mebibytes, runs, curl, single, single / curl, resumable.0, resumable.0 / curl, resumable.1, resumable.1 / curl,
                     resumable.2, resumable.2 / curl, rss))
    }
}

/// VmHWM of this process, in KiB.
func peakResidentKiB() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
    return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
}
