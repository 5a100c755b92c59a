import CourierSync
import Hummingbird

/// Named gates a test opens: `GET /gate/{name}` answers `{"gate": name}` only once ``open(_:)``
/// was called for that name, or ends when the server stops.
///
/// A test that needs a request in flight while it does something else holds it at a gate for
/// exactly as long as it needs. A delay has to guess how long is enough, and on a loaded machine
/// the test's own steps can take longer than any guess short enough to keep the suite quick.
public final class TestServerGates: Sendable {
    private let opened = LockedValue<Set<String>>([])

    init() {}

    /// Lets every request waiting at gate `name`, and every later one, through.
    public func open(_ name: String) {
        opened.withLock { _ = $0.insert(name) }
    }

    func isOpen(_ name: String) -> Bool { opened.withLock { $0.contains(name) } }

    func add(to router: Router<BasicRequestContext>, lifecycle: ServerLifecycle) {
        router.get("/gate/{name}") { _, context in
            let name = try context.parameters.require("name")
            while !self.isOpen(name) { try await lifecycle.pause(.milliseconds(5)) }
            return Passed(gate: name)
        }
    }

    /// What `/gate/{name}` answers once it opens (encoded as JSON, so any name is escaped).
    struct Passed: Codable, ResponseEncodable {
        var gate: String
    }
}
