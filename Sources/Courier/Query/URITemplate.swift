/// An RFC 6570 URI template, all four levels: the operators `{var}`, `{+var}`, `{#var}`,
/// `{.var}`, `{/var}`, `{;var}`, `{?var}` and `{&var}`, each with one or more comma-separated
/// variables, the prefix modifier (`{var:3}`) and explode (`{var*}`); values are strings,
/// lists or associative arrays (``Value``).
///
/// ```swift
/// let template: URITemplate = "v1/{+name}/items{?pageSize,fields*}"
/// try template.expand(["name": "projects/p1", "pageSize": "10", "fields": ["id", "title"]])
/// // "v1/projects/p1/items?pageSize=10&fields=id&fields=title"
/// ```
///
/// Values are percent-encoded as the operator requires, so `{id}` with `../x` or `a/b` stays
/// one path segment (`..%2Fx`, `a%2Fb`). Beyond the RFC, a value that *is* a dot segment
/// (`.` or `..`) is encoded too (`%2E%2E`): otherwise the URL's path would be resolved upward.
/// `{+path}` keeps slashes by design, but still encodes any `.` or `..` segment.
///
/// A template the RFC's grammar does not allow (an unclosed `{`, a reserved operator such as
/// `{!var}`, a name with a space) is kept as given, and expanding it throws
/// ``QueryError/invalidTemplate``; ``init(validating:)`` reports it at once. The suite checks
/// every case of the RFC's shared test suite (uritemplate-test, pinned in Tests/Conformance).
public struct URITemplate: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let template: String
    /// The parsed template, or why it is not one.
    let parsed: Result<[Part], QueryError>

    /// A template; one the RFC's grammar does not allow throws when it is expanded.
    public init(_ template: String) {
        self.template = template
        parsed = Result { () throws(QueryError) in try Self.parse(template) }
    }

    /// A template, or ``QueryError/invalidTemplate`` naming where `template` breaks the RFC's grammar.
    public init(validating template: String) throws(QueryError) {
        self.init(template)
        if case .failure(let error) = parsed { throw error }
    }

    public init(stringLiteral value: String) {
        self.init(value)
    }

    public var description: String { template }

    public static func == (lhs: URITemplate, rhs: URITemplate) -> Bool {
        lhs.template == rhs.template
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(template)
    }

    /// The names of every variable, in order (none for a template that is not valid).
    public var variableNames: [String] {
        guard case .success(let parts) = parsed else { return [] }
        return parts.flatMap { part -> [String] in
            if case .expression(_, let specs) = part { return specs.map(\.name) }
            return []
        }
    }

    /// Expands the template with string values. With `requireAll`, a missing variable is an
    /// error (a path needs every parameter); otherwise it is left out, as the RFC says.
    public func expand(_ variables: [String: String], requireAll: Bool = false) throws(QueryError) -> String {
        try expand(requireAll: requireAll) { name in variables[name].map(Value.string) }
    }

    /// Expands the template with string, list and associative-array values. With `requireAll`,
    /// a missing or undefined variable (an empty list or array) is an error; otherwise it is
    /// left out, as the RFC says. A prefix modifier on a list or an array is an error too: the
    /// RFC defines none.
    ///
    /// Disfavoured so that `expand([:])` and string-only literals keep choosing the string
    /// overload, as they did before this one existed.
    @_disfavoredOverload
    public func expand(_ variables: [String: Value], requireAll: Bool = false) throws(QueryError) -> String {
        try expand(requireAll: requireAll) { name in variables[name] }
    }
}
