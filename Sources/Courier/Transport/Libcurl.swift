import CCurl

/// The libcurl Courier runs on (the system's), and what Courier does about older versions' defects.
enum Libcurl {
    /// `version_num` of the library loaded at run time: 0xXXYYZZ, so 8.1.0 is 0x080100.
    static let version = courier_curl_version_num()

    /// Whether an easy handle may serve another transfer. From 7.84.0, which unfolds folded
    /// header lines, to 8.1.0, libcurl kept a pointer to the last header a handle stored
    /// (`state.prevhead`) after the next transfer's start had freed them; a response whose first
    /// header line is folded then unfolded into freed memory, a use-after-free that glibc ends
    /// with "double free detected" (curl/curl#11101, fixed by cd1c611b24 in 8.1.0). Any server
    /// can send such a line, and Debian 12 ships 7.88.1: there each handle serves one transfer
    /// (Docs/PerformanceDecisions.md has the cost).
    static let handlesAreReusable = reusesHandlesSafely(version: version)

    static func reusesHandlesSafely(version: UInt32) -> Bool {
        !(0x07_54_00..<0x08_01_00).contains(version)
    }
}
