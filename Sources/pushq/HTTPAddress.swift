/// Where the worker's HTTP listener binds: `host:port` (`127.0.0.1:9464`, `[::1]:9464`,
/// `0.0.0.0:9464` in a container). Port 0 takes a free port (the log names it).
struct HTTPAddress: Sendable, Hashable, CustomStringConvertible {
    var host: String
    var port: Int

    var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

extension HTTPAddress {
    /// Parses `text` as given by `--http-addr` or `PUSHQ_HTTP_ADDR`; nil when it is not
    /// `host:port` (an IPv6 host in brackets) with a port from 0 to 65535.
    init?(parsing text: String) {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let port = text[text.index(after: colon)...]
        guard !host.isEmpty, !host.contains(" "), host.contains(":") == text.hasPrefix("["),
              port.isASCIIDigits,
              let number = Int(port), (0...65_535).contains(number) else { return nil }
        self.host = host
        self.port = number
    }
}
