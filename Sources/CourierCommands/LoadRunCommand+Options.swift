import ArgumentParser
import CourierLoad
import Foundation

extension LoadRunCommand {
    /// The command line as ``LoadOptions``; every mistake becomes a usage error before any load.
    ///
    /// - Parameter checking: only checking the command line (`validate()`, before a Job's pod has
    ///   its index): a missing `JOB_COMPLETION_INDEX` is left for the run to report.
    func makeOptions(environment: [String: String] = ProcessInfo.processInfo.environment, checking: Bool = false) throws -> LoadOptions {
        var options = LoadOptions()
        if let url, url.contains("{{") {
            options.urlTemplate = url // checked by LoadRunner with its placeholders filled
        } else if let url {
            guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme?.lowercased() ?? ""),
                  parsed.host?.isEmpty == false else {
                throw ValidationError("\(url) is not an http or https URL")
            }
            options.url = parsed
        }
        guard let mode = LoadData.Mode(rawValue: dataMode) else {
            throw ValidationError("--data-mode: \(LoadData.Mode.allCases.map(\.rawValue).joined(separator: ", ")), not \(dataMode)")
        }
        if let data {
            do { options.data = try LoadData(contentsOf: URL(fileURLWithPath: data), mode: mode) } catch let error as LoadError {
                throw ValidationError(error.message)
            }
        }
        guard concurrency >= 1 else { throw ValidationError("--concurrency must be at least 1") }
        options.concurrency = concurrency
        if let connections, connections < 1 { throw ValidationError("--connections must be at least 1") }
        options.connections = connections
        options.duration = try DurationParsing.require(duration ?? "10s", "--duration")
        guard options.duration > .zero else { throw ValidationError("--duration must be positive") }
        // Both given: whichever comes first, as ab's -n with -t.
        if requests != nil, duration != nil { options.maxDuration = options.duration }
        if !stages.isEmpty {
            if duration != nil { throw ValidationError("--stage sets the run's length: give stages or --duration, not both") }
            options.ramp = try Self.parseRamp(stages)
        }
        if let requests, requests < 1 { throw ValidationError("--requests must be at least 1") }
        options.requests = requests
        if let rate, !(rate > 0 && rate.isFinite) { throw ValidationError("--rate must be a positive number") }
        options.rate = rate
        options.warmup = try DurationParsing.require(warmup, "--warmup")
        options.method = method.uppercased()
        options.headers = try headers.map(Self.parseHeader)
        if body != nil && bodyFile != nil { throw ValidationError("give --body or --body-file, not both") }
        if let body { options.body = Data(body.utf8) }
        if let bodyFile {
            guard let data = FileManager.default.contents(atPath: bodyFile) else {
                throw ValidationError("--body-file: cannot read \(bodyFile)")
            }
            options.body = data
        }
        options.http2 = http2
        options.timeout = try DurationParsing.require(timeout, "--timeout")
        guard options.timeout > .zero else { throw ValidationError("--timeout must be positive") }
        options.insecure = insecure
        options.bearerToken = authBearer ?? environment["COURIER_BEARER_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        if let token = options.bearerToken, token.contains(where: { $0 == "\r" || $0 == "\n" }) {
            throw ValidationError("--auth-bearer: the token contains a line break")
        }
        if let serviceAccountKey {
            guard FileManager.default.isReadableFile(atPath: serviceAccountKey) else {
                throw ValidationError("--service-account-key: cannot read \(serviceAccountKey)")
            }
            options.serviceAccountKey = URL(fileURLWithPath: serviceAccountKey)
            if !scope.isEmpty { options.scopes = scope }
        }
        if let scenario {
            if url != nil { throw ValidationError("give a URL or --scenario, not both") }
            do {
                options.scenario = try Scenario(contentsOf: URL(fileURLWithPath: scenario))
            } catch {
                throw ValidationError("--scenario: \(error)")
            }
        }
        options.checks = try check.map { expression in
            do { return try LoadCheck(expression) } catch let error as LoadError { throw ValidationError("--\(error.message)") }
        }
        options.loopExecutor = executor != "default"
        var environment = environment
        if checking && environment["JOB_COMPLETION_INDEX"] == nil { environment["JOB_COMPLETION_INDEX"] = "0" }
        options.shard = try shardOption(environment: environment)
        if let shard = options.shard, concurrency < shard.count {
            throw ValidationError("--concurrency \(concurrency) cannot be split over \(shard.count) shards: give at least one per shard")
        }
        do {
            try LoadRunner.validate(options)
            // The requests too (their placeholders against the data's columns), unless the
            // embedded server's URL is still to come.
            if options.url != nil || options.urlTemplate != nil || options.scenario != nil { _ = try LoadRunner(options: options) }
        } catch let error as LoadError {
            throw ValidationError(error.message)
        }
        return options
    }

    /// `--stage 30s:100/s …` (rates) or `--stage 1m:200 …` (requests in flight), never both kinds.
    static func parseRamp(_ texts: [String]) throws -> LoadRamp {
        var kinds: Set<LoadRamp.Kind> = []
        let stages = try texts.map { text -> LoadStage in
            let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
            guard parts.count == 2, let duration = DurationParsing.parse(parts[0]) else {
                throw ValidationError("--stage \(text): expected length:target, as 30s:100/s (a rate) or 1m:200 (requests in flight)")
            }
            let isRate = parts[1].hasSuffix("/s")
            kinds.insert(isRate ? .rate : .concurrency)
            guard let target = Double(isRate ? String(parts[1].dropLast(2)) : parts[1]) else {
                throw ValidationError("--stage \(text): \(parts[1]) is not a number\(isRate ? " per second" : "")")
            }
            do { return try LoadStage(duration: duration, target: target) } catch let error as LoadError {
                throw ValidationError("--stage \(text): \(error.message)")
            }
        }
        guard let kind = kinds.first, kinds.count == 1 else {
            throw ValidationError("--stage: give every stage a rate (30s:100/s) or every stage a count in flight (1m:200), not both")
        }
        return LoadRamp(kind, stages: stages)
    }

    /// `--shard i/n`, or `--shards n` with the index from `JOB_COMPLETION_INDEX`.
    func shardOption(environment: [String: String]) throws -> LoadShard? {
        switch (shard, shards) {
        case (nil, nil):
            return nil
        case (_?, _?):
            throw ValidationError("give --shard i/n or --shards n, not both")
        case (let text?, nil):
            do { return try LoadShard(parsing: text) } catch { throw ValidationError("--shard: \(error)") }
        case (nil, let count?):
            guard let text = environment["JOB_COMPLETION_INDEX"], let index = Int(text) else {
                throw ValidationError("--shards \(count) takes the shard's index from JOB_COMPLETION_INDEX, which is not set (use --shard i/n outside a Job)")
            }
            do { return try LoadShard(index: index, count: count) } catch { throw ValidationError("--shards: \(error)") }
        }
    }

    /// `Name: value` → (`Name`, `value`).
    static func parseHeader(_ text: String) throws -> (String, String) {
        guard let colon = text.firstIndex(of: ":") else {
            throw ValidationError("--header \"\(text)\": expected \"Name: value\"")
        }
        let name = text[..<colon].trimmingCharacters(in: .whitespaces)
        let value = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty, !name.contains(where: { $0.isWhitespace }) else {
            throw ValidationError("--header \"\(text)\": the name is empty or has spaces")
        }
        guard !value.contains(where: { $0 == "\r" || $0 == "\n" }) else {
            throw ValidationError("--header \(name): the value contains a line break")
        }
        return (name, value)
    }
}
