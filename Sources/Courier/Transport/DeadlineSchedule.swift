/// Something a ``DeadlineSchedule`` can hold: it carries its own links, so scheduling and
/// removing allocate nothing and removal is O(1).
protocol DeadlineScheduled: AnyObject {
    var deadlineLinks: DeadlineLinks<Self> { get set }
}

/// Which of a transfer's deadlines a schedule keeps.
enum DeadlineKind {
    /// The total timeout, from attach to the last byte.
    case total
    /// The connect timeout, from the start of a new connection (name lookup, TCP, TLS) to the
    /// request going out on it.
    case connect
}

/// Where a node sits in one schedule: its neighbours, when it is due, and its list.
struct DeadlineLink<Node: AnyObject> {
    var due: UInt64 = 0
    /// The index of its list in the schedule; -1 while not scheduled. An `Int`: the link is 32
    /// bytes either way, and the index is used as one.
    var list = -1
    /// Unretained: a scheduled node is kept alive by its owner (an attached handle by the
    /// multi handle), which removes it before letting it go.
    var previous: Unmanaged<Node>?
    var next: Unmanaged<Node>?

    var isScheduled: Bool { list >= 0 }
}

/// A node's link in each kind of schedule.
struct DeadlineLinks<Node: AnyObject> {
    var total = DeadlineLink<Node>()
    var connect = DeadlineLink<Node>()

    subscript(kind: DeadlineKind) -> DeadlineLink<Node> {
        get {
            switch kind {
            case .total: total
            case .connect: connect
            }
        }
        set {
            switch kind {
            case .total: total = newValue
            case .connect: connect = newValue
            }
        }
    }
}

/// Deadlines Courier keeps itself instead of libcurl's timers: libcurl arms a timer in its
/// splay tree when each transfer with `CURLOPT_TIMEOUT_MS` or `CURLOPT_CONNECTTIMEOUT_MS`
/// starts and clears it at the end, about 800 instructions a request for each
/// (Docs/PerformanceDecisions.md).
///
/// Nodes that share a timeout are due in the order they were scheduled, because the clock only
/// moves forward. So each distinct timeout gets a FIFO list: scheduling appends, removal unlinks,
/// and the earliest deadline is the earliest of a few list heads. A min-heap measured worse: its
/// sift on each removal took back most of what leaving libcurl's timer saved. A timeout that
/// finds every keyed list taken by others goes to one more list kept in deadline order, inserted
/// by walking back from its tail: still correct when every request has a timeout of its own,
/// at a cost that grows with how many later deadlines it passes.
struct DeadlineSchedule<Node: DeadlineScheduled> {
    struct List {
        /// The timeout every node of a keyed list shares; unused for the ordered list.
        var interval: UInt64
        var head: Unmanaged<Node>?
        var tail: Unmanaged<Node>?
        var count = 0
    }

    /// Lists keyed by one timeout each; the list after them is the ordered one.
    static var keyedLists: Int { 4 }

    let kind: DeadlineKind
    private(set) var lists: [List]
    /// The keyed list used last: most requests share one timeout.
    private var lastList = 0

    init(kind: DeadlineKind) {
        self.kind = kind
        lists = Array(repeating: List(interval: 0), count: Self.keyedLists + 1)
    }

    /// How many nodes are scheduled.
    var count: Int { lists.reduce(0) { $0 + $1.count } }

    /// Schedules `node`, not yet scheduled here, to be due `interval` nanoseconds after `now`. A
    /// deadline past the end of the clock is never due, so it is not scheduled.
    mutating func schedule(_ node: Node, interval: UInt64, now: UInt64) {
        assert(!node.deadlineLinks[kind].isScheduled, "scheduled twice")
        let (due, overflow) = now.addingReportingOverflow(interval)
        guard !overflow, due != .max else { return }
        let index = keyedList(for: interval)
        if index < Self.keyedLists {
            append(node, due: due, to: index)
        } else {
            insertInOrder(node, due: due)
        }
    }

