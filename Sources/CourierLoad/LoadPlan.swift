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
        /// Its parts with placeholders, filled for each request; nil when it is constant.
        var template: RequestTemplate?
        /// A flow's step: the values it takes from its response for later steps.
        var extract: [(name: String, extractor: LoadExtractor)] = []
        /// A flow's step: the pause after it, before the next step.
        var thinkNanoseconds: UInt64 = 0

        /// Every check of the request failed: no response came to meet them.
        var checksFailed: LoadRecorder.CheckOutcomes {
            LoadRecorder.CheckOutcomes(evaluated: checks.reduce(0) { $0 | 1 << UInt64($1) })
        }
    }

    /// The rows templates take their values from.
    let data: LoadData?
    /// Column name → index in a row of ``data``.
    private let columnIndex: [String: Int]
    /// Per entry, its request filled from each row, when it depends on the row alone and the
    /// rows are few enough: filled and checked before the run, so a bad row is an error then,
    /// and a request costs no filling (a fifth of a request's CPU, measured, for a templated URL).
    private let filled: [[HTTPRequest]?]
    /// Rows × templated entries up to which requests are filled before the run.
    static let fillLimit = 200_000

    /// Every distinct check of the run: the command line's, then the scenario's in order.
    let checks: [LoadCheck]

    let entries: [Entry]
    /// What a run picks from: a request, or a flow's steps in order (indices into ``entries``).
    enum Item: Sendable {
        case request(Int)
        case flow([Int])
    }
    let items: [Item]
    /// Running sums of the items' weights, for picking by a uniform draw.
    private let cumulativeWeights: [Double]
    /// Whether results keep per-endpoint figures (a scenario was given).
    let perEndpoint: Bool
    let target: String

    init(options: LoadOptions, defaultURL: URL?) throws {
        var headers = HTTPHeaders()
        for (name, value) in options.headers { headers.add(name: name, value: value) }
        if let token = options.bearerToken { headers["Authorization"] = "Bearer \(token)" }
        let timeouts = Timeouts(total: options.timeout)

        let data = options.data
        let columns = Dictionary(uniqueKeysWithValues: (data?.columns ?? []).enumerated().map { ($1, $0) })

        /// - Parameter where: the request's place in the options, for errors (`scenario "list"`).
        /// - Parameter known: values a flow's earlier steps extract, which templates may name too.
        /// - Parameter inFlow: a flow's step, whose errors say that an earlier step could extract the name.
        func prepare(name: String, method: String, url urlText: String, extraHeaders: [String: String], body: Data?,
                     where place: String, known: Set<String> = [], inFlow: Bool = false) throws -> Entry {
            var template = RequestTemplate()
            let urlTemplate = try LoadTemplate(urlText, context: "\(place) URL")
            if !urlTemplate.isConstant { template.url = urlTemplate }
            let url: URL
            if urlTemplate.isConstant {
                guard let parsed = URL(string: urlText), ["http", "https"].contains(parsed.scheme?.lowercased() ?? ""),
                      parsed.host != nil else {
                    throw LoadError.invalidArgument("\(place): \(Redaction.url(urlText)) is not an http or https URL")
                }
                url = parsed
            } else {
                // A templated URL is checked as far as its text fixes it; the rest, filled, when each
                // request is built (a bad one fails that request, `invalidRequest`).
                try urlTemplate.checkURLPrefix(place: place)
                url = LoadTemplate.standInURL
            }
            var request = HTTPRequest(method: HTTPMethod(rawValue: method.uppercased()), url: url, headers: headers)
            for (headerName, value) in extraHeaders.sorted(by: { $0.key < $1.key }) { request.headers[headerName] = value }
            for field in request.headers {
                let value = try LoadTemplate(field.value, context: "\(place) header \(field.name)")
                if !value.isConstant { template.headers.append((field.name, value)) }
            }
            if let body {
                request.body = .data(body)
                if request.headers["Content-Type"] == nil { request.headers["Content-Type"] = "application/json" }
                if let text = String(data: body, encoding: .utf8), text.contains("{{") {
                    template.body = try LoadTemplate(text, context: "\(place) body")
                }
            }
            request.timeouts = timeouts
            do {
                try request.validate()
            } catch {
                throw LoadError.invalidArgument("\(name): \(error)")
            }
            // Every name a template takes must be a column: checked now, not once per request.
            let parts = [("URL", template.url)] + template.headers.map { ("header \($0.name)", $0.value) } + [("body", template.body)]
            let noEarlierStep = inFlow ? ", no earlier step of the flow extracts it" : ""
            for case let (part, value?) in parts {
                for missing in value.names where columns[missing] == nil && !known.contains(missing) {
                    guard let data else {
                        throw LoadError.invalidArgument("\(place) \(part): {{\(missing)}} is not a built-in (uuid, seq, randomInt, now)\(noEarlierStep), and no --data file gives columns")
                    }
                    throw LoadError.invalidArgument("\(place) \(part): {{\(missing)}} names no column of \(data.source) (columns: \(data.columns.joined(separator: ", ")))\(noEarlierStep)")
                }
            }
            return Entry(name: name, request: request, bodySize: body?.count ?? 0, template: template.isEmpty ? nil : template)
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
            var items: [Item] = []
            var sums: [Double] = []
            var seen = Set<String>()
            /// The request as an entry, its name made unique among the run's.
            func entry(_ item: Scenario.Request, prefix: String = "", known: Set<String> = [], inFlow: Bool = false) throws -> Entry {
                let method = item.method ?? "GET"
                let path = URL(string: item.url)?.path ?? item.url
                var name = prefix + (item.name ?? "\(method.uppercased()) \(path.isEmpty ? "/" : path)")
                if seen.contains(name) { name += " #\(entries.count + 1)" }
                seen.insert(name)
                if !item.url.contains("{{") {
                    guard let url = URL(string: item.url), url.scheme != nil, url.host != nil else {
                        throw LoadError.invalidScenario("\(Redaction.url(item.url)) is not an absolute URL")
                    }
                }
                var checked = try prepare(name: name, method: method, url: item.url, extraHeaders: item.headers ?? [:],
                                          body: item.body.map { Data($0.utf8) }, where: "scenario request \"\(name)\"", known: known, inFlow: inFlow)
                checked.checks = Array(Set(try indices(item.checks ?? []))).sorted()
                return checked
            }
            for item in scenario.requests {
                entries.append(try entry(item))
                items.append(.request(entries.count - 1))
                sums.append((sums.last ?? 0) + (item.weight ?? 1))
            }
            for flow in scenario.flows {
                // Each step may use what the steps before it extract.
                var known = Set<String>()
                var steps: [Int] = []
                for step in flow.steps {
                    var prepared = try entry(step, prefix: flow.name + "/", known: known, inFlow: true)
                    for (name, expression) in (step.extract ?? [:]).sorted(by: { $0.key < $1.key }) {
                        prepared.extract.append((name, try LoadExtractor(expression, context: "flow \"\(flow.name)\" step \"\(prepared.name)\" extract \(name)")))
                        known.insert(name)
                    }
                    if let think = step.think {
                        guard think.last?.isLetter == true, let microseconds = Threshold.parseDuration(think) else {
                            throw LoadError.invalidScenario("flow \"\(flow.name)\" step \"\(prepared.name)\": think \(think) is not a duration (as in 500ms, 2s)")
                        }
                        guard microseconds <= LoadOptions.longestSeconds * 1e6 else {
                            throw LoadError.invalidScenario("flow \"\(flow.name)\" step \"\(prepared.name)\": think \(think) is longer than ten years")
                        }
                        prepared.thinkNanoseconds = UInt64(saturating: microseconds * 1000)
                    }
                    entries.append(prepared)
                    steps.append(entries.count - 1)
                }
                items.append(.flow(steps))
                sums.append((sums.last ?? 0) + (flow.weight ?? 1))
            }
            self.entries = entries
            self.items = items
            cumulativeWeights = sums
            perEndpoint = true
            let urls = scenario.requests.map(\.url) + scenario.flows.flatMap { $0.steps.map(\.url) }
            target = Array(Set(urls.map { Redaction.url($0) })).sorted().joined(separator: ", ")
        } else {
            guard let urlText = options.urlTemplate ?? (options.url ?? defaultURL)?.absoluteString else {
                throw LoadError.invalidArgument("no URL to load")
            }
            let path = URL(string: urlText)?.path ?? urlText
            var entry = try prepare(name: "\(options.method) \(path)", method: options.method, url: urlText,
                                    extraHeaders: [:], body: options.body, where: "the request")
            entry.checks = try indices([])
            entries = [entry]
            items = [.request(0)]
            cumulativeWeights = [1]
            perEndpoint = false
            target = Redaction.url(urlText)
        }
        // Outcomes travel to the recorder as bits of one word per request.
        guard checks.count <= 64 else { throw LoadError.invalidArgument("a run has at most 64 distinct checks, not \(checks.count)") }
        self.checks = checks
        self.data = data
        columnIndex = columns
        let templated = entries.filter { $0.template != nil }.count
        var filled: [[HTTPRequest]?] = []
        for entry in entries {
            guard let data, let template = entry.template, template.dependsOnRowAlone, template.names.allSatisfy({ columns[$0] != nil }),
                  data.count * templated <= Self.fillLimit else {
                filled.append(nil)
                continue
            }
            filled.append(try data.rows.enumerated().map { number, row in
                var request = entry.request
                do {
                    try template.render(into: &request, number: number) { name in columns[name].map { row[$0] } }
                } catch {
                    throw LoadError.invalidArgument("\(data.source) row \(number + 1), for \(entry.name): \((error as? LoadError)?.message ?? "\(error)")")
                }
                return request
            })
        }
        self.filled = filled
    }

    /// The request the run sends as its request `number`, from entry `index`: the prepared one,
    /// or its template filled from the number's data row and `values` (a flow's extractions).
    /// Nil when the data has run out.
    func request(_ index: Int, number: Int, values: [String: String] = [:]) throws -> HTTPRequest? {
        var rowIndex: Int?
        if let data {
            guard let found = data.rowIndex(for: number) else { return nil }
            rowIndex = found
        }
        // The entry's fields read in place, not the entry copied (see LoadWorker.send).
        guard let template = entries[index].template else { return entries[index].request }
        if let rowIndex, let requests = filled[index] { return requests[rowIndex] }
        var request = entries[index].request
        let row = rowIndex.flatMap { data?.rows[$0] }
        try template.render(into: &request, number: number) { name in values[name] ?? columnIndex[name].flatMap { row?[$0] } }
        return request
    }

    /// The item (``items``) of the run's request `number`, in proportion to the weights.
    ///
    /// A function of the number, not a random draw: the golden-ratio sequence `frac(k·φ)` spreads
    /// any run of consecutive numbers evenly over the weights, so a run's mix matches the weights
    /// to within a request or two, and shards that split the numbers send exactly the mix one
    /// process would have sent.
    func pick(number: Int) -> Int {
        guard items.count > 1, let total = cumulativeWeights.last else { return 0 }
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
