import Foundation

/// What `courier load` runs.
public struct LoadOptions: Sendable {
    /// The URL to load; nil starts the embedded test server and targets its `/bytes/1024`.
    public var url: URL?
    /// The URL with `{{…}}` placeholders (``LoadData`` columns and built-ins such as `{{seq}}`),
    /// filled for each request; used instead of ``url``. Headers and the body may hold
    /// placeholders too.
    public var urlTemplate: String?
    /// Rows whose columns fill the placeholders of the URL, headers and body.
    public var data: LoadData?
    /// Requests in flight at once (the closed model), or at most in flight (the open model).
    public var concurrency = 64
    /// Connections per host; by default one per request in flight.
    public var connections: Int?
    /// How long to run, after the warm-up. Ignored when ``requests`` is set.
    public var duration: Duration = .seconds(10)
    /// Send exactly this many requests instead of running for a duration.
    public var requests: Int?
    /// With ``requests``: stop starting requests after this long too, whichever comes first
    /// (ab's `-n` with `-t`, k6's `iterations` with `maxDuration`).
    public var maxDuration: Duration?
    /// The open model: requests per second at a constant rate. Latency then counts from the
    /// intended send time, correcting coordinated omission as wrk2 does.
    public var rate: Double?
    /// Stages that ramp the load instead of holding it constant; the run lasts their total
    /// length, and ``duration`` and ``requests`` do not apply.
    public var ramp: LoadRamp?
    /// Load first for this long without recording.
    public var warmup: Duration = .zero
    public var method = "GET"
    public var headers: [(String, String)] = []
    public var body: Data?
    /// Offer HTTP/2 (ALPN over TLS; prior knowledge on plain http).
    public var http2 = false
    /// The deadline of each request.
    public var timeout: Duration = .seconds(30)
    /// Skip TLS verification (self-signed test servers only).
    public var insecure = false
    /// Sent as `Authorization: Bearer …`.
    public var bearerToken: String?
    /// A service-account key file; its token is obtained once and refreshed as needed.
    public var serviceAccountKey: URL?
    public var scopes: [String] = ["https://www.googleapis.com/auth/cloud-platform"]
    /// Conditions on every response, counted per check (``LoadCheck``).
    public var checks: [LoadCheck] = []
    /// Weighted requests instead of one URL.
    public var scenario: Scenario?
    /// Run request tasks on the service's loop thread (no thread hop per request).
    public var loopExecutor = true
    /// Send only this shard's part of the run: ``requests``, ``concurrency`` and ``rate`` stay
    /// the whole run's, and each shard takes its share (see ``LoadShard``).
    public var shard: LoadShard?

    public init() {}

    /// The longest run, warm-up, stage, timeout or think time: ten years. Longer is a typo, and
    /// every duration becomes nanoseconds in a `UInt64` somewhere (584 years at most).
    public static let longestDuration: Duration = .seconds(315_360_000)
    /// The most requests in flight one process keeps (``concurrency``, or a ramp's peak): about
    /// 3 KiB each, so 3 GiB at the limit. Shards share more between machines.
    public static let mostInFlight = 1_000_000
    /// The slowest rate: one request in ``longestDuration``.
    public static var slowestRate: Double { 1 / longestSeconds }
    /// ``longestDuration`` in seconds.
    package static var longestSeconds: Double { Double(longestDuration.components.seconds) }

    /// The open model: a rate, constant or ramping.
    var isOpen: Bool { rate != nil || ramp?.kind == .rate }

    /// The settings a report shows beside the figures, as text; never a credential.
    public var settings: [String: String] {
        var settings = [
            "method": scenario == nil ? method : "scenario",
            "concurrency": String(LoadRunner.workers(options: self)),
            "http": http2 ? "2" : "1.1",
            "timeout": "\(timeout)",
            "executor": loopExecutor ? "loop" : "default",
        ]
        if let requests {
            settings["requests"] = String(requests)
            if let maxDuration { settings["duration"] = "\(maxDuration)" }
        } else {
            settings["duration"] = "\(duration)"
        }
        if let rate { settings["rate"] = Format.number(rate) }
        if let ramp {
            settings["stages"] = ramp.stages.map { "\(Format.number($0.seconds))s:\(Format.number($0.target))\(ramp.kind == .rate ? "/s" : "")" }
                .joined(separator: " ")
            settings.removeValue(forKey: "duration")
        }
        if warmup > .zero { settings["warmup"] = "\(warmup)" }
        if let connections { settings["connections"] = String(connections) }
        if let scenario { settings["scenario requests"] = String(scenario.requests.count) }
        if let shard { settings["shards"] = String(shard.count) }
        if bearerToken != nil || serviceAccountKey != nil { settings["authorization"] = bearerToken != nil ? "bearer" : "service account" }
        return settings
    }
}

/// A run whose load changes in stages (`--stage`), as k6's ramping executors do.
public struct LoadRamp: Codable, Sendable, Hashable {
    public enum Kind: String, Codable, Sendable {
        /// The open model's arrival rate ramps, from ``LoadOptions/rate`` (or 0).
        case rate
        /// The closed model's requests in flight ramp, from 0; ``LoadOptions/concurrency`` is
        /// then not used.
        case concurrency
    }

    public var kind: Kind
    public var stages: [LoadStage]

    public init(_ kind: Kind, stages: [LoadStage]) {
        self.kind = kind
        self.stages = stages
    }

    /// Seconds from the start to the end of the last stage.
    public var seconds: Double { stages.reduce(0) { $0 + $1.seconds } }
}
