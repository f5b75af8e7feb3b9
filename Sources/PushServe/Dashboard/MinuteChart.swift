import PushStore

/// The overview's chart: sends, failures and invalidations per minute as inline SVG (no
/// script, no outside asset), one polyline per series over a shared scale.
enum MinuteChart {
    static let width = 720
    static let height = 180
    static let margin = (left: 48, right: 8, top: 10, bottom: 22)

    static func svg(_ series: MinuteSeries) -> HTML {
        let minutes = series.minutes
        let top = niceCeiling(minutes.map { max($0.sent, $0.failed, $0.invalidated) }.max() ?? 0)
        let plotW = Double(width - margin.left - margin.right), plotH = Double(height - margin.top - margin.bottom)
        func x(_ i: Int) -> Int { margin.left + Int((Double(i) * plotW / Double(max(1, minutes.count - 1))).rounded()) }
        func y(_ v: Int) -> Int { margin.top + Int((plotH - Double(v) * plotH / Double(top)).rounded()) }
        func line(_ name: String, _ value: (MinuteSeries.Minute) -> Int) -> HTML {
            let points = minutes.enumerated().map { "\(x($0.offset)),\(y(value($0.element)))" }.joined(separator: " ")
            return "<polyline class=\"\(name)\" fill=\"none\" stroke=\"currentColor\" stroke-width=\"2\" points=\"\(points)\"/>"
        }
        let first = minutes.first.map { DashboardFormat.clock($0.start) } ?? ""
        let last = minutes.last.map { DashboardFormat.clock($0.start) } ?? ""
        let baseline = y(0)
        return """
            <svg class="chart" role="img" aria-label="Sends, failures and invalidations per minute" viewBox="0 0 \(width) \(height)" xmlns="http://www.w3.org/2000/svg">
            <line x1="\(margin.left)" y1="\(baseline)" x2="\(width - margin.right)" y2="\(baseline)" stroke="#8b949e"/>
            <line x1="\(margin.left)" y1="\(margin.top)" x2="\(width - margin.right)" y2="\(margin.top)" stroke="#eceff2"/>
            <text x="\(margin.left - 6)" y="\(margin.top + 4)" text-anchor="end" font-size="11">\(top)</text>
            <text x="\(margin.left - 6)" y="\(baseline + 4)" text-anchor="end" font-size="11">0</text>
            <text x="\(margin.left)" y="\(height - 4)" font-size="11">\(first)</text>
            <text x="\(width - margin.right)" y="\(height - 4)" text-anchor="end" font-size="11">\(last) UTC</text>
            \(line("sent", \.sent))\(line("failed", \.failed))\(line("invalidated", \.invalidated))
            </svg>
            """
    }

    /// The scale's top: the largest value rounded up to 1, 2 or 5 times a power of ten (at least 1).
    static func niceCeiling(_ value: Int) -> Int {
        guard value > 1 else { return 1 }
        var power = 1
        while power * 10 < value { power *= 10 }
        for step in [1, 2, 5, 10] where step * power >= value { return step * power }
        return 10 * power
    }
}
