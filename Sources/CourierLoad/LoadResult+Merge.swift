import Foundation

extension LoadResult {
    /// Adds a run made at the same time on another machine: counts add up, histograms merge
    /// exactly (bucket by bucket), concurrency and rate add up, and the duration is the longest.
    ///
    /// Runs made one after another are merged the same way; their requests per second then
    /// understate the load, since the durations did not overlap.
    public mutating func merge(_ other: LoadResult) {
        // Saturating: each file's counts are checked (at most 2^50), but thousands of them add up.
        requests = Count.sum(requests, other.requests)
        errors = Count.sum(errors, other.errors)
        skipped = Count.sum(skipped, other.skipped)
        dropped = Count.sum(dropped, other.dropped)
        bytesReceived = Count.sum(bytesReceived, other.bytesReceived)
        bytesSent = Count.sum(bytesSent, other.bytesSent)
        durationSeconds = max(durationSeconds, other.durationSeconds)
        concurrency = Count.sum(concurrency, other.concurrency)
        if model != other.model { model = .mixed }
        if let otherRate = other.rate {
            // Shards carry rate / n each: round the sum to nine digits so 20 × 2000/20 prints 2000.
            let sum = (rate ?? 0) + otherRate
            let scale = pow(10, 9 - (sum > 0 ? (log10(sum)).rounded(.up) : 0))
            rate = (sum * scale).rounded() / scale
        }
        for check in other.checks {
            if let index = checks.firstIndex(where: { $0.expression == check.expression }) {
                checks[index].passes = Count.sum(checks[index].passes, check.passes)
                checks[index].fails = Count.sum(checks[index].fails, check.fails)
            } else {
                checks.append(check)
            }
        }
        statusCodes.merge(other.statusCodes, uniquingKeysWith: Count.sum)
        errorKinds.merge(other.errorKinds, uniquingKeysWith: Count.sum)
        latency.add(other.latency)
        for (name, endpoint) in other.endpoints {
            var merged = endpoints[name] ?? EndpointResult()
            merged.requests = Count.sum(merged.requests, endpoint.requests)
            merged.errors = Count.sum(merged.errors, endpoint.errors)
            merged.skipped = Count.sum(merged.skipped, endpoint.skipped)
            merged.latency.add(endpoint.latency)
            endpoints[name] = merged
        }
        // Each side may already list several URLs (a scenario, an earlier merge): list each once.
        var targets = target.components(separatedBy: ", ")
        for url in other.target.components(separatedBy: ", ") where !targets.contains(url) { targets.append(url) }
        target = targets.joined(separator: ", ")
        runs = Count.sum(runs, other.runs)
        thresholds = [] // they judged the parts, not the whole: evaluate again on the merge
        shard = nil
        if ramp != other.ramp { ramp = nil } // shards of one run share its stages; other runs have no common ones
        if var mine = timeline, let theirs = other.timeline {
            mine.merge(theirs)
            timeline = mine
        } else {
            timeline = nil // a timeline must cover every request, or none
        }
        for (name, value) in other.settings {
            guard let mine = settings[name] else { settings[name] = value; continue }
            if !mine.components(separatedBy: " | ").contains(value) { settings[name] = mine + " | " + value }
        }
    }

    /// Merges `results` into one; nil when there are none.
    public static func merged(_ results: [LoadResult]) -> LoadResult? {
        guard var merged = results.first else { return nil }
        merged.thresholds = []
        merged.shard = nil
        for result in results.dropFirst() { merged.merge(result) }
        return merged
    }

    /// Merges the shards of one run, after checking that each shard is there exactly once.
    ///
    /// - Throws: ``LoadError/invalidResult(_:)`` naming the missing or repeated shards, or when
    ///   shards of runs split differently, or whole runs, are mixed in.
    public static func mergedShards(_ results: [LoadResult]) throws -> LoadResult? {
        try checkShards(results.map(\.shard))
        return merged(results.sorted { ($0.shard?.index ?? 0) < ($1.shard?.index ?? 0) })
    }

    /// Checks the `shard` of every result to be merged: none, or each of one run's exactly once.
    /// Takes only the shards, so a merge of many large results can add them one at a time.
    public static func checkShards(_ shards: [LoadShard?]) throws {
        let present = shards.compactMap { $0 }
        guard !present.isEmpty else { return }
        guard present.count == shards.count else {
            throw LoadError.invalidResult("\(shards.count - present.count) of the results are whole runs, the others shards")
        }
        let counts = Set(present.map(\.count))
        guard counts.count == 1, let count = counts.first else {
            throw LoadError.invalidResult("shards of runs split \(counts.sorted().map(String.init).joined(separator: ", ")) ways are mixed")
        }
        var seen: [Int: Int] = [:]
        for shard in present { seen[shard.index, default: 0] += 1 }
        let repeated = seen.filter { $0.value > 1 }.keys.sorted()
        guard repeated.isEmpty else {
            throw LoadError.invalidResult("shard \(repeated.map { "\($0)/\(count)" }.joined(separator: ", ")) appears more than once")
        }
        let missing = (0..<count).filter { seen[$0] == nil }
        guard missing.isEmpty else {
            throw LoadError.invalidResult("shard \(missing.map { "\($0)/\(count)" }.joined(separator: ", ")) is missing")
        }
    }
}

/// Counts that add up without trapping: held at the type's largest value.
enum Count {
    static func sum<Value: FixedWidthInteger>(_ a: Value, _ b: Value) -> Value {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b < 0 ? .min : .max) : sum
    }
}