    /// Takes `node` out; nothing if it is not scheduled here.
    mutating func remove(_ node: Node) {
        let link = node.deadlineLinks[kind]
        guard link.isScheduled else { return }
        let index = link.list
        if let previous = link.previous {
            previous._withUnsafeGuaranteedRef { $0.deadlineLinks[kind].next = link.next }
        } else {
            lists[index].head = link.next
        }
        if let next = link.next {
            next._withUnsafeGuaranteedRef { $0.deadlineLinks[kind].previous = link.previous }
        } else {
            lists[index].tail = link.previous
        }
        lists[index].count -= 1
        node.deadlineLinks[kind] = DeadlineLink()
    }

    /// When the earliest scheduled node is due, or nil when none is scheduled.
    var earliest: UInt64? {
        var earliest: UInt64?
        for list in lists {
            guard let head = list.head else { continue }
            let due = head._withUnsafeGuaranteedRef { $0.deadlineLinks[kind].due }
            earliest = min(earliest ?? .max, due)
        }
        return earliest
    }

    /// Takes out and returns a node due at `now`, the earliest of the list heads, or nil when none is.
    mutating func takeDue(now: UInt64) -> Node? {
        var found: Unmanaged<Node>?
        var foundDue = UInt64.max
        for list in lists {
            guard let head = list.head else { continue }
            let due = head._withUnsafeGuaranteedRef { $0.deadlineLinks[kind].due }
            if due <= now, due < foundDue {
                found = head
                foundDue = due
            }
        }
        guard let found else { return nil }
        let node = found.takeUnretainedValue()
        remove(node)
        return node
    }

    // MARK: Placing

    /// The keyed list of `interval`: the last one used, another with that interval, or an empty
    /// one taken over; ``keyedLists`` when all are held by other intervals.
    private mutating func keyedList(for interval: UInt64) -> Int {
        if lists[lastList].interval == interval { return lastList }
        var empty: Int?
        for index in 0..<Self.keyedLists {
            if lists[index].count > 0 {
                if lists[index].interval == interval {
                    lastList = index
                    return index
                }
            } else if empty == nil {
                empty = index
            }
        }
        guard let empty else { return Self.keyedLists }
        lists[empty].interval = interval
        lastList = empty
        return empty
    }

    private mutating func append(_ node: Node, due: UInt64, to index: Int) {
        let unmanaged = Unmanaged.passUnretained(node)
        node.deadlineLinks[kind] = DeadlineLink(due: due, list: index, previous: lists[index].tail, next: nil)
        if let tail = lists[index].tail {
            tail._withUnsafeGuaranteedRef { $0.deadlineLinks[kind].next = unmanaged }
        } else {
            lists[index].head = unmanaged
        }
        lists[index].tail = unmanaged
        lists[index].count += 1
    }

    /// Into the ordered list, after every node due no later (so equal deadlines keep their order).
    private mutating func insertInOrder(_ node: Node, due: UInt64) {
        let index = Self.keyedLists
        var after = lists[index].tail
        while let candidate = after, candidate._withUnsafeGuaranteedRef({ $0.deadlineLinks[kind].due }) > due {
            after = candidate._withUnsafeGuaranteedRef { $0.deadlineLinks[kind].previous }
        }
        guard let after else {
            // First in the list.
            let unmanaged = Unmanaged.passUnretained(node)
            let oldHead = lists[index].head
            node.deadlineLinks[kind] = DeadlineLink(due: due, list: index, previous: nil, next: oldHead)
            if let oldHead {
                oldHead._withUnsafeGuaranteedRef { $0.deadlineLinks[kind].previous = unmanaged }
            } else {
                lists[index].tail = unmanaged
            }
            lists[index].head = unmanaged
            lists[index].count += 1
            return
        }
        let unmanaged = Unmanaged.passUnretained(node)
        let next = after._withUnsafeGuaranteedRef { $0.deadlineLinks[kind].next }
        node.deadlineLinks[kind] = DeadlineLink(due: due, list: index, previous: after, next: next)
        after._withUnsafeGuaranteedRef { $0.deadlineLinks[kind].next = unmanaged }
        if let next {
            next._withUnsafeGuaranteedRef { $0.deadlineLinks[kind].previous = unmanaged }
        } else {
            lists[index].tail = unmanaged
        }
        lists[index].count += 1
    }
}
