@testable import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// `Configuration.transport.proxy`: which proxy requests take, and that the environment is read
/// once at start as libcurl would read it per request (Docs/PerformanceDecisions.md). The test
/// server serves as the proxy: it routes an absolute-form request by its path, so a request for
/// a host that cannot resolve (`.invalid`, RFC 6761) answers only if it went through the proxy.
@Suite struct ProxyTests {
    static let unresolvable = "courier-proxy-test.invalid"
    static let variables = ProxyConfiguration.proxyVariables + ["no_proxy", "NO_PROXY", "HTTP_PROXY"]

    static func resolved(_ configuration: ProxyConfiguration, _ environment: [String: String]) -> ProxyConfiguration.Resolved? {
        configuration.resolved { environment[$0] }
    }

    @Test func anEnvironmentThatNamesNoProxyIsToldToLibcurlAsNone() {
        for environment in [[:], ["no_proxy": "example.com"], ["HTTP_PROXY": "http://ignored:1"], ["PATH": "/usr/bin"]] {
            let resolved = Self.resolved(.environment, environment)
            #expect(resolved == .direct, "\(environment)")
        }
    }

    /// Any variable libcurl would read, an empty one included (libcurl then takes "" for "no
    /// proxy" and stops looking), leaves the reading to libcurl, per URL and redirect.
    @Test func anEnvironmentThatNamesAProxyIsLeftToLibcurl() {
        for name in ProxyConfiguration.proxyVariables {
            for value in ["http://proxy.example:3128", ""] {
                #expect(Self.resolved(.environment, [name: value]) == nil, "\(name)=\(value)")
            }
        }
    }

    @Test func noneAndAnExplicitProxyIgnoreTheEnvironment() {
        let environment = ["https_proxy": "http://proxy.example:3128", "no_proxy": "example.com"]
        let none = Self.resolved(.none, environment)
        #expect(none == .direct)
        let explicit = Self.resolved(.url("http://other.example:8080", excluding: ["internal.example", "10.0.0.1"]), environment)
        #expect(explicit == .through(url: "http://other.example:8080", excluding: "internal.example,10.0.0.1"))
    }

    @Test func theDescriptionNeverShowsTheProxysCredentials() {
        let described = ProxyConfiguration.url("http://user:s3kr1t-proxy-password@proxy.example:3128/").description
        #expect(!described.contains("s3kr1t") && !described.contains("user"), "\(described)")
        #expect(described.contains("proxy.example:3128"))
        // An @ after the authority is not a credential's.
        #expect(ProxyConfiguration.url("http://proxy.example:3128/a@b").description == "proxy http://proxy.example:3128/a@b")
        #expect(ProxyConfiguration.environment.description == "environment")
    }

    @Test func anExplicitProxyCarriesTheRequest() async throws {
        try await withTestServer { server in
            var configuration = ServiceActor.Configuration()
            configuration.transport.proxy = .url(server.baseURL.absoluteString)
            try await withCheckedService(configuration: configuration) { service in
                // Twice: the second reuses the handle and the connection to the proxy.
                for _ in 0..<2 {
                    let echo = try Echo(try await service.send(HTTPRequest(url: URL(string: "http://\(Self.unresolvable)/echo")!)))
                    #expect(echo.path == "/echo")
                    #expect(echo.header("proxy-connection") == "Keep-Alive") // what libcurl sends a proxy
                }
            }
        }
    }

    @Test func aHostTheProxyExcludesGoesDirect() async throws {
        try await withTestServer { server in
            var configuration = ServiceActor.Configuration()
            configuration.transport.proxy = .url(server.baseURL.absoluteString, excluding: [Self.unresolvable])
            configuration.retry = .disabled
            try await withCheckedService(configuration: configuration) { service in
                await #expect(throws: TransportError.hostNotFound) {
                    try await service.send(HTTPRequest(url: URL(string: "http://\(Self.unresolvable)/echo")!))
                }
            }
        }
    }

    /// A program started with `http_proxy` set sends through it; `no_proxy` exempts a host; with
    /// no variable, or with ``ProxyConfiguration/none``, the request goes direct. Child
    /// processes, so that the variables reach no other test.
    @Test func theEnvironmentsProxyIsTheDefault() async throws {
        try await withTestServer { server in
            let helper = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
                .appendingPathComponent("CourierTestHelper")
            let url = "http://\(Self.unresolvable)/echo"
            var clean: [String: String?] = [:]
            for name in Self.variables { clean[name] = .some(nil) }
            var cases: [(arguments: [String], set: [String: String], expected: String)] = [
                (["get", url], ["http_proxy": server.baseURL.absoluteString], "200 "),
                (["get", url], ["all_proxy": server.baseURL.absoluteString], "200 "),
                (["get", url], ["http_proxy": server.baseURL.absoluteString, "no_proxy": Self.unresolvable], "error hostNotFound"),
                (["get", url], ["https_proxy": server.baseURL.absoluteString], "error hostNotFound"), // not for http URLs
                (["get", url], [:], "error hostNotFound"),
            ]
            // `.none` goes direct whatever the environment names: libcurl is told "no proxy for
            // any host" and given no proxy, which must not send it to the variables.
            cases += Self.variables.map { (["get", url, "no-proxy"], [$0: server.baseURL.absoluteString], "error hostNotFound") }
            for (arguments, set, expected) in cases {
                var environment = clean
                for (name, value) in set { environment[name] = value }
                let run = try await runProcess(helper, arguments, timeout: 120, environment: environment)
                let output = String(decoding: run.output, as: UTF8.self)
                let label = "\(arguments.dropFirst(2).joined(separator: " ")) \(set)"
                #expect(run.status == 0, "\(label): \(run.error)")
                #expect(output.hasPrefix(expected), "\(label): \(output.prefix(200))")
            }
        }
    }
}
