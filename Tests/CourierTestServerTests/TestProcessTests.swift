import CTestProcess
import Foundation
import CourierTestSupport
import Testing

/// The test process itself: set up before any test runs (Tests/CTestProcess/process.c).
@Suite struct TestProcessTests {
    /// A write to a pipe whose reader has gone fails with EPIPE instead of killing the process,
    /// whichever test happens to run first.
    @Test func aWriteToAClosedPipeFailsInsteadOfKillingTheSuite() {
        #expect(courier_test_process_ignores_sigpipe() == 1)
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        close(ends[0])
        let written = [UInt8](repeating: 0x2a, count: 16).withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) }
        let error = errno
        close(ends[1])
        #expect(written == -1 && error == EPIPE)
    }
}
