import Courier
import CourierLoad
import CourierTestSupport
import Testing

/// `courier load`'s errors have Courier's one error shape (`CourierError`).
@Suite struct LoadErrorTests {
    @Test func kindAndMessageOfEachCase() {
        let error: any CourierError = LoadError.invalidThreshold("p99<abc")
        #expect(error.kind == "invalidThreshold")
        #expect(error.message == "p99<abc")
        #expect(error.description == "invalid threshold: p99<abc")
        #expect(LoadError.invalidArgument("--rate must be positive").description == "--rate must be positive")
    }
}
