extension LoadResult {
    /// Adds a run made at the same time on another machine: counts add up, histograms merge
    /// exactly (bucket by bucket), concurrency and rate add up, and the duration is the longest.
    ///
    /// Runs made one after another are merged the same way; their requests per second then
    /// understate the load, since the durations did not overlap.
    public mutating func merge(_ other: LoadResult) {
        requests += other.requests
        errors += other.errors
        bytesReceived += other.bytesReceived
        bytesSent += other.bytesSent
        durationSeconds = max(durationSeconds, other.durationSeconds)
        concurrency += other.concurrency
        if model != other.model { model = .mixed }
        if let otherRate = other.rate { rate = (rate ?? 0) + otherRate }
        statusCodes.merge(other.statusCodes, uniquingKeysWith: +)
        errorKinds.merge(other.errorKinds, uniquingKeysWith: +)
        latency.add(other.latency)
        for (name, endpoint) in other.endpoints {
            var merged = endpoints[name] ?? EndpointResult()
            merged.requests += endpoint.requests
            merged.errors += endpoint.errors
            merged.latency.add(endpoint.latency)
            endpoints[name] = merged
        }
        let targets = Set(target.components(separatedBy: ", "))
        if !targets.contains(other.target) { target += ", \(other.target)" }
        runs += other.runs
        thresholds = [] // they judged the parts, not the whole: evaluate again on the merge
    }

    /// Merges `results` into one; nil when there are none.
    public static func merged(_ results: [LoadResult]) -> LoadResult? {
        guard var merged = results.first else { return nil }
        merged.thresholds = []
        for result in results.dropFirst() { merged.merge(result) }
        return merged
    }
}
