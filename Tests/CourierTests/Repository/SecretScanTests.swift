import Foundation
import CourierTestSupport
import Testing

/// `Scripts/secret-scan.sh`, which `make test` runs over everything the suite logged, is itself
/// tested: it must fail on the mark, on a registered secret and on too little evidence.
@Suite struct SecretScanTests {
    static let script = Repository.path("Scripts/secret-scan.sh")

    /// A log folder shaped like the suite's, with `lines` in its log file.
    func scan(_ lines: [String], registered: [String] = [], minLines: Int = 0) async throws -> Int32 {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("scan-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("http/one"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("secrets"), withIntermediateDirectories: true)
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: folder.appendingPathComponent("courier-1.log"))
        try Data("GET https://h/?key=_snip_\n".utf8).write(to: folder.appendingPathComponent("http/one/0001-GET-x.txt"))
        try Data(registered.map { $0 + "\n" }.joined().utf8).write(to: folder.appendingPathComponent("secrets/registered-1.txt"))
        // Not recorded: the failing scan prints the very lines it found.
        let run = try await runProcess(URL(fileURLWithPath: "/bin/bash"), [Self.script.path, folder.path], timeout: 60,
                                       record: false, environment: ["MIN_LINES": "\(minLines)"])
        return run.status
    }

    @Test func aCleanFolderPasses() async throws {
        #expect(try await scan(["trace courier transfer started request=GET https://h/?key=_snip_"]) == 0)
    }

    @Test func theMarkFailsTheScanInAnyCase() async throws {
        #expect(try await scan(["debug courier retrying reason=Bearer ya29.S3KR1T-7-abc"]) == 1)
    }

    @Test func aRegisteredSecretFailsTheScan() async throws {
        let keyLine = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"
        #expect(try await scan(["private_key=\(keyLine)"], registered: [keyLine]) == 1)
        #expect(try await scan(["nothing here"], registered: [keyLine]) == 0) // the secrets list itself is not scanned
    }

    @Test func aSignedJWTFailsTheScan() async throws {
        // The shape of a self-signed service-account token: header and claims are JSON objects.
        let jwt = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJyb2JvdEBleGFtcGxlIn0.c2lnbmF0dXJlLWJ5dGVzLWhlcmU"
        #expect(try await scan(["debug courier authorization=\(jwt)"]) == 1)
        #expect(try await scan(["eyJhbGciOiJSUzI1NiJ9 alone is a header, not a token"]) == 0)
    }

    @Test func tooLittleEvidenceFailsTheScan() async throws {
        #expect(try await scan(["one line"], minLines: 1000) == 1)
    }
}
