import ArgumentParser

/// One setting pushq reads: its `PUSHQ_*` variable, the flag that overrides it (if any), its
/// default and the values it accepts. ``SettingKey/all`` lists every one; ``Settings`` reads
/// them; `docs/configuration.md` documents them (a test holds the three together).
struct SettingKey: Sendable, Hashable {
    /// The environment variable, e.g. `PUSHQ_CONNECTIONS`.
    let variable: String
    /// The flag that overrides the variable, e.g. `--topic`; nil when only the variable sets it.
    let flag: String?
    /// The value that applies when neither the flag nor the variable is given (or both are empty),
    /// as `--help` and the docs show it.
    let defaultValue: String
    /// What values are accepted.
    let kind: Kind
    /// What the setting does, in one sentence.
    let summary: String
    /// Older names of the variable, still read when the variable is not set (the
    /// `PUSHQ_APNS_*` names of the settings that govern every provider). Both set to different
    /// values is an error (``Settings/value(_:)``). Defaults to none.
    var aliases: [String] = []

    /// The shapes of value a setting takes; each parses its text purely (``parse(_:)``).
    enum Kind: Sendable, Hashable {
        /// Any text.
        case text
        /// The path of a file, read at start.
        case file
        /// An `https://` URL.
        case httpsURL
        /// One of these words (case does not matter); the value is the word as listed.
        case choice([String])
        /// Decimal digits only, within the range.
        case wholeNumber(ClosedRange<Int>)
        /// Seconds: digits with an optional decimal fraction (`0.25`), within the range.
        case seconds(ClosedRange<Double>)
        /// `host:port` of a listener.
        case address
    }

    /// A value parsed by its ``Kind``.
    enum Value: Sendable, Equatable {
        case text(String)
        case wholeNumber(Int)
        case seconds(Double)
        case address(HTTPAddress)
    }

    /// What the setting accepts, as errors, `--help` and the docs say it.
    var accepts: String { kind.accepts }

    /// The flag's help: the summary, then the variable it overrides, the default and `more`.
    func help(_ more: String? = nil) -> ArgumentHelp {
        let old = aliases.isEmpty ? "" : " Also overrides its old name " + aliases.map { "$" + $0 }.joined(separator: ", ") + "."
        return ArgumentHelp(summary, discussion: "Overrides $\(variable). Default: \(defaultValue)." + old + (more.map { " " + $0 } ?? ""))
    }
}

extension SettingKey.Kind {
    /// What a value of this kind may be, e.g. `a whole number from 1 to 64`.
    var accepts: String {
        switch self {
        case .text: return "any text"
        case .file: return "a file path"
        case .httpsURL: return "an https:// URL"
        case .choice(let words) where words.count == 2: return "\(words[0]) or \(words[1])"
        case .choice(let words): return "one of " + words.joined(separator: ", ")
        case .wholeNumber(let range): return "a whole number from \(range.lowerBound) to \(range.upperBound)"
        case .seconds(let range):
            return "seconds from \(SettingKey.format(range.lowerBound)) to \(SettingKey.format(range.upperBound)), decimals allowed"
        case .address: return "host:port, e.g. 127.0.0.1:9464 or [::1]:9464 (port 0: any free port)"
        }
    }

    /// `text` as a value of this kind, or nil when this kind does not accept it. The caller
    /// has already set empty text aside (empty means unset).
    ///
    /// Whole numbers and seconds are plain decimal digits: no sign, space, exponent
    /// (`1e3`), hexadecimal, `inf` or `nan`; seconds may have a fraction (`0.25`), whole numbers not (`1.5`).
    func parse(_ text: String) -> SettingKey.Value? {
        switch self {
        case .text, .file:
            return .text(text)
        case .httpsURL:
            guard text.lowercased().hasPrefix("https://"), text.count > "https://".count else { return nil }
            return .text(text)
        case .choice(let words):
            return words.first { $0.lowercased() == text.lowercased() }.map { .text($0) }
        case .wholeNumber(let range):
            guard text.isASCIIDigits, let n = Int(text), range.contains(n) else { return nil }
            return .wholeNumber(n)
        case .seconds(let range):
            let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.allSatisfy(\.isASCIIDigits), let s = Double(text), s.isFinite, range.contains(s) else { return nil }
            return .seconds(s)
        case .address:
            return HTTPAddress(parsing: text).map { .address($0) }
        }
    }
}

extension SettingKey {
    /// `seconds` as the docs write it: `600`, `0.01`.
    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() && abs(seconds) < 1e15 ? String(Int(seconds)) : String(seconds)
    }
}

extension SettingKey {
    /// `PUSHQ_APNS_STREAMS [500]`, as the worker's `--help` lists its tuning variables.
    var bracketed: String { "\(variable) [\(defaultValue)]" }

    /// `PUSHQ_APNS_CA_FILE (now PUSHQ_CA_FILE), …`: every old name and the variable it is, for `--help`.
    static var renamed: String {
        all.flatMap { key in key.aliases.map { "\($0) (now \(key.variable))" } }.joined(separator: ", ")
    }
}

extension StringProtocol {
    /// Whether this is one or more ASCII digits (no sign, space or other numeral).
    var isASCIIDigits: Bool { !isEmpty && utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } }
}
