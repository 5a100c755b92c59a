@testable import CourierLoad
import Testing

@Suite struct FormatTests {
    /// Figures a merged or hand-made result can hold, and a live line's rate: printed, never a
    /// trap (`Int(x)` of NaN, infinity or 2^63).
    @Test func figuresPastAnyRunPrint() {
        #expect(Format.bytes(.nan) == "0B")
        #expect(Format.bytes(512) == "512B")
        #expect(Format.bytes(2048) == "2.00KB")
        #expect(Format.seconds(90) == "1m30s")
        #expect(Format.seconds(1e300) == "\(Int.max / 60)m\(Int.max % 60)s")
        #expect(LatencyDistribution.label(1e300) == "1e+300")
        #expect(LatencyDistribution.label(99.9) == "99.9")
        let line = LoadReport.progressLine(LoadProgress(elapsedSeconds: 1, requests: 1, errors: 0, currentRate: .infinity, warmingUp: false))
        #expect(line.contains(Format.count(.max)))
    }
}
