@testable import Courier
import CourierTestSupport
import Foundation
import Testing

/// What Courier does about the libcurl it runs on.
@Suite struct LibcurlTests {
    /// 7.84.0 began unfolding folded header lines with a pointer that outlived a handle's
    /// transfer; 8.1.0 cleared it (curl/curl#11101). Handles are reused outside that range only.
    @Test(arguments: [(0x07_53_01, true), (0x07_54_00, false), (0x07_58_01, false), (0x08_00_01, false),
                      (0x08_01_00, true), (0x08_05_00, true)] as [(UInt32, Bool)])
    func handlesAreReusedOutsideTheVersionsThatFreedTooSoon(version: UInt32, reusable: Bool) {
        #expect(Libcurl.reusesHandlesSafely(version: version) == reusable)
    }

    /// On this machine's libcurl, a handle that served a transfer is kept only where that is safe.
    @Test func aHandleIsPooledOnlyWhereReuseIsSafe() async throws {
        try await withServerAndService { server, service in
            for _ in 0..<3 { _ = try await service.send(HTTPRequest(url: server.url("/echo"))) }
            let stats = await service.stats
            #expect(stats.handleReuses == (Libcurl.handlesAreReusable ? 2 : 0), "libcurl 0x\(String(Libcurl.version, radix: 16)): \(stats)")
            // None in use. Where reuse is unsafe, the pool holds handles made ahead and served ones
            // waiting to be cleaned up (EasyHandlePool's chores), never one it gives out again.
            #expect(stats.easyHandles == stats.pooledHandles)
        }
    }
}
