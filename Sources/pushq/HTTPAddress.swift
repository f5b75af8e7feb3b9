import ArgumentParser

/// Where the worker's HTTP listener binds: `host:port` (`127.0.0.1:9464`, `[::1]:9464`,
/// `0.0.0.0:9464` in a container). Port 0 takes a free port (the log names it).
struct HTTPAddress: Sendable, Hashable, CustomStringConvertible {
    var host: String
    var port: Int

    /// Parses `text` as given by `--http-addr` or `PUSHQ_HTTP_ADDR`.
    ///
    /// - Throws: `ValidationError` naming the setting and the expected form.
    init(parsing text: String, setting: String) throws {
        let problem = ValidationError("\(setting) must be host:port, e.g. 127.0.0.1:9464, not \(text)")
        guard let colon = text.lastIndex(of: ":") else { throw problem }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, !host.contains(" "), host.contains(":") == text.hasPrefix("["),
              let port = Int(text[text.index(after: colon)...]), (0...65_535).contains(port) else { throw problem }
        self.host = host
        self.port = port
    }

    var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
