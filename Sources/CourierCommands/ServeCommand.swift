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

    public init() {}

    public func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0 to 65535") }
        if let latency { _ = try DurationParsing.require(latency, "--latency") }
    }

    public func run() async throws {
        let delay = try latency.map { try DurationParsing.require($0, "--latency") }
        let server = try await TestServer.start(host: host, port: port, latency: delay)
        // Straight to the descriptor: scripts wait for this line, and stdout may be a pipe.
        try Terminal.print(Data("courier test server on \(server.baseURL.absoluteString) (Ctrl-C stops it)\n".utf8))
        await Terminal.waitForInterrupt()
        await server.stop()
    }
}
