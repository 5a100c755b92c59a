import Foundation
import Histogram

/// The outcome of a load run, complete enough to merge with runs from other machines exactly.
///
/// Its JSON form (`courier load --json`) is versioned by ``schema`` and described by
/// `Docs/load-result.schema.json`.
public struct LoadResult: Codable, Sendable, Equatable {
    /// The JSON format's name and version.
    public static let schema = "courier.load/1"

    /// What was loaded: the URL, or the scenario's URLs.
    public var target: String
    /// `closed` (a number in flight) or `open` (an arrival rate).
    public var model: LoadModel
    /// Requests in flight at once (closed), or at most (open); summed by a merge.
    public var concurrency: Int
    /// Intended requests per second (open model); summed by a merge.
    public var rate: Double?
    /// Seconds of measured load, warm-up excluded; the longest of merged runs, which ran side by side.
    public var durationSeconds: Double
    /// Requests sent: those that completed with any status, and those that failed on the way.
    public var requests: Int
    /// Requests that failed below HTTP, plus those answered with a status of 400 or more.
    public var errors: Int
    /// Response body bytes received.
    public var bytesReceived: Int64
    /// Request body bytes sent.
    public var bytesSent: Int64
    /// Responses by status code.
    public var statusCodes: [Int: Int]
    /// Failures below HTTP by kind (`timedOut`, `connectionFailed`, …).
    public var errorKinds: [String: Int]
    /// Every request's latency, in microseconds.
    public var latency: LatencyDistribution
    /// Per scenario request, by name; empty for a single URL.
    public var endpoints: [String: EndpointResult]
    /// How many runs were merged into this one.
    public var runs: Int
    /// Threshold outcomes, when thresholds were given.
    public var thresholds: [ThresholdOutcome]
    /// Which part of a sharded run this is; nil for a whole run or a merge.
    public var shard: LoadShard?
    /// The figures per interval of time; nil in results from before it was recorded.
    public var timeline: LoadTimeline?
    /// The run's settings as text (``LoadOptions/settings``), for reports.
    public var settings: [String: String]
    /// The whole run's stages, when its load ramped (a shard's result carries the whole run's).
    public var ramp: LoadRamp?
    /// How often each check (``LoadCheck``) held, in the order they were given.
    public var checks: [CheckResult] = []
    /// Flow steps not sent, and so not in ``requests``: a run of a flow whose step found no value
    /// a later step needs stops there, and each step it leaves unsent counts once here.
    public var skipped = 0
    /// Open model: scheduled requests not sent, and so not in ``requests``: the run fell more
    /// than its timeout behind its schedule (the load generator could not keep the rate), and
    /// past its duration by that much it starts no more.
    public var dropped = 0

    /// Passes of every check as a fraction of their evaluations (0…1); 1 without checks.
    public var checkPassRate: Double {
        let passes = checks.reduce(0) { $0 + $1.passes }, total = checks.reduce(0) { $0 + $1.passes + $1.fails }
        return total > 0 ? Double(passes) / Double(total) : 1
    }

    public init(target: String, model: LoadModel, concurrency: Int, rate: Double? = nil, durationSeconds: Double = 0,
                requests: Int = 0, errors: Int = 0, bytesReceived: Int64 = 0, bytesSent: Int64 = 0,
                statusCodes: [Int: Int] = [:], errorKinds: [String: Int] = [:],
                latency: LatencyDistribution = LatencyDistribution(), endpoints: [String: EndpointResult] = [:],
                runs: Int = 1, thresholds: [ThresholdOutcome] = [], shard: LoadShard? = nil,
                timeline: LoadTimeline? = nil, settings: [String: String] = [:]) {
        self.target = target
        self.model = model
        self.concurrency = concurrency
        self.rate = rate
        self.durationSeconds = durationSeconds
        self.requests = requests
        self.errors = errors
        self.bytesReceived = bytesReceived
        self.bytesSent = bytesSent
        self.statusCodes = statusCodes
        self.errorKinds = errorKinds
        self.latency = latency
        self.endpoints = endpoints
        self.runs = runs
        self.thresholds = thresholds
        self.shard = shard
        self.timeline = timeline
        self.settings = settings
    }

    public var requestsPerSecond: Double { durationSeconds > 0 ? Double(requests) / durationSeconds : 0 }
    /// Errors as a fraction of requests (0…1).
    public var errorRate: Double { requests > 0 ? Double(errors) / Double(requests) : 0 }
}

/// How requests are issued.
public enum LoadModel: String, Codable, Sendable {
    /// A fixed number of requests in flight: each sends its next as soon as the last one ends.
    case closed
    /// Requests start at a given rate (constant or ramping) whether or not earlier ones have ended.
    case open
    /// A merge of closed- and open-model runs.
    case mixed
}

/// One scenario request's figures.
public struct EndpointResult: Codable, Sendable, Equatable {
    public var requests = 0
    public var errors = 0
    public var latency = LatencyDistribution()
    /// Times this flow step was not sent (see ``LoadResult/skipped``).
    public var skipped = 0

    enum CodingKeys: String, CodingKey { case requests, errors, latency, skipped }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        requests = try container.decode(Int.self, forKey: .requests)
        errors = try container.decode(Int.self, forKey: .errors)
        latency = try container.decode(LatencyDistribution.self, forKey: .latency)
        skipped = try container.decodeIfPresent(Int.self, forKey: .skipped) ?? 0
    }

    public init(requests: Int = 0, errors: Int = 0, latency: LatencyDistribution = LatencyDistribution()) {
        self.requests = requests
        self.errors = errors
        self.latency = latency
    }
}

// MARK: - JSON

