import ChildProcess
import Foundation
import MockPush
import PushCore
import PushServe
import PushTestSupport
import Testing

/// Where serve may listen: loopback in plain HTTP; elsewhere only with TLS (its own, tested here
/// over a real handshake) or behind a proxy said to terminate it.
@Suite("Serve: exposure and TLS")
struct ExposureTests {
    /// a non-loopback address without TLS is refused, naming the settings; with a proxy said to terminate
    /// TLS, or on loopback, it is not
    @Test("a non-loopback address without TLS is refused, naming the settings; behind a TLS proxy or on loopback it is not")
    func refusal() throws {
        for host in ["0.0.0.0", "::", "10.1.2.3", "example.com"] {
            let error = #expect(throws: ServeError.self) {
                _ = try ServeApplication(configuration: ServeConfiguration(databaseURL: "postgresql://unused", host: host), logger: ServeHarness.logger)
            }
            #expect(error?.description.contains("PUSHQ_HTTP_TLS_CERT") == true && error?.description.contains("PUSHQ_HTTP_TLS_TERMINATED_BY_PROXY") == true)
        }
        var behindProxy = ServeConfiguration(databaseURL: "postgresql://unused", host: "0.0.0.0")
        behindProxy.proxyTerminatesTLS = true
        _ = try ServeApplication(configuration: behindProxy, logger: ServeHarness.logger)
        for host in ["127.0.0.1", "127.9.8.7", "::1", "0:0:0:0:0:0:0:1", "localhost"] {
            _ = try ServeApplication(configuration: ServeConfiguration(databaseURL: "postgresql://unused", host: host), logger: ServeHarness.logger)
        }
    }

    @Test("a certificate file that is not PEM stops serve, naming the variable")
    func badCertificate() throws {
        let file = NSTemporaryDirectory() + "pushq-not-a-cert-\(UUID().uuidString).pem"
        try "not a certificate".write(toFile: file, atomically: true, encoding: .utf8)
        defer { unlink(file) }
        var c = ServeConfiguration(databaseURL: "postgresql://unused", host: "0.0.0.0")
        c.tls = (file, file)
        let error = #expect(throws: ServeError.self) { _ = try ServeApplication(configuration: c, logger: ServeHarness.logger) }
        #expect(error?.description.contains("PUSHQ_HTTP_TLS_CERT") == true)
    }

    @Test("a key that is not the certificate's stops serve, naming both variables")
    func mismatchedKey() throws {
        let directory = NSTemporaryDirectory() + "pushq-serve-mismatch-\(UUID().uuidString)"
        let first = try MockPushFixtures.generate(into: directory + "/first")
        let second = try MockPushFixtures.generate(into: directory + "/second")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var c = ServeConfiguration(databaseURL: "postgresql://unused", host: "0.0.0.0")
        c.tls = (first.serverCertificatePath, second.serverKeyPath)
        let error = #expect(throws: ServeError.self) { _ = try ServeApplication(configuration: c, logger: ServeHarness.logger) }
        #expect(error?.description.contains("PUSHQ_HTTP_TLS_KEY") == true && error?.description.contains("PUSHQ_HTTP_TLS_CERT") == true)
        c.tls = (first.serverCertificatePath, first.serverKeyPath)
        _ = try ServeApplication(configuration: c, logger: ServeHarness.logger)
    }

    /// with a certificate, serve speaks HTTPS: curl verifying it against the CA gets /healthz and the API;
    /// plain HTTP to the same port gets no answer
    @Test("with a certificate, serve speaks HTTPS that curl verifies against the CA; plain HTTP to the same port gets no answer")
    func tls() async throws {
        let directory = NSTemporaryDirectory() + "pushq-serve-tls-\(UUID().uuidString)"
        let fixtures = try MockPushFixtures.generate(into: directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await ServeHarness.with({ $0.tls = (fixtures.serverCertificatePath, fixtures.serverKeyPath) }) { serve, _ in
            let url = "https://127.0.0.1:\(serve.port)"
            let health = try await ChildProcess.run("/usr/bin/curl", ["-sS", "--cacert", fixtures.caCertificatePath, url + "/healthz"])
            #expect(health.termination == .exit(0) && health.stdout == "ok\n", "\(health.stderr)")
            let status = try await ChildProcess.run("/usr/bin/curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", fixtures.caCertificatePath,
                                                                         "-H", "Authorization: Bearer \(serve.keys["read"]!)", url + "/api/v1/status"])
            #expect(status.stdout == "200", "\(status.stderr)")
            let unverified = try await ChildProcess.run("/usr/bin/curl", ["-sS", url + "/healthz"])
            #expect(unverified.termination != .exit(0), "curl without the CA refuses the certificate: verification is on")
            let plain = try? await HTTPAnswer.request(port: serve.port, "GET", "/healthz")
            #expect(plain?.status != 200, "no plain-HTTP answer on a TLS port")
        }
    }

    @Test("serve's TLS: a TLS 1.1 client is refused, TLS 1.2 is served; every HTTPS answer has HSTS, plain HTTP has none")
    func tlsFloorAndHSTS() async throws {
        let directory = NSTemporaryDirectory() + "pushq-serve-tls-\(UUID().uuidString)"
        let fixtures = try MockPushFixtures.generate(into: directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await ServeHarness.with({ $0.tls = (fixtures.serverCertificatePath, fixtures.serverKeyPath) }) { serve, _ in
            // SECLEVEL=0 lets this OpenSSL offer TLS 1.1 at all: the refusal seen is the server's.
            let old = try await ChildProcess.run("/usr/bin/openssl", ["s_client", "-connect", "127.0.0.1:\(serve.port)", "-tls1_1",
                                                                      "-cipher", "DEFAULT@SECLEVEL=0", "-CAfile", fixtures.caCertificatePath])
            #expect(old.termination != .exit(0) && !old.stdout.contains("BEGIN CERTIFICATE"), "TLS 1.1 handshake: \(old.stdout.suffix(400))")
            let current = try await ChildProcess.run("/usr/bin/openssl", ["s_client", "-connect", "127.0.0.1:\(serve.port)", "-tls1_2",
                                                                          "-CAfile", fixtures.caCertificatePath])
            #expect(current.stdout.contains("Protocol  : TLSv1.2") || current.stdout.contains("TLSv1.2"), "\(current.stdout.suffix(400))")
            let url = "https://127.0.0.1:\(serve.port)"
            for (path, key) in [("/healthz", nil), ("/api/v1/status", serve.keys["read"]), ("/api/v1/status", "pq_wrong"), ("/nowhere", serve.keys["read"])] {
                var arguments = ["-sS", "-o", "/dev/null", "-D", "-", "--cacert", fixtures.caCertificatePath]
                if let key { arguments += ["-H", "Authorization: Bearer \(key)"] }
                let head = try await ChildProcess.run("/usr/bin/curl", arguments + [url + path])
                #expect(head.stdout.lowercased().contains("strict-transport-security: max-age=31536000"), "\(path): \(head.stdout)")
            }
        }
        try await ServeHarness.with { serve, _ in
            let plain = try await serve.call("GET", "/healthz", key: nil)
            #expect(plain.status == 200 && plain.headers["strict-transport-security"] == nil)
        }
    }

    @Test("a replaced certificate is served to the next connections without a restart; a broken one keeps the last good one")
    func certificateReload() async throws {
        let directory = NSTemporaryDirectory() + "pushq-serve-reload-\(UUID().uuidString)"
        let first = try MockPushFixtures.generate(into: directory + "/first")
        let second = try MockPushFixtures.generate(into: directory + "/second")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (certificate, key) = (directory + "/tls.crt", directory + "/tls.key")
        try Self.replace(certificate, with: first.serverCertificatePath)
        try Self.replace(key, with: first.serverKeyPath)
        let log = CapturedLog()
        try await ServeHarness.with(logger: log.logger(level: .warning), { $0.tls = (certificate, key) }) { serve, _ in
            #expect(try await Self.servedCertificate(serve.port) == Self.firstPEM(first.serverCertificatePath))
            // As cert-manager or an operator renews it: new files moved into place.
            try Self.replace(key, with: second.serverKeyPath)
            try Self.replace(certificate, with: second.serverCertificatePath)
            let renewed = try Self.firstPEM(second.serverCertificatePath)
            // Polled, not slept: each try is one new handshake; the bound only ends a broken run.
            var served = try await Self.servedCertificate(serve.port)
            for _ in 0..<300 where served != renewed {
                try await Task.sleep(for: .milliseconds(100))
                served = try await Self.servedCertificate(serve.port)
            }
            #expect(served == renewed, "the new certificate is served")
            let curl = try await ChildProcess.run("/usr/bin/curl", ["-sS", "--cacert", second.caCertificatePath, "https://127.0.0.1:\(serve.port)/healthz"])
            #expect(curl.stdout == "ok\n", "verified against the new CA: \(curl.stderr)")

            try "not a certificate".write(toFile: certificate + ".tmp", atomically: false, encoding: .utf8)
            #expect(rename(certificate + ".tmp", certificate) == 0)
            // The next handshake reads the broken file, logs it, and still serves the last good pair.
            #expect(try await Self.servedCertificate(serve.port) == renewed)
            let errors = log.all.filter { $0.level >= .error && $0.message.contains(certificate) }
            #expect(errors.count == 1, "one error naming the file: \(log.all.map(\.message))")
            #expect(try await Self.servedCertificate(serve.port) == renewed)
            #expect(log.all.filter { $0.level >= .error }.count == 1, "logged once per broken file, not at every handshake")

            // A certificate that is not the key file's key's (a renewal half moved into place): refused too.
            try Self.replace(certificate, with: first.serverCertificatePath)
            #expect(try await Self.servedCertificate(serve.port) == renewed)
            #expect(log.all.filter { $0.level >= .error }.count == 2, "\(log.all.map(\.message))")
        }
    }

    /// Copies `source` to a new file and renames it over `path`, as a renewal does.
    static func replace(_ path: String, with source: String) throws {
        try FileManager.default.copyItem(atPath: source, toPath: path + ".tmp")
        guard rename(path + ".tmp", path) == 0 else { throw TestSetupError("rename \(path): \(errno)") }
    }

    /// The first PEM block of a file.
    static func firstPEM(_ path: String) throws -> String? {
        firstPEM(in: try String(contentsOfFile: path, encoding: .utf8))
    }

    static func firstPEM(in text: String) -> String? {
        guard let start = text.range(of: "-----BEGIN CERTIFICATE-----"),
              let end = text.range(of: "-----END CERTIFICATE-----", range: start.upperBound..<text.endIndex) else { return nil }
        return String(text[start.lowerBound..<end.upperBound])
    }

    /// The certificate serve presents to a new TLS connection.
    static func servedCertificate(_ port: Int) async throws -> String? {
        let handshake = try await ChildProcess.run("/usr/bin/openssl", ["s_client", "-connect", "127.0.0.1:\(port)"])
        return firstPEM(in: handshake.stdout)
    }
}
