import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Files only their owner may read: tokens and credentials written to disk.
enum PrivateFile {
    /// Writes `data` to `path`: the folder is made (0700) if missing, the file is created 0600
    /// from its first byte under a temporary name, then renamed over any old one, so it is
    /// never readable by others nor seen half-written.
    static func write(_ data: Data, to path: String) throws(AuthError) {
        let directory = (path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw AuthError(.invalidCredentials, message: "cannot create \(directory)")
        }
        let temporary = "\(path).\(getpid()).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw AuthError(.invalidCredentials, message: "cannot write \(temporary)") }
        fchmod(descriptor, 0o600) // a umask cannot widen it, but an old file of this name may have been wider
        let written = data.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        fsync(descriptor)
        close(descriptor)
        guard written == data.count, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw AuthError(.invalidCredentials, message: "cannot write \(path)")
        }
    }
}
