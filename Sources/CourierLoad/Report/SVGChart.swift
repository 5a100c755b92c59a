import Foundation

/// A line chart as inline SVG: no script, no external file, colours from the page's CSS
/// (classes `s1`…`s4`), so one drawing serves a light and a dark page.
struct SVGChart {
    struct Series {
        var name: String
        /// `s1` … `s4`: the page's series colours.
        var style: String
        var points: [(x: Double, y: Double)]
    }

    /// How the x axis maps and labels its values.
    enum XAxis {
        /// Seconds of the run.
        case seconds(ClosedRange<Double>)
        /// `log10(1 / (1 − p))` from 0 up to the bound: 0 %, 90 %, 99 %, 99.9 %, …
        case percentiles(nines: Double)
    }

    var series: [Series]
    var xAxis: XAxis
    /// The y axis's unit, after each tick's number (`ms`, `/s`).
    var yUnit: String
    var label: String
    /// Labelled vertical lines at x values (a ramp's stage boundaries).
    var markers: [(x: Double, label: String)] = []

    static let width = 960.0
    static let height = 260.0
    private static let left = 64.0, right = 16.0, top = 12.0, bottom = 30.0

    var svg: String {
        let plotWidth = Self.width - Self.left - Self.right
        let plotHeight = Self.height - Self.top - Self.bottom
        let (xMin, xMax) = xRange
        let yStep = Self.niceStep((series.flatMap { $0.points.map(\.y) }.max() ?? 0) / 4)
        let yMax = max(yStep, ((series.flatMap { $0.points.map(\.y) }.max() ?? 0) / yStep).rounded(.up) * yStep)
        func x(_ value: Double) -> Double { Self.left + (xMax > xMin ? (value - xMin) / (xMax - xMin) : 0) * plotWidth }
        func y(_ value: Double) -> Double { Self.top + plotHeight - (yMax > 0 ? value / yMax : 0) * plotHeight }

        var out = "<svg class=\"chart\" viewBox=\"0 0 \(Int(Self.width)) \(Int(Self.height))\" role=\"img\" aria-label=\"\(HTML.escape(label))\">"
        for tick in stride(from: 0, through: yMax + yStep / 1000, by: yStep) {
            let position = Self.fixed(y(tick))
            out += "<line class=\"grid\" x1=\"\(Int(Self.left))\" x2=\"\(Int(Self.width - Self.right))\" y1=\"\(position)\" y2=\"\(position)\"/>"
            out += "<text class=\"tick\" x=\"\(Int(Self.left) - 6)\" y=\"\(position)\" text-anchor=\"end\" dominant-baseline=\"middle\">\(HTML.escape(Self.number(tick)))\(yUnit)</text>"
        }
        for (value, text) in xTicks(xMin, xMax) {
            let position = Self.fixed(x(value))
            out += "<line class=\"grid\" x1=\"\(position)\" x2=\"\(position)\" y1=\"\(Int(Self.top))\" y2=\"\(Self.fixed(Self.top + plotHeight))\"/>"
            out += "<text class=\"tick\" x=\"\(position)\" y=\"\(Int(Self.height) - 10)\" text-anchor=\"middle\">\(HTML.escape(text))</text>"
        }
        for marker in markers {
            let position = Self.fixed(x(marker.x))
            out += "<line class=\"marker\" x1=\"\(position)\" x2=\"\(position)\" y1=\"\(Int(Self.top))\" y2=\"\(Self.fixed(Self.top + plotHeight))\"/>"
            out += "<text class=\"tick\" x=\"\(Self.fixed(x(marker.x) + 4))\" y=\"\(Int(Self.top) + 10)\">\(HTML.escape(marker.label))</text>"
        }
        for line in series where !line.points.isEmpty {
            var path = ""
            for (index, point) in line.points.enumerated() {
                path += "\(index == 0 ? "M" : "L")\(Self.fixed(x(point.x))) \(Self.fixed(y(point.y)))"
            }
            if line.points.count == 1 { path += "h2" } // a lone interval still shows
            out += "<path class=\"line \(line.style)\" d=\"\(path)\"><title>\(HTML.escape(line.name))</title></path>"
        }
        return out + "</svg>"
    }

    /// The legend, as HTML beside the chart.
    var legend: String {
        "<p class=\"legend\">" + series.map { "<span class=\"key \($0.style)\"></span>\(HTML.escape($0.name))" }.joined(separator: " ") + "</p>"
    }

    private var xRange: (Double, Double) {
        switch xAxis {
        case .seconds(let range): (range.lowerBound, range.upperBound)
        case .percentiles(let nines): (0, nines)
        }
    }

    private func xTicks(_ low: Double, _ high: Double) -> [(Double, String)] {
        switch xAxis {
        case .seconds:
            let step = Self.niceStep(high / 6)
            return stride(from: 0, through: high + step / 1000, by: step).map { ($0, Self.number($0) + "s") }
        case .percentiles(let nines):
            return (0...Int(nines)).map { nine in
                let percent = 100 * (1 - pow(10, -Double(nine)))
                return (Double(nine), nine == 0 ? "0%" : String(format: "%.\(max(0, nine - 2))f%%", percent))
            }
        }
    }

    /// 1, 2, 2.5 or 5 times a power of ten, at or above `value`: a round step between ticks.
    static func niceStep(_ value: Double) -> Double {
        guard value > 0, value.isFinite else { return 1 }
        let power = pow(10, floor(log10(value)))
        for step in [1.0, 2, 2.5, 5, 10] where step * power >= value { return step * power }
        return 10 * power
    }

    static func number(_ value: Double) -> String {
        if value == value.rounded() && abs(value) < 1e12 { return String(Int(value)) }
        return String(format: value < 1 ? "%.3g" : "%.1f", value)
    }

    static func fixed(_ value: Double) -> String { String(format: "%.1f", value) }
}
