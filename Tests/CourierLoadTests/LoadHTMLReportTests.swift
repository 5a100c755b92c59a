@testable import CourierLoad
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import CourierTestSupport
import Testing

@Suite struct LoadHTMLReportTests {
    func sampleResult() throws -> LoadResult {
        var result = LoadResult(target: "http://127.0.0.1:9/<script>alert(1)</script>", model: .open, concurrency: 8,
                                rate: 200, durationSeconds: 5)
        var timeline = LoadTimeline(startedAt: 1_790_000_000)
        for index in 0..<1000 {
            let failed = index % 50 == 0
            let microseconds = UInt64(800 + (index % 97) * 40)
            timeline.record(atSecond: Double(index) / 200, failed: failed, microseconds: microseconds)
            result.latency.record(microseconds: microseconds)
            result.requests += 1
            if failed { result.errors += 1 }
            result.statusCodes[failed ? 503 : 200, default: 0] += 1
        }
        result.errorKinds["timedOut"] = 0
        result.timeline = timeline
        result.thresholds = [try Threshold("p99<10ms").evaluate(result), try Threshold("errors<1%").evaluate(result)]
        result.settings = ["method": "GET", "rate": "200"]
        return result
    }

    /// The page stands alone, shows each chart with a drawn line, and escapes what the run named.
    @Test func theReportIsOneSelfContainedPage() throws {
        let html = LoadHTMLReport(try sampleResult()).html
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        for external in ["<script", "<link", "<img", "src=", "@import", "url("] {
            #expect(!html.contains(external), "\(external) would load or run something")
        }
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        for title in ["Throughput and errors", "Latency over time", "Latency by percentile", "Status codes", "Thresholds", "Run"] {
            #expect(html.contains("<h2>\(title)</h2>"), "\(title)")
        }
        // Three line charts, each with non-empty paths; the status chart with a bar per code.
        #expect(html.components(separatedBy: "<svg class=\"chart\"").count - 1 == 3)
        let lines = html.components(separatedBy: "<path class=\"line ").dropFirst()
        #expect(lines.count == 2 + 4 + 1)
        for line in lines {
            let path = line.split(separator: "\"")[2] // class rest, ` d=`, the data
            #expect(path.hasPrefix("M") && path.contains("L"), "a drawn line, not \(path.prefix(20))")
        }
        #expect(html.components(separatedBy: "<path class=\"bar ").count - 1 == 3) // 200, 503, timedOut
        #expect(html.contains("<td class=\"fail\">FAIL</td>") && html.contains("<td class=\"pass\">pass</td>"))
        #expect(html.contains("prefers-color-scheme:dark"))
        // Well formed: every element opened is closed (the browser check draws it: `make report-check`).
        let parsed = try XMLDocument(data: Data(html.utf8))
        #expect(try parsed.nodes(forXPath: "//*[local-name()='path']").count == 10)
    }

    /// Scheduled requests an open run did not send show as their own tile, marked; none, no tile.
    @Test func requestsNotSentShowAsATile() throws {
        var result = try sampleResult()
        #expect(!LoadHTMLReport(result).html.contains("not sent"))
        result.dropped = 1_234
        let html = LoadHTMLReport(result).html
        #expect(html.contains("<div class=\"tile bad\"><div class=\"value\">1,234</div><div class=\"name\">not sent (behind the rate)</div></div>"))
    }

    @Test func aResultWithoutATimelineSaysSo() {
        let html = LoadHTMLReport(LoadResult(target: "t", model: .closed, concurrency: 1)).html
        #expect(html.contains("no timeline"))
        #expect(html.contains("No responses."))
    }

    /// A ramp's report: the stages in the header and in a table of their own figures, and a
    /// marker where each later stage begins on both charts over time.
    @Test func aRampMarksItsStages() throws {
        var result = try sampleResult()
        result.ramp = LoadRamp(.rate, stages: [try LoadStage(duration: .seconds(2), target: 300), try LoadStage(duration: .seconds(3), target: 300)])
        let html = LoadHTMLReport(result).html
        #expect(html.contains("ramping to 300 → 300 requests/s in 2 stages"))
        #expect(html.contains("<h2>Stages</h2>"))
        // Stage 1 is seconds 0–2 of a 200/s sample: 400 requests.
        #expect(html.contains("<tr><td>1</td><td>0–2 s</td><td>300/s</td><td>400</td><td>200.00</td>"), "\(html)")
        #expect(html.components(separatedBy: "<line class=\"marker\"").count - 1 == 2, "stage 2's mark on two charts")
        #expect(html.contains(">stage 2</text>"))
        #expect(!LoadHTMLReport(try sampleResult()).html.contains("<h2>Stages</h2>"))
    }
}
