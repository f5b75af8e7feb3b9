import Foundation
import Logging
import PushCore

/// The log lines of every pushq command, on standard error: the text of swift-log's
/// `StreamLogHandler`, or one JSON object per line (`PUSHQ_LOG_FORMAT=json`).
///
/// A JSON line has the keys `time` (UTC, ISO 8601 with milliseconds), `level`, `label`,
/// `message` and `metadata` (an object, nested values kept). In both formats secrets are
/// removed first (``SecretRedaction``): a metadata value whose key names a secret is masked
/// whole, and the passwords, tokens and keys recognised in any text are masked.
struct PushqLogHandler: LogHandler {
    /// How lines are written.
    enum Format: String, Sendable, CaseIterable {
        /// `2026-11-23T13:30:00+0000 info pushq.worker : key=value [PushWorker] message`
        case text
        /// `{"time":"2026-11-23T13:30:00.123Z","level":"info","label":"pushq.worker","message":"…","metadata":{…}}`
        case json
    }

    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let format: Format
    private let write: @Sendable (String) -> Void

    /// - Parameters:
    ///   - label: the logger's label.
    ///   - format: text or JSON.
    ///   - write: receives each finished line, newline included. Defaults to standard error.
    init(label: String, format: Format, write: @escaping @Sendable (String) -> Void = PushqLogHandler.standardError) {
        self.label = label
        self.format = format
        self.write = write
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var all = metadata
        if let provided = metadataProvider?.get() { all.merge(provided) { _, new in new } }
        if let explicit = event.metadata { all.merge(explicit) { _, new in new } }
        if let error = event.error, all["error"] == nil { all["error"] = "\(error)" }
        let (level, source) = (event.level, event.source)
        let text = SecretRedaction.redact(event.message.description)
        let now = Date()
        switch format {
        case .text:
            let fields = all.isEmpty ? "" : " " + all.sorted { $0.key < $1.key }
                .map { "\($0.key)=\(Self.redacted($0.value, key: $0.key))" }.joined(separator: " ")
            write("\(Self.textTime(now)) \(level) \(label) :\(fields) [\(source)] \(text)\n")
        case .json:
            var out = "{\"time\":"
            Self.appendJSON(string: Self.jsonTime(now), to: &out)
            out += ",\"level\":"
            Self.appendJSON(string: level.rawValue, to: &out)
            out += ",\"label\":"
            Self.appendJSON(string: label, to: &out)
            out += ",\"message\":"
            Self.appendJSON(string: text, to: &out)
            out += ",\"metadata\":"
            Self.appendJSON(.dictionary(all), key: "", to: &out)
            out += "}\n"
            write(out)
        }
    }

    /// Writes `line` to standard error in one `write(2)` (lines of several threads never interleave).
    static let standardError: @Sendable (String) -> Void = { line in
        var bytes = Array(line.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Foundation.write(2, $0.baseAddress! + offset, $0.count - offset) }
            if n <= 0 { return }
            offset += n
        }
    }

    private static func redacted(_ value: Logger.Metadata.Value, key: String) -> Logger.Metadata.Value {
        if SecretRedaction.isSecretKey(key) { return .string(SecretRedaction.mask) }
        switch value {
        case .string(let s): return .string(SecretRedaction.redact(s))
        case .stringConvertible(let c): return .string(SecretRedaction.redact(c.description))
        case .array(let a): return .array(a.map { redacted($0, key: key) })
        case .dictionary(let d): return .dictionary(d.reduce(into: [:]) { $0[$1.key] = redacted($1.value, key: $1.key) })
        }
    }

    private static func appendJSON(_ value: Logger.Metadata.Value, key: String, to out: inout String) {
        switch redacted(value, key: key) {
        case .string(let s): appendJSON(string: s, to: &out)
        case .stringConvertible(let c): appendJSON(string: c.description, to: &out)
        case .array(let a):
            out += "["
            for (i, v) in a.enumerated() {
                if i > 0 { out += "," }
                appendJSON(v, key: key, to: &out)
            }
            out += "]"
        case .dictionary(let d):
            out += "{"
            for (i, (k, v)) in d.sorted(by: { $0.key < $1.key }).enumerated() {
                if i > 0 { out += "," }
                appendJSON(string: k, to: &out)
                out += ":"
                appendJSON(v, key: k, to: &out)
            }
            out += "}"
        }
    }

    private static func appendJSON(string s: String, to out: inout String) {
        JSONValue.appendQuoted(s, to: &out)
    }

    private static func jsonTime(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt))
    }

    private static func textTime(_ date: Date) -> String {
        var t = time_t(date.timeIntervalSince1970)
        var parts = tm()
        localtime_r(&t, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let n = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &parts)
        return String(decoding: buffer.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