extension LoadResult {
    enum CodingKeys: String, CodingKey {
        case schema, target, model, concurrency, rate, durationSeconds, requests, errors, requestsPerSecond, errorRate
        case bytesReceived, bytesSent, statusCodes, errorKinds, latency, endpoints, runs, thresholds
        case shard, timeline, settings, ramp, checks, skipped, dropped
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let schema = try container.decode(String.self, forKey: .schema)
        guard schema == Self.schema else {
            throw LoadError.invalidResult("schema \(schema) is not \(Self.schema)")
        }
        target = try container.decode(String.self, forKey: .target)
        model = try container.decode(LoadModel.self, forKey: .model)
        concurrency = try container.decode(Int.self, forKey: .concurrency)
        rate = try container.decodeIfPresent(Double.self, forKey: .rate)
        durationSeconds = try container.decode(Double.self, forKey: .durationSeconds)
        requests = try container.decode(Int.self, forKey: .requests)
        errors = try container.decode(Int.self, forKey: .errors)
        bytesReceived = try container.decode(Int64.self, forKey: .bytesReceived)
        bytesSent = try container.decode(Int64.self, forKey: .bytesSent)
        let codes = try container.decode([String: Int].self, forKey: .statusCodes)
        statusCodes = try Dictionary(uniqueKeysWithValues: codes.map { key, count in
            guard let code = Int(key) else { throw LoadError.invalidResult("status code \(key) is not a number") }
            return (code, count)
        })
        errorKinds = try container.decode([String: Int].self, forKey: .errorKinds)
        latency = try container.decode(LatencyDistribution.self, forKey: .latency)
        endpoints = try container.decode([String: EndpointResult].self, forKey: .endpoints)
        runs = try container.decode(Int.self, forKey: .runs)
        thresholds = try container.decodeIfPresent([ThresholdOutcome].self, forKey: .thresholds) ?? []
        shard = try container.decodeIfPresent(LoadShard.self, forKey: .shard)
        timeline = try container.decodeIfPresent(LoadTimeline.self, forKey: .timeline)
        settings = try container.decodeIfPresent([String: String].self, forKey: .settings) ?? [:]
        ramp = try container.decodeIfPresent(LoadRamp.self, forKey: .ramp)
        checks = try container.decodeIfPresent([CheckResult].self, forKey: .checks) ?? []
        skipped = try container.decodeIfPresent(Int.self, forKey: .skipped) ?? 0
        dropped = try container.decodeIfPresent(Int.self, forKey: .dropped) ?? 0
        try checkFigures()
    }

    /// A file's figures within what a run can make, so that merging, comparing and reporting
    /// never overflow or divide by nothing: counts from 0 to 2⁵⁰, a duration of at most 10¹¹ s.
    private func checkFigures() throws {
        let largest = Int(LatencyDistribution.largestCount)
        let counts = [concurrency, requests, errors, skipped, dropped, runs] + Array(statusCodes.values) + Array(errorKinds.values)
            + endpoints.values.flatMap { [$0.requests, $0.errors, $0.skipped] } + checks.flatMap { [$0.passes, $0.fails] }
        guard counts.allSatisfy({ (0...largest).contains($0) }), (0...Int64(largest) << 12).contains(bytesReceived),
              (0...Int64(largest) << 12).contains(bytesSent) else {
            throw LoadError.invalidResult("a count is negative or beyond 2^50 (bytes 2^62)")
        }
        guard durationSeconds.isFinite, (0...1e11).contains(durationSeconds) else {
            throw LoadError.invalidResult("the duration \(durationSeconds) s is not a run's")
        }
        if let rate, !(rate.isFinite && rate >= 0) { throw LoadError.invalidResult("the rate \(rate) is not a rate") }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.schema, forKey: .schema)
        try container.encode(target, forKey: .target)
        try container.encode(model, forKey: .model)
        try container.encode(concurrency, forKey: .concurrency)
        try container.encode(rate, forKey: .rate)
        try container.encode(durationSeconds, forKey: .durationSeconds)
        try container.encode(requests, forKey: .requests)
        try container.encode(errors, forKey: .errors)
        try container.encode(requestsPerSecond, forKey: .requestsPerSecond)
        try container.encode(errorRate, forKey: .errorRate)
        try container.encode(bytesReceived, forKey: .bytesReceived)
        try container.encode(bytesSent, forKey: .bytesSent)
        try container.encode(Dictionary(uniqueKeysWithValues: statusCodes.map { (String($0.key), $0.value) }), forKey: .statusCodes)
        try container.encode(errorKinds, forKey: .errorKinds)
        try container.encode(latency, forKey: .latency)
        try container.encode(endpoints, forKey: .endpoints)
        try container.encode(runs, forKey: .runs)
        try container.encode(thresholds, forKey: .thresholds)
        try container.encodeIfPresent(shard, forKey: .shard)
        try container.encodeIfPresent(timeline, forKey: .timeline)
        try container.encode(settings, forKey: .settings)
        try container.encodeIfPresent(ramp, forKey: .ramp)
        try container.encode(checks, forKey: .checks)
        try container.encode(skipped, forKey: .skipped)
        try container.encode(dropped, forKey: .dropped)
    }

    /// The JSON form, keys sorted, for `--json` and files to merge.
    public func jsonData() throws -> Data {
        try Self.encoder.encode(self)
    }

    /// How `courier load` writes JSON: keys sorted, indented, slashes as they are.
    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return encoder
    }

    /// Reads a result written by ``jsonData()`` on this or another machine.
    public static func decode(_ data: Data) throws -> LoadResult {
        do {
            return try JSONDecoder().decode(LoadResult.self, from: data)
        } catch let error as LoadError {
            throw error
        } catch {
            throw LoadError.invalidResult("not a \(schema) document: \(error)")
        }
    }
}
