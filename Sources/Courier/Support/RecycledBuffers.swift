import CCurl // malloc_usable_size, through its shim
import CourierSync
import Foundation

/// Response buffers handed back by whoever released them, for the loop thread to fill again.
///
/// The loop thread writes each response's header and body bytes into buffers it allocates, and
/// the caller's thread frees them with the response. With glibc that is a one-way flow: a block
/// freed on another thread never returns to the loop's per-thread cache, so every allocation the
/// loop makes (libcurl's too) misses it and takes the loop's arena lock, which the callers' frees
/// take as well. At 64 in flight the loop thread is the bottleneck, and it spent 14 % of its time
/// in malloc and free against C's 7.5 %, with futex calls on their lock (`perf`, Docs/Performance.md,
/// Docs/Performance.md, "Decisions"). Returned here instead, the same blocks circulate and neither side touches the arena.
///
/// Bounded: a buffer larger than `largest`, or one that would take the retained bytes past
/// `retainedLimit`, is freed as before.
final class RecycledBuffers: Sendable {
    private struct Stack {
        var buffers: [(address: UInt, size: Int)] = [] // addresses: raw pointers are not Sendable
        var retainedBytes = 0
    }

    /// A pthread mutex (``LockedValue``), not `Synchronization.Mutex`: ThreadSanitizer sees the
    /// first, so it also sees that a buffer's bytes written by one thread happen before another
    /// thread reuses it.
    private let stack = LockedValue(Stack())
    private let largest: Int
    private let retainedLimit: Int

    init(largest: Int, retainedLimit: Int) {
        self.largest = largest
        self.retainedLimit = retainedLimit
    }

    /// Response bodies (``BufferedBody``).
    static let bodies = RecycledBuffers(largest: 64 * 1024, retainedLimit: 2 * 1024 * 1024)
    /// Response header blocks (`ReceivedHeaderBytes`).
    static let headers = RecycledBuffers(largest: 16 * 1024, retainedLimit: 512 * 1024)

    /// A buffer of at least `byteCount` usable bytes: a returned one when there is one, else a new one.
    func take(atLeast byteCount: Int) -> UnsafeMutableRawPointer {
        let recycled = stack.withLock { stack -> (address: UInt, size: Int)? in
            guard let buffer = stack.buffers.popLast() else { return nil }
            stack.retainedBytes -= buffer.size
            return buffer
        }
        if let recycled, recycled.size >= byteCount { return UnsafeMutableRawPointer(bitPattern: recycled.address)! }
        // A new block, or a returned one too small for this response (realloc of nil is malloc).
        guard let grown = realloc(recycled.flatMap { UnsafeMutableRawPointer(bitPattern: $0.address) }, byteCount) else {
            // Out of memory: the same outcome as Data's growth, which traps too.
            fatalError("cannot allocate \(byteCount) bytes for a response")
        }
        return grown
    }

    /// The bytes held for reuse now.
    var retainedByteCount: Int { stack.withLock { $0.retainedBytes } }

    /// How many bytes `buffer` can hold: malloc's own record of the block.
    static func capacity(of buffer: UnsafeMutableRawPointer) -> Int { malloc_usable_size(buffer) }

    /// Takes back a buffer from ``take(atLeast:)`` (or one it was realloc'd to); frees it when full.
    func give(_ buffer: UnsafeMutableRawPointer) {
        let size = Self.capacity(of: buffer)
        let kept = size <= largest && stack.withLock { stack -> Bool in
            guard stack.retainedBytes + size <= retainedLimit else { return false }
            stack.buffers.append((UInt(bitPattern: buffer), size))
            stack.retainedBytes += size
            return true
        }
        if !kept { free(buffer) }
    }
}
