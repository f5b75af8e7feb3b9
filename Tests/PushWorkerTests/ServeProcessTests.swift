import ChildProcess
import Foundation
import MockPush
import PushStore
import PushTestSupport
import Testing
import PGClient

/// `pushq serve` as a process: what it does at start and on signals (issue 45, items 3 and 5).
@Suite("pushq serve: start and signals")
struct ServeProcessTests {
    /// Starts `pushq serve` on a free port of 127.0.0.1 with `arguments`; its log goes to `log`.
    static func start(_ url: String, log: String, _ arguments: [String] = []) async throws -> (ChildProcess, Int) {
        try await ServeCommandTests.startServe(url, log: log, arguments)
    }

    /// The first certificate serve presents to a new TLS connection, PEM.
    static func servedCertificate(_ port: Int) async throws -> String? {
        let handshake = try await ChildProcess.run("/usr/bin/openssl", ["s_client", "-connect", "127.0.0.1:\(port)"])
        return firstPEM(in: handshake.stdout)
    }

    static func firstPEM(in text: String) -> String? {
        guard let start = text.range(of: "-----BEGIN CERTIFICATE-----"),
              let end = text.range(of: "-----END CERTIFICATE-----", range: start.upperBound..<text.endIndex) else { return nil }
        return String(text[start.lowerBound..<end.upperBound])
    }

    /// `path`'s device, inode, size and modification time: what serve's file check compares.
    static func version(_ path: String) -> [Int] {
        var s = stat()
        guard stat(path, &s) == 0 else { return [] }
        return [Int(s.st_dev), Int(s.st_ino), Int(s.st_size), Int(s.st_mtim.tv_sec), Int(s.st_mtim.tv_nsec)]
    }

    /// Writes `bytes` into `path` in place (same inode), then sets its times back to `times`.
    static func overwrite(_ path: String, with bytes: [UInt8], times: [timespec]) throws {
        let fd = open(path, O_WRONLY | O_TRUNC)
        guard fd >= 0 else { throw TestSetupError("open \(path): \(errno)") }
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == bytes.count else { throw TestSetupError("write \(path): \(errno)") }
        guard utimensat(AT_FDCWD, path, times, 0) == 0 else { throw TestSetupError("utimensat \(path): \(errno)") }
    }

    /// The access and modification times of `path`.
    static func times(_ path: String) -> [timespec] {
        var s = stat()
        _ = stat(path, &s)
        return [s.st_atim, s.st_mtim]
    }

    /// a renewal written into the same files within one tick of their times (stat sees nothing change) is
    /// served after SIGHUP, and serve keeps running
    @Test("SIGHUP re-reads serve's certificate, also one rewritten in place that stat cannot tell; serve keeps running")
    func hangupReloadsCertificate() async throws {
        let directory = NSTemporaryDirectory() + "pushq-serve-hup-\(UUID().uuidString)"
        let first = try MockPushFixtures.generate(into: directory + "/first")
        let second = try MockPushFixtures.generate(into: directory + "/second")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Each file padded with newlines (PEM readers skip them) to the size of the larger of the
        // two, so that the renewal leaves every field serve's check compares as it was.
        func padded(_ a: String, _ b: String) throws -> ([UInt8], [UInt8]) {
            let (x, y) = (try Array(Data(contentsOf: URL(fileURLWithPath: a))), try Array(Data(contentsOf: URL(fileURLWithPath: b))))
            let size = max(x.count, y.count)
            return (x + Array(repeating: 10, count: size - x.count), y + Array(repeating: 10, count: size - y.count))
        }
        let (firstCertificate, secondCertificate) = try padded(first.serverCertificatePath, second.serverCertificatePath)
        let (firstKey, secondKey) = try padded(first.serverKeyPath, second.serverKeyPath)
        let (certificate, key) = (directory + "/tls.crt", directory + "/tls.key")
        #expect(FileManager.default.createFile(atPath: certificate, contents: Data(firstCertificate)))
        #expect(FileManager.default.createFile(atPath: key, contents: Data(firstKey)))

        try await TestDatabase.withConnection { db in
            let url = try await databaseURL(db)
            let log = directory + "/serve.log"
            let (serve, port) = try await Self.start(url, log: log, ["--http-tls-cert", certificate, "--http-tls-key", key])
            defer { serve.kill(SIGKILL); _ = serve.waitBlocking() }
            let firstPEM = Self.firstPEM(in: String(decoding: firstCertificate, as: UTF8.self))
            let secondPEM = Self.firstPEM(in: String(decoding: secondCertificate, as: UTF8.self))
            #expect(try await Self.servedCertificate(port) == firstPEM)

            let before = (Self.version(certificate), Self.version(key))
            try Self.overwrite(key, with: secondKey, times: Self.times(key))
            try Self.overwrite(certificate, with: secondCertificate, times: Self.times(certificate))
            #expect(Self.version(certificate) == before.0 && Self.version(key) == before.1, "the files look unchanged to stat")
            // Nothing tells serve the files changed: it still serves the first pair.
            #expect(try await Self.servedCertificate(port) == firstPEM)

            serve.kill(SIGHUP)
            // The event: serve's log line of the re-read (its first: the start reads the files once).
            let reread = try await eventually(timeout: .seconds(30)) {
                ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("serve's certificate re-read") || serve.hasExited
            }
            #expect(reread && !serve.hasExited, "serve after SIGHUP: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
            #expect(try await Self.servedCertificate(port) == secondPEM, "the renewal is served")
        }
    }

    /// the health probe's connection is open once serve listens, before any request: /healthz needs no new
    /// connection (the database may have none left to give by then)
    @Test("serve opens the health probe's connection at start, before any request")
    func healthConnectionAtStart() async throws {
        try await TestDatabase.withConnection { db in
            let url = try await databaseURL(db)
            let log = NSTemporaryDirectory() + "pushq-serve-health-\(UUID().uuidString).log"
            defer { try? FileManager.default.removeItem(atPath: log) }
            let (serve, port) = try await Self.start(url, log: log)
            defer { serve.kill(SIGKILL); _ = serve.waitBlocking() }
            // serve's sessions on this test's database (pid, state, last statement), no request
            // made yet: the start's schema check is closed (its backend may linger an instant),
            // the probe's stays. The same session after /healthz: the one opened at start.
            func sessions() async throws -> [String] {
                let r = try await db.query("""
                    SELECT pid || ' ' || state || ' ' || left(query, 60) FROM pg_stat_activity
                     WHERE datname = current_database() AND pid <> pg_backend_pid() ORDER BY backend_start
                    """)
                return (0..<r.count).map { r.string($0, 0) ?? "" }
            }
            var atStart: [String] = []
            let one = try await eventually(timeout: .seconds(30)) {
                atStart = try await sessions()
                return atStart.count == 1
            }
            #expect(one, "one session, the probe's: \(atStart)")
            let health = try await ChildProcess.run("/usr/bin/curl", ["-sS", "http://127.0.0.1:\(port)/healthz"])
            #expect(health.stdout == "ok\n")
            let afterProbe = try await sessions()
            let pid = { (line: String?) in line?.split(separator: " ").first }
            #expect(afterProbe.count == 1 && pid(afterProbe.first) == pid(atStart.first),
                    "the probe answered on the session it opened at start: \(atStart) then \(afterProbe)")
        }
    }
}
