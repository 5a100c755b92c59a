import ArgumentParser
import CourierTestServer
import Foundation

/// `courier serve`: the test server on its own, for loads from other processes or machines.
public struct ServeCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run Courier's test server (httpbin-like routes, /json/{size}, the Notes API) until interrupted."
    )

    @Option(help: "The address to listen on (loopback by default; a network namespace's address for Netem/netem.sh).")
    var host = "127.0.0.1"

    @Option(help: "The port; 0 picks a free one.")
    var port = 8080

    @Option(help: "Add this latency to every request, standing in for a network round trip: 20ms, 1s.")
    var latency: String?

    @Option(help: """
        Serve the Discovery documents in this folder at /discovery/v1/apis/<name>/<version>/rest, \
        each under its own name and version fields, for `courier generate <name>:<version> --discovery-root`.
        """)
    var discovery: String?

    public init() {}

    public func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0 to 65535") }
        if let latency { _ = try DurationParsing.require(latency, "--latency") }
        var isFolder: ObjCBool = false
        if let discovery, !FileManager.default.fileExists(atPath: discovery, isDirectory: &isFolder) || !isFolder.boolValue {
            throw ValidationError("--discovery must be a folder of Discovery documents: \(discovery)")
        }
    }

    public func run() async throws {
        let delay = try latency.map { try DurationParsing.require($0, "--latency") }
        let server = try await TestServer.start(host: host, port: port, latency: delay)
        if let discovery {
            for (name, version) in try server.discovery.publishFolder(URL(fileURLWithPath: discovery)) {
                try Terminal.print(Data("serving Discovery document \(name):\(version)\n".utf8))
            }
        }
        // Straight to the descriptor: scripts wait for this line, and stdout may be a pipe.
        try Terminal.print(Data("courier test server on \(server.baseURL.absoluteString) (Ctrl-C stops it)\n".utf8))
        await Terminal.waitForInterrupt()
        await server.stop()
    }
}
