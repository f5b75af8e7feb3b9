/// A statement text with markers (`/*SIZE*/`, `/*FILTER*/`) cut once into pieces, so that each
/// use joins the pieces with the values instead of searching the text.
///
/// The claim's text is some 12 KB and built for every claim: Foundation's
/// `replacingOccurrences(of:with:)`, twice per claim, took ~3 % of the worker's CPU in the e2e
/// drain (docs/performance.md, "The worker's own share").
package struct SQLTemplate: Sendable {
    /// The text between markers, and the marker that follows each piece (nil after the last).
    private let pieces: [(text: String, marker: String?)]
    /// The bytes of the pieces: a rendered text's size, but for the values.
    private let piecesLength: Int

    /// Cuts `text` at every occurrence of each of `markers`.
    package init(_ text: String, markers: [String]) {
        var pieces: [(String, String?)] = []
        var rest = Substring(text)
        while let (range, marker) = markers.compactMap({ m in rest.firstRange(of: m).map { ($0, m) } })
                .min(by: { $0.0.lowerBound < $1.0.lowerBound }) {
            pieces.append((String(rest[..<range.lowerBound]), marker))
            rest = rest[range.upperBound...]
        }
        pieces.append((String(rest), nil))
        self.pieces = pieces
        piecesLength = pieces.reduce(0) { $0 + $1.0.utf8.count }
    }

    /// The text with each marker replaced by its value in `values` (a marker without a value is
    /// kept as it is).
    package func render(_ values: [String: String]) -> String {
        var out = ""
        out.reserveCapacity(piecesLength + 256)
        for (text, marker) in pieces {
            out += text
            if let marker { out += values[marker] ?? marker }
        }
        return out
    }
}
