/// Reuses easy handles: creating one costs allocations libcurl would repeat per request.
/// Not on libcurl 7.84.0 to 8.0.1, where reuse is unsafe (``Libcurl/handlesAreReusable``).
///
/// Loop-confined. Handles are reset when they come back, so no option leaks from one
/// request into the next, except after a plain GET: its options stay, tagged with their
/// ``Transfer/ReuseProfile``, and the next request either matches that profile exactly or
/// resets the handle first. The connection cache lives in the multi handle and survives; the
/// TLS session cache lives here, shared by every handle the pool makes (``TLSSessionCache``).
struct EasyHandlePool {
    private var idle: [EasyHandle] = []
    let capacity: Int
    private(set) var created = 0
    /// Read once: ``Libcurl/handlesAreReusable`` is a lazily initialised global.
    private let reusesHandles = Libcurl.handlesAreReusable
    /// One TLS session cache for every handle this pool makes; nil when libcurl could not make
    /// one, and then each handle keeps its own sessions, as libcurl does by default.
    private let tlsSessions = TLSSessionCache()

    init(capacity: Int) {
        self.capacity = capacity
    }

    mutating func take() -> EasyHandle? {
        if let handle = idle.popLast() { return handle }
        guard let handle = EasyHandle(sharing: tlsSessions) else { return nil }
        created += 1
        return handle
    }

    mutating func recycle(_ handle: EasyHandle) {
        guard reusesHandles else {
            created -= 1 // deinit cleans it up: a handle that served a transfer is unsafe to reuse
            return
        }
        if handle.profile == nil { handle.reset() }
        if idle.count < capacity {
            idle.append(handle)
        } else {
            created -= 1 // dropped: deinit cleans it up
        }
    }

    var pooledCount: Int { idle.count }

    /// Destroys every idle handle; called at shutdown after all transfers are detached.
    mutating func drain() {
        created -= idle.count
        idle.removeAll()
    }
}
