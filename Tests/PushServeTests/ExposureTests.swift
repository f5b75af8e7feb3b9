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
    @Test("a non-loopback address without TLS is refused, naming the settings; with a proxy said to terminate TLS, or on loopback, it is not")
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

    @Test("with a certificate, serve speaks HTTPS: curl verifying it against the CA gets /healthz and the API; plain HTTP to the same port gets no answer")
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
}
