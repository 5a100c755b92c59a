/// The unresolved transfers of a multi handle, for shutdown and the idle sweep.
///
/// A list threaded through the transfers themselves: joining and leaving are a few pointer
/// writes, with no hashing and no table to grow. A dictionary by id did the same job for about
/// 450 instructions per request (callgrind, Docs/Performance.md). Loop-confined, as the
/// transfers are.
struct TransferList {
    private(set) var count = 0
    private var head: Transfer?

    mutating func insert(_ transfer: Transfer) {
        assert(transfer.listNext == nil && transfer.listPrevious == nil && head !== transfer, "a transfer listed twice")
        transfer.listNext = head
        head?.listPrevious = transfer
        head = transfer
        count += 1
    }

    /// Takes `transfer` out; nothing when it is not listed.
    mutating func remove(_ transfer: Transfer) {
        guard transfer.listPrevious != nil || head === transfer else { return }
        if let previous = transfer.listPrevious { previous.listNext = transfer.listNext } else { head = transfer.listNext }
        transfer.listNext?.listPrevious = transfer.listPrevious
        transfer.listNext = nil
        transfer.listPrevious = nil
        count -= 1
    }

    /// Every listed transfer, newest first: a copy, so the caller may resolve them as it goes.
    var all: [Transfer] {
        var all: [Transfer] = []
        all.reserveCapacity(count)
        var next = head
        while let transfer = next {
            all.append(transfer)
            next = transfer.listNext
        }
        return all
    }
}
