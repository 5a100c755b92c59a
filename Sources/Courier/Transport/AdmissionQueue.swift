import DequeModule

/// Decides which transfers may hold a curl handle: at most `perKeyLimit` per host and
/// `totalLimit` overall, first come first served.
///
/// Waiting transfers hold no easy handle (libcurl allocates ~20 KiB per handle), which is
/// what lets 10,000 queries be in flight with little memory. Keying by host stops one slow
/// host from blocking the others. A pure value type, tested without IO.
struct AdmissionQueue<Element, Key: Hashable> {
    let perKeyLimit: Int
    let totalLimit: Int

    private(set) var runningTotal = 0
    private var running: [Key: Int] = [:]
    /// One key's running count, kept out of `running`: a service that talks to one host (the
    /// common case) admits and releases with a key comparison and no hashing. Each access of
    /// `running` hashes the key (SipHash), about 150 instructions a request for the two. The key
    /// gives its place to another only while it runs nothing.
    private var hot: (key: Key, count: Int)?
    private var waiting: [Key: Deque<(sequence: UInt64, element: Element)>] = [:]
    private var nextSequence: UInt64 = 0
    private(set) var waitingCount = 0

    init(perKeyLimit: Int, totalLimit: Int) {
        self.perKeyLimit = max(1, perKeyLimit)
        self.totalLimit = max(1, totalLimit)
    }

    /// Returns true when `element` may run now (and counts it as running); otherwise queues it.
    ///
    /// The common case, nothing waiting, costs one lookup of `key`: the count is read and raised
    /// in one access (each lookup hashes the key again).
    mutating func admit(_ element: Element, key: Key) -> Bool {
        if runningTotal < totalLimit, waitingCount == 0 || waiting[key] == nil {
            let limit = perKeyLimit
            let admitted = withCount(of: key, absent: 0) { count -> Bool in
                guard count < limit else { return false }
                count += 1
                return true
            }
            if admitted {
                runningTotal += 1
                return true
            }
        }
        waiting[key, default: []].append((nextSequence, element))
        nextSequence &+= 1
        waitingCount += 1
        return false
    }

    /// A running element under `key` ended. A key's count may stay at zero while others run;
    /// the table empties whenever nothing runs or waits, so keys do not pile up.
    mutating func release(key: Key) {
        runningTotal -= 1
        withCount(of: key, absent: 1) { $0 -= 1 }
        if runningTotal == 0, waitingCount == 0 { running.removeAll(keepingCapacity: true) }
    }

    /// The oldest waiting element that may run now, counted as running; nil when none may.
    mutating func nextAdmissible() -> (element: Element, key: Key)? {
        guard runningTotal < totalLimit, waitingCount > 0 else { return nil }
        var best: (key: Key, sequence: UInt64)?
        for (key, queue) in waiting where runningCount(of: key) < perKeyLimit {
            if let head = queue.first, best == nil || head.sequence < best!.sequence {
                best = (key, head.sequence)
            }
        }
        guard let key = best?.key else { return nil }
        let element = waiting[key]!.removeFirst().element
        if waiting[key]!.isEmpty { waiting[key] = nil }
        waitingCount -= 1
        markRunning(key)
        return (element, key)
    }

    /// Every waiting element, removed; used at shutdown.
    mutating func removeAllWaiting() -> [Element] {
        let all = waiting.values.flatMap { $0 }.sorted { $0.sequence < $1.sequence }.map(\.element)
        waiting.removeAll()
        waitingCount = 0
        return all
    }

    private mutating func markRunning(_ key: Key) {
        runningTotal += 1
        withCount(of: key, absent: 0) { $0 += 1 }
    }

    private func runningCount(of key: Key) -> Int {
        if let hot, hot.key == key { return hot.count }
        return running[key, default: 0]
    }

    /// Runs `body` on `key`'s running count (`absent` when it has none), wherever it is kept.
    private mutating func withCount<R>(of key: Key, absent: Int, _ body: (inout Int) -> R) -> R {
        if hot != nil, hot!.key == key { return body(&hot!.count) }
        guard hot == nil || hot!.count == 0 else { return body(&running[key, default: absent]) }
        // The hot key runs nothing: this one takes its place, and its count leaves the table.
        var count = running.removeValue(forKey: key) ?? absent
        defer { hot = (key, count) }
        return body(&count)
    }
}
