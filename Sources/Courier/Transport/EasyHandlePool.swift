/// Reuses easy handles: creating one costs allocations libcurl would repeat per request.
/// Not on libcurl 7.84.0 to 8.0.1, where reuse is unsafe (``Libcurl/handlesAreReusable``): there
/// each handle serves one transfer, and the pool makes them and cleans them up while the loop
/// has nothing else to do (``doChores(_:)``), not while a caller waits.
///
/// Loop-confined. Handles are reset when they come back, so no option leaks from one
/// request into the next, except after a plain GET: its options stay, tagged with their
/// ``Transfer/ReuseProfile``, and the next request either matches that profile exactly or
/// resets the handle first. The connection cache lives in the multi handle and survives; the
/// TLS session cache lives here, shared by every handle the pool makes (``TLSSessionCache``).
struct EasyHandlePool {
    private var idle: [EasyHandle] = []
    /// Where a handle serves one transfer, and few are in use (``aheadWhileInUse``): new handles
    /// made ahead, as many as were taken since the last chores, with the options of the last plain
    /// GET (``CurlMulti/doHandleChores()``), and handles that served their transfer, to clean up.
    /// `curl_easy_init` and `curl_easy_cleanup` cost about 11,000 instructions a request on
    /// libcurl 7.88.1; made ahead, they run while the server answers, not between a response and
    /// the next request (Docs/PerformanceDecisions.md).
    private var spares: [EasyHandle] = []
    private var retired: [EasyHandle] = []
    private var sparesWanted = 0
    let capacity: Int
    private(set) var created = 0
    /// Handles taken that had served a transfer before (``TransportStats``).
    private(set) var reuses = 0
    /// Read once: ``Libcurl/handlesAreReusable`` is a lazily initialised global.
    private let reusesHandles = Libcurl.handlesAreReusable
    /// One TLS session cache for every handle this pool makes; nil when libcurl could not make
    /// one, and then each handle keeps its own sessions, as libcurl does by default.
    private let tlsSessions = TLSSessionCache()

    /// Handles in use below which the pool works ahead. With more, the loop is busy with the
    /// transfers themselves, and moving the work to another moment of the same thread only
    /// costs (measured: 0.744× → 0.718× C at 64 in flight, against 0.794× → 0.818× at 1).
    static let aheadWhileInUse = 4
    /// Handles held by transfers.
    private var inUse: Int { created - pooledCount }
    /// Served handles waiting for ``doChores(_:)`` at most; beyond it one is cleaned up at once.
    static let maximumRetired = 64

    init(capacity: Int) {
        self.capacity = capacity
    }

    mutating func take() -> EasyHandle? {
        if let handle = idle.popLast() {
            reuses += 1
            return handle
        }
        if !reusesHandles {
            if inUse < Self.aheadWhileInUse { sparesWanted += 1 }
            if let handle = spares.popLast() { return handle }
        }
        return make()
    }

    private mutating func make() -> EasyHandle? {
        guard let handle = EasyHandle(sharing: tlsSessions) else { return nil }
        created += 1
        return handle
    }

    mutating func recycle(_ handle: EasyHandle) {
        guard reusesHandles else {
            // A handle that served a transfer is unsafe to reuse: cleaned up by the next chores
            // when few are in use (the loop then waits for the server most of the time).
            if inUse <= Self.aheadWhileInUse && retired.count < Self.maximumRetired {
                retired.append(handle)
            } else {
                created -= 1 // deinit cleans it up now
            }
            return
        }
        if handle.profile == nil { handle.reset() }
        if idle.count < capacity {
            idle.append(handle)
        } else {
            created -= 1 // dropped: deinit cleans it up
        }
    }

    /// Whether ``doChores(_:)`` has work: served handles to clean up, or spares to make.
    var hasChores: Bool { !retired.isEmpty || spares.count < sparesWanted }

    /// Cleans up served handles and makes spares, each given its options by `prepare`.
    mutating func doChores(_ prepare: (EasyHandle) -> Void) {
        created -= retired.count
        retired.removeAll(keepingCapacity: true)
        while spares.count < min(sparesWanted, Self.aheadWhileInUse), let handle = make() {
            prepare(handle)
            spares.append(handle)
        }
        sparesWanted = 0
    }

    /// Handles no transfer holds: idle, spare, or served and waiting to be cleaned up.
    var pooledCount: Int { idle.count + spares.count + retired.count }

    /// Destroys every handle the pool holds; called at shutdown after all transfers are detached.
    mutating func drain() {
        created -= pooledCount
        idle.removeAll()
        spares.removeAll()
        retired.removeAll()
    }
}
