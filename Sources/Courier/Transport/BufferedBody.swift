import Foundation

/// A buffered response's body while it arrives: bytes copied into one malloc'd buffer, which
/// becomes the response's `Data` without a copy when the transfer ends, and goes back to
/// ``RecycledBuffers/bodies`` when the last copy of that `Data` goes (see Docs/Performance.md).
///
/// `Data.append` costs about 900 instructions for a small response's one chunk (its storage's
/// exclusivity checks and range bookkeeping); a `memcpy` here costs a tenth of that (callgrind,
/// Docs/Performance.md, "Decisions"). Non-copyable: it owns the buffer, and gives it back if the transfer
/// ends without a response. Two words, as `Data` is: the capacity is malloc's own record of the
/// block (every waiting query holds a transfer; Docs/Performance.md, "Decisions").
struct BufferedBody: ~Copyable {
    private var bytes: UnsafeMutableRawPointer?
    private(set) var count = 0

    /// What the buffer can hold: malloc's usable size of it, at least what was asked for.
    var capacity: Int { bytes.map(RecycledBuffers.capacity(of:)) ?? 0 }

    init() {}

    deinit { if let bytes { RecycledBuffers.bodies.give(bytes) } }

    var isEmpty: Bool { count == 0 }

    /// Makes room for `total` bytes in all (a Content-Length), so the body is not copied while it grows.
    mutating func reserve(_ total: Int) {
        if total > capacity { resize(to: total) }
    }

    mutating func append(_ chunk: UnsafeRawBufferPointer) {
        guard let source = chunk.baseAddress, !chunk.isEmpty else { return }
        let needed = count + chunk.count
        if needed > capacity { resize(to: max(needed, count * 2, 256)) }
        (bytes! + count).copyMemory(from: source, byteCount: chunk.count)
        count = needed
    }

    /// The body as `Data`, owning the buffer (given back with the last copy of it); empty afterwards.
    /// A buffer that grew well past the body is cut to size first, so a response does not keep
    /// the slack of its growth.
    mutating func take() -> Data {
        guard count > 0 else { return Data() }
        if capacity - count > max(1024, count / 4) { resize(to: count) }
        let data = Data(bytesNoCopy: bytes!, count: count, deallocator: .custom { buffer, _ in RecycledBuffers.bodies.give(buffer) })
        bytes = nil
        count = 0
        return data
    }

    private mutating func resize(to newCapacity: Int) {
        guard let current = bytes else {
            bytes = RecycledBuffers.bodies.take(atLeast: newCapacity)
            return
        }
        guard let grown = realloc(current, newCapacity) else {
            // Out of memory: the same outcome as Data's growth, which traps too.
            fatalError("cannot allocate \(newCapacity) bytes for a response body")
        }
        bytes = grown
    }
}
