import ArgumentParser
import Courier
import Foundation

/// Downloads one large file (nginx serves it, with `limit_rate` per connection standing in for
/// the per-connection ceiling of a real network path): `curl`, Courier in one stream, and
/// Courier in concurrent Range slices. Median MiB/s of `runs`.
struct DownloadBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "download", abstract: "A large download: slices vs one stream vs curl.")

    @Option(help: "The file's URL.") var url: String
    @Option(help: "Runs per form.") var runs = 3
    @Option(help: "Slices.") var slices = 4

    func run() async throws {
        let target = URL(fileURLWithPath: "/tmp/courier-bench-download-\(getpid()).bin")
        defer { try? FileManager.default.removeItem(at: target) }
        var size = 0
        func megabytesPerSecond(_ body: () async throws -> Void) async rethrows -> Double {
            var rates: [Double] = []
            for _ in 0..<runs {
                try? FileManager.default.removeItem(at: target)
                let start = ContinuousClock.now
                try await body()
                let elapsed = ContinuousClock.now - start
                size = ((try? FileManager.default.attributesOfItem(atPath: target.path)[.size]) as? Int) ?? 0
                rates.append(Double(size) / 1_048_576 / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18))
            }
            return rates.sorted()[rates.count / 2]
        }
        let curl = try await megabytesPerSecond {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
            process.arguments = ["-s", "-o", target.path, url]
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw ValidationError("curl failed") }
        }
        let (one, sliced) = try await withService { service in
            let request = HTTPRequest(url: URL(string: url)!)
            let one = try await megabytesPerSecond {
                _ = try await service.downloadFile(request, to: target, options: DownloadOptions(resume: false, slicing: nil))
            }
            let slicing = SlicedDownloads(threshold: 1, maximumSlices: slices, minimumSliceSize: 1 << 20)
            let sliced = try await megabytesPerSecond {
                let result = try await service.downloadFile(request, to: target, options: DownloadOptions(resume: false, slicing: slicing))
                guard result.slices == slices else { throw ValidationError("ran as \(result.slices) slices") }
            }
            return (one, sliced)
        }
        print(String(format: "%d MiB download, median of %d: curl %.0f MiB/s | Courier one stream %.0f MiB/s (%.2fx curl) | Courier %d slices %.0f MiB/s (%.2fx curl, %.2fx one stream)",
                     size >> 20, runs, curl, one, one / curl, slices, sliced, sliced / curl, sliced / one))
    }
}
