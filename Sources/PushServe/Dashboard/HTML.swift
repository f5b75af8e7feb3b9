/// A piece of HTML. Literals are markup; every `String` interpolated into one is escaped, so
/// text from the database (payloads, reasons, user refs, metadata) can never become markup.
///
/// ```swift
/// let cell: HTML = "<td>\(row.lastReason)</td>"   // escaped
/// let row: HTML = "<tr>\(cell)</tr>"               // HTML nested as is
/// ```
public struct HTML: Sendable, Equatable, CustomStringConvertible, ExpressibleByStringInterpolation {
    /// The markup.
    public private(set) var rendered: String

    public var description: String { rendered }

    public init(stringLiteral value: String) { rendered = value }

    public init(stringInterpolation: StringInterpolation) { rendered = stringInterpolation.out }

    /// `&`, `<`, `>`, `"` and `'` as character references (``htmlEscaped(_:)``): safe in text
    /// and in quoted attribute values.
    public static func escape(_ text: String) -> String { htmlEscaped(text) }

    public struct StringInterpolation: StringInterpolationProtocol {
        var out = ""

        public init(literalCapacity: Int, interpolationCount: Int) { out.reserveCapacity(literalCapacity + 16 * interpolationCount) }

        public mutating func appendLiteral(_ literal: String) { out += literal }

        /// Text: escaped.
        public mutating func appendInterpolation(_ text: String) { out += HTML.escape(text) }

        /// Text, or nothing for nil.
        public mutating func appendInterpolation(_ text: String?) { out += HTML.escape(text ?? "") }

        public mutating func appendInterpolation(_ number: Int) { out += String(number) }

        public mutating func appendInterpolation(_ number: Int64) { out += String(number) }

        /// Markup, as is.
        public mutating func appendInterpolation(_ html: HTML) { out += html.rendered }

        /// Markup, one after the other.
        public mutating func appendInterpolation(_ list: [HTML]) { for h in list { out += h.rendered } }
    }
}
