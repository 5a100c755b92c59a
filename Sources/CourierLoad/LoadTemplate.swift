import Courier
import Foundation

/// Text with `{{…}}` placeholders, filled for each request: a column of the ``LoadData`` row,
/// or a built-in.
///
/// Built-ins: `{{uuid}}` (a random UUID), `{{seq}}` (the request's number in the whole run, from
/// 0), `{{randomInt 1 1000}}` (a uniform integer, both ends included), `{{now}}` (the time, ISO
/// 8601 in UTC with milliseconds). Any other name is a column of the data file; flows add the
/// values their steps extract.
struct LoadTemplate: Sendable, Hashable {
    enum Part: Sendable, Hashable {
        case text(String)
        case value(String)
        case uuid
        case sequence
        case randomInt(ClosedRange<Int>)
        case now
    }

    let parts: [Part]
    private static let timestamp = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// Whether it has any placeholder; a constant template needs no filling.
    var isConstant: Bool { parts.allSatisfy { if case .text = $0 { true } else { false } } }

    /// Whether it uses a built-in, whose value changes from request to request.
    var hasBuiltIns: Bool { parts.contains { switch $0 { case .text, .value: false; default: true } } }

    /// The names it takes from a data row or a flow's values.
    var names: [String] { parts.compactMap { if case .value(let name) = $0 { name } else { nil } } }

    /// - Parameter context: where the text came from (`--body`, `scenario "create" url`), for errors.
    /// - Throws: ``LoadError/invalidArgument(_:)`` for an unclosed `{{` or a malformed built-in.
    init(_ text: String, context: String) throws {
        var parts: [Part] = []
        var rest = Substring(text)
        while let open = rest.range(of: "{{") {
            if open.lowerBound > rest.startIndex { parts.append(.text(String(rest[..<open.lowerBound]))) }
            guard let close = rest[open.upperBound...].range(of: "}}") else {
                throw LoadError.invalidArgument("\(context): a {{ is not closed by }}")
            }
            let words = rest[open.upperBound..<close.lowerBound].split(whereSeparator: \.isWhitespace).map(String.init)
            parts.append(try Self.placeholder(words, context: context))
            rest = rest[close.upperBound...]
        }
        if !rest.isEmpty { parts.append(.text(String(rest))) }
        self.parts = parts
    }

    private static func placeholder(_ words: [String], context: String) throws -> Part {
        guard let name = words.first else { throw LoadError.invalidArgument("\(context): an empty {{}}") }
        switch name {
        case "uuid", "seq", "now":
            guard words.count == 1 else { throw LoadError.invalidArgument("\(context): {{\(name)}} takes no arguments") }
            return name == "uuid" ? .uuid : name == "seq" ? .sequence : .now
        case "randomInt":
            guard words.count == 3, let low = Int(words[1]), let high = Int(words[2]), low <= high else {
                throw LoadError.invalidArgument("\(context): expected {{randomInt LOW HIGH}} with LOW <= HIGH, as {{randomInt 1 1000}}")
            }
            return .randomInt(low...high)
        default:
            guard words.count == 1 else { throw LoadError.invalidArgument("\(context): {{\(words.joined(separator: " "))}} is not a column or a built-in") }
            return .value(name)
        }
    }

    /// The text for request `number`; `value` gives each name's value (every name is known to it:
    /// names are checked before the run).
    func render(number: Int, value: (String) -> String?) -> String {
        var out = ""
        for part in parts {
            switch part {
            case .text(let text): out += text
            case .value(let name): out += value(name) ?? ""
            case .uuid: out += UUID().uuidString.lowercased()
            case .sequence: out += String(number)
            case .randomInt(let range): out += String(Int.random(in: range))
            case .now: out += Self.timestamp.format(Date())
            }
        }
        return out
    }
}

extension LoadTemplate {
    /// Where a request whose whole URL is templated points until it is filled: never sent.
    static let standInURL = URL(string: "http://url-template.invalid/")!

    /// Checks what the text before the first placeholder fixes of a URL: a scheme, if it gives
    /// one, is http or https; an authority it gives whole (followed by `/`, `?` or `#`) is a host
    /// and a port in range. A placeholder may stand anywhere, the whole URL included (a
    /// `Location` a flow's last step extracted); what it fills is checked per request.
    func checkURLPrefix(place: String) throws {
        guard case .text(let prefix)? = parts.first else { return } // the URL starts with a placeholder
        func refuse(_ why: String) -> LoadError {
            LoadError.invalidArgument("\(place): \(Redaction.url(prefix))… \(why)")
        }
        guard let colon = prefix.firstIndex(of: ":") else { return }
        let scheme = prefix[..<colon].lowercased()
        guard scheme == "http" || scheme == "https" else { throw refuse("is not an http or https URL") }
        let afterScheme = prefix[prefix.index(after: colon)...]
        guard afterScheme.hasPrefix("//") else {
            if afterScheme.isEmpty { return }
            throw refuse("is not an http or https URL")
        }
        let authority = afterScheme.dropFirst(2)
        guard let end = authority.firstIndex(where: { "/?#".contains($0) }) else { return } // the host or port is templated
        let fixed = String(prefix[..<end])
        guard let url = URL(string: fixed + "/"), url.host?.isEmpty == false else { throw refuse("has no host") }
        do {
            try HTTPRequest(url: url).validate()
        } catch {
            throw refuse("\(error)")
        }
    }
}

/// The parts of a request that have placeholders: filled into a copy of the prepared request for
/// each request sent. Constant parts stay as they were prepared.
struct RequestTemplate: Sendable {
    var url: LoadTemplate?
    var headers: [(name: String, value: LoadTemplate)] = []
    var body: LoadTemplate?

    var isEmpty: Bool { url == nil && headers.isEmpty && body == nil }

    /// Every name its parts take, from a data row or a flow's values.
    var names: [String] { (url?.names ?? []) + headers.flatMap(\.value.names) + (body?.names ?? []) }

    /// Whether it depends on the data row alone (no built-in), so it can be filled once a row.
    var dependsOnRowAlone: Bool { !(url?.hasBuiltIns ?? false) && !headers.contains { $0.value.hasBuiltIns } && !(body?.hasBuiltIns ?? false) }

    /// Fills request `number`; a filled URL that does not parse, or a value with a line break in
    /// a header, is an error of that request alone.
    func render(into request: inout HTTPRequest, number: Int, value: (String) -> String?) throws {
        if let url {
            let text = url.render(number: number, value: value)
            guard let filled = URL(string: text), filled.host != nil else {
                throw LoadError.invalidArgument("the filled URL \(Redaction.url(text)) is not a URL")
            }
            request.url = filled
        }
        for header in headers { request.headers[header.name] = header.value.render(number: number, value: value) }
        if let body { request.body = .data(Data(body.render(number: number, value: value).utf8)) }
        if !headers.isEmpty { try request.validate() }
    }
}
