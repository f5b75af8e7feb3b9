import Dispatch
import Foundation
import Logging
import PushServe
import PushStore
import PushTestSupport
import ServiceLifecycle
import Testing
import PGClient

/// A `pushq serve` application on 127.0.0.1 (a free port), on a fresh migrated database, with
/// one key of each scope; stopped (graceful shutdown) when `body` returns.
struct ServeHarness: Sendable {
    let port: Int
    let databaseURL: String
    /// A key of each scope, by scope name; and `revoked`, a key revoked already.
    let keys: [String: String]

    static let logger: Logger = {
        var logger = Logger(label: "pushq.serve.test")
        logger.logLevel = .warning
        return logger
    }()

    static func with(logger: Logger = ServeHarness.logger, _ adjust: @Sendable (inout ServeConfiguration) -> Void = { _ in },
                     _ body: @Sendable (ServeHarness, PGConnection) async throws -> Void) async throws {
        try await TestDatabase.with { url in
            let db = try await PGConnection.connect(url, logger: TestDatabase.logger)
            var keys: [String: String] = [:]
            for scope in ["read", "enqueue", "devices", "admin", "revoked"] {
                let key = APIKeySecret.newKey()
                _ = try await db.createAPIKey(name: "test-\(scope)", scope: scope == "revoked" ? "admin" : scope, keyHash: APIKeySecret.hash(key))
                keys[scope] = key
            }
            _ = try await db.revokeAPIKey(name: "test-revoked")
            var configuration = ServeConfiguration(databaseURL: url, host: "127.0.0.1", port: 0)
            adjust(&configuration)
            let application = try ServeApplication(configuration: configuration, logger: logger)
            let bound = AsyncStream<Int>.makeStream()
            let group = ServiceGroup(configuration: .init(services: [.init(service: application.service { bound.continuation.yield($0) })],
                                                          logger: logger))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                var ports = bound.stream.makeAsyncIterator()
                guard let port = await ports.next() else { throw TestSetupError("serve did not start") }
                do {
                    try await body(ServeHarness(port: port, databaseURL: url, keys: keys), db)
                } catch {
                    await group.triggerGracefulShutdown()
                    try? await tasks.waitForAll()
                    throw error
                }
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
            }
            await application.services.close()
            await db.close()
        }
    }

    /// A request with the key of `scope` (nil: no key).
    func call(_ method: String, _ path: String, key scope: String?, json: String? = nil, headers: [String: String] = [:]) async throws -> HTTPAnswer {
        var h = headers
        if let scope { h["Authorization"] = "Bearer " + (keys[scope] ?? scope) }
        if json != nil { h["Content-Type"] = "application/json" }
        return try await HTTPAnswer.request(port: port, method, path, headers: h, body: json.map { Array($0.utf8) })
    }
}

/// One HTTP/1.1 exchange over a plain socket to 127.0.0.1 (`Connection: close`): every header
/// as sent, no cookie jar and no redirect followed, so tests see exactly what serve answers.
struct HTTPAnswer: Sendable {
    var status: Int
    /// Header names lower-cased; repeated headers (Set-Cookie) joined with "\n".
    var headers: [String: String]
    var body: String

    /// The body as a JSON object.
    var json: [String: Any] {
        get throws {
            guard let object = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] else {
                throw TestSetupError("not a JSON object: \(body)")
            }
            return object
        }
    }

    /// `error.<name>` of an error answer.
    func error(_ name: String) throws -> String? {
        (try json["error"] as? [String: Any])?[name].map { "\($0)" }
    }

    static func request(port: Int, _ method: String, _ path: String, headers: [String: String] = [:], body: [UInt8]? = nil) async throws -> HTTPAnswer {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try exchange(port: port, method, path, headers: headers, body: body) })
            }
        }
    }

    /// A TCP socket connected to 127.0.0.1:`port`, whose reads give up after 60 s: the
    /// caller closes it.
    static func connectLoopback(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestSetupError("socket: \(errno)") }
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let problem = errno
            close(fd)
            throw TestSetupError("connect to 127.0.0.1:\(port): \(problem)")
        }
        return fd
    }

    private static func exchange(port: Int, _ method: String, _ path: String, headers: [String: String], body: [UInt8]?) throws -> HTTPAnswer {
        let fd = try connectLoopback(port: port)
        defer { close(fd) }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(body?.count ?? 0)\r\n\r\n"
        let out = Array(head.utf8) + (body ?? [])
        var sent = 0
        while sent < out.count {
            let n = out[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { throw TestSetupError("send: \(errno)") }
            sent += n
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            guard n >= 0 else { throw TestSetupError("recv: \(errno)") }
            if n == 0 { break }
            received += buffer[..<n]
        }
        return try parse(received)
    }

    static func parse(_ bytes: [UInt8]) throws -> HTTPAnswer {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = (0...(max(0, bytes.count - 4))).first(where: { Array(bytes[$0..<min(bytes.count, $0 + 4)]) == separator }) else {
            throw TestSetupError("no HTTP head in \(bytes.count) bytes")
        }
        let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let status = Int(lines[0].split(separator: " ")[1]) ?? 0
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { $0 + "\n" + value } ?? value
        }
        var body = Array(bytes[(end + 4)...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" { body = dechunk(body) }
        return HTTPAnswer(status: status, headers: headers, body: String(decoding: body, as: UTF8.self))
    }

    static func dechunk(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            guard let lineEnd = (i..<(bytes.count - 1)).first(where: { bytes[$0] == 13 && bytes[$0 + 1] == 10 }),
                  let size = Int(String(decoding: bytes[i..<lineEnd], as: UTF8.self).split(separator: ";")[0], radix: 16), size > 0 else { break }
            out += bytes[(lineEnd + 2)..<min(bytes.count, lineEnd + 2 + size)]
            i = lineEnd + 2 + size + 2
        }
        return out
    }
}
