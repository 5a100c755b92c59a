import CourierSync
import Synchronization

/// The names added with ``Redaction/addSecretNames(_:)``, normalized. Read on every scan, so a
/// flag spares the lock until the first name is added (none are, in most processes).
enum AddedSecretNames {
    private static let any = Atomic<Bool>(false)
    private static let names = LockedValue<Set<String>>([])

    static func add(_ normalized: [String]) {
        guard !normalized.isEmpty else { return }
        names.withLock { $0.formUnion(normalized) }
        any.store(true, ordering: .releasing)
    }

    static func contain(_ normalized: String) -> Bool {
        guard any.load(ordering: .acquiring) else { return false }
        return names.withLock { $0.contains(normalized) }
    }
}
