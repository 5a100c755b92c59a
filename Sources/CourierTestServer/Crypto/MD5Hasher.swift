import COpenSSL
import Foundation

/// MD5 fed in pieces, through libcrypto (the library Courier already links), as a value:
/// a copy goes on on its own, and reading the digest leaves the hasher usable.
struct MD5Hasher {
    private final class Context {
        let pointer: OpaquePointer
        init?(_ pointer: OpaquePointer?) {
            guard let pointer else { return nil }
            self.pointer = pointer
        }
        deinit { courier_md5_free(pointer) }
    }

    private var context: Context

    init() {
        guard let context = Context(courier_md5_new()) else { fatalError("libcrypto cannot make an MD5 context") }
        self.context = context
    }

    mutating func update(data: Data) {
        if !isKnownUniquelyReferenced(&context) {
            guard let copy = Context(courier_md5_copy(context.pointer)) else { fatalError("libcrypto cannot copy an MD5 context") }
            context = copy
        }
        data.withUnsafeBytes { courier_md5_update(context.pointer, $0.baseAddress, $0.count) }
    }

    /// The digest of what was fed so far (16 bytes).
    func finalize() -> Data {
        guard let copy = courier_md5_copy(context.pointer) else { fatalError("libcrypto cannot copy an MD5 context") }
        var digest = Data(count: 16)
        digest.withUnsafeMutableBytes { courier_md5_finish(copy, $0.bindMemory(to: UInt8.self).baseAddress) }
        return digest
    }

    static func hash(data: Data) -> Data {
        var hasher = MD5Hasher()
        hasher.update(data: data)
        return hasher.finalize()
    }
}
