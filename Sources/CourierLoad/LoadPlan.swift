import Courier
import Foundation

/// The requests a run sends, prepared once: workers only pick one and send it.
struct LoadPlan: Sendable {
    struct Entry: Sendable {
        var name: String
        var request: HTTPRequest
        var bodySize: Int
        /// The checks on its responses, as indices into ``LoadPlan/checks``.
        var checks: [Int] = []
    }

    /// Every distinct check of the run: the command line's, then the scenario's in order.
    let checks: [LoadCheck]

    let entries: [Entry]
    /// Running sums of the weights, for picking by a uniform draw.
    private let cumulativeWeights: [Double]
    /// Whether results keep per-endpoint figures (a scenario was given).
    let perEndpoint: Bool
    let target: String

    init(options: LoadOptions, defaultURL: URL?) throws {
        var headers = HTTPHeaders()
        for (name, value) in options.headers { headers.add(name: name, value: value) }
        if let token = options.bearerToken { headers["Authorization"] = "Bearer \(token)" }
        let timeouts = Timeouts(total: options.timeout)

        func prepare(name: String, method: String, url: URL, extraHeaders: [String: String], body: Data?) throws -> Entry {
            var request = HTTPRequest(method: HTTPMethod(rawValue: method.uppercased()), url: url, headers: headers)
            for (headerName, value) in extraHeaders.sorted(by: { $0.key < $1.key }) { request.headers[headerName] = value }
            if let body {
                request.body = .data(body)
                if request.headers["Content-Type"] == nil { request.headers["Content-Type"] = "application/json" }
            }
            request.timeouts = timeouts
            do {
                try request.validate()
            } catch {
                throw LoadError.invalidArgument("\(name): \(error)")
            }
            return Entry(name: name, request: request, bodySize: body?.count ?? 0)
        }

        var checks = options.checks
        func indices(_ expressions: [String]) throws -> [Int] {
            try (0..<options.checks.count) + expressions.map { expression in
                let check = try LoadCheck(expression)
                if let index = checks.firstIndex(of: check) { return index }
                checks.append(check)
                return checks.count - 1
            }
        }

        if let scenario = options.scenario {
            var entries: [Entry] = []
            var sums: [Double] = []
            var seen = Set<String>()
            for item in scenario.requests {
                guard let url = URL(string: item.url), url.scheme != nil, url.host != nil else {
                    throw LoadError.invalidScenario("\(Redaction.url(item.url)) is not an absolute URL")
                }
                let method = item.method ?? "GET"
                var name = item.name ?? "\(method.uppercased()) \(url.path.isEmpty ? "/" : url.path)"
                if seen.contains(name) { name += " #\(entries.count + 1)" }
                seen.insert(name)
                var entry = try prepare(name: name, method: method, url: url, extraHeaders: item.headers ?? [:],
                                        body: item.body.map { Data($0.utf8) })
                entry.checks = try Array(Set(try indices(item.checks ?? []))).sorted()
                entries.append(entry)
                sums.append((sums.last ?? 0) + (item.weight ?? 1))
            }
            self.entries = entries
            cumulativeWeights = sums
            perEndpoint = true
            target = Array(Set(entries.map { Redaction.url($0.request.url.absoluteString) })).sorted().joined(separator: ", ")
        } else {
            guard let url = options.url ?? defaultURL else { throw LoadError.invalidArgument("no URL to load") }
            guard url.scheme == "http" || url.scheme == "https", url.host != nil else {
                throw LoadError.invalidArgument("\(Redaction.url(url.absoluteString)) is not an http or https URL")
            }
            var entry = try prepare(name: "\(options.method) \(url.path)", method: options.method, url: url,
                                    extraHeaders: [:], body: options.body)
            entry.checks = try indices([])
            entries = [entry]
            cumulativeWeights = [1]
            perEndpoint = false
            target = Redaction.url(url.absoluteString)
        }
        // Outcomes travel to the recorder as bits of one word per request.
        guard checks.count <= 64 else { throw LoadError.invalidArgument("a run has at most 64 distinct checks, not \(checks.count)") }
        self.checks = checks
    }

    /// The entry of the run's request `number`, in proportion to the weights.
    ///
    /// A function of the number, not a random draw: the golden-ratio sequence `frac(k·φ)` spreads
    /// any run of consecutive numbers evenly over the weights, so a run's mix matches the weights
    /// to within a request or two, and shards that split the numbers send exactly the mix one
    /// process would have sent.
    func pick(number: Int) -> Int {
        guard entries.count > 1, let total = cumulativeWeights.last else { return 0 }
        let fraction = (Double(number) * 0.618_033_988_749_894_9).truncatingRemainder(dividingBy: 1)
        let draw = fraction * total
        var low = 0
        var high = cumulativeWeights.count - 1
        while low < high { // the first running sum above the draw
            let middle = (low + high) / 2
            if cumulativeWeights[middle] > draw { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
