import ChildProcess
import Foundation
import MockPush
import Testing

@Suite("A valid request")
struct ValidRequestTests {
    @Test("200, no body, apns-id echoed")
    func validRequestSucceeds() async throws {
        try await withMock { server, port async throws in
            let id = "123e4567-e89b-12d3-a456-426614174000"
            let response = try Curl.one(port: port, .valid(jwt: try Fixtures.jwt(), apnsID: id))
            #expect(response.status == 200)
            #expect(response.body.isEmpty)
            #expect(response.headers["apns-id"] == id)
            #expect(response.headers["apns-unique-id"] == nil)
            #expect(server.stats().count(status: 200) == 1)
        }
    }

    @Test("without apns-id, a lowercase UUID is generated")
    func apnsIDGenerated() async throws {
        try await withMock { _, port async throws in
            let response = try Curl.one(port: port, .valid(jwt: try Fixtures.jwt()))
            #expect(response.status == 200)
            let id = try #require(response.headers["apns-id"])
            #expect(MockAPNsRules.isValidApnsID(id))
        }
    }

    @Test("development adds apns-unique-id")
    func developmentAddsUniqueID() async throws {
        try await withMock({ $0.environment = .development }) { _, port async throws in
            let response = try Curl.one(port: port, .valid(jwt: try Fixtures.jwt()))
            #expect(response.status == 200)
            let unique = try #require(response.headers["apns-unique-id"])
            #expect(MockAPNsRules.isValidApnsID(unique))
        }
    }

    @Test("a 200 is one HEADERS frame with END_STREAM and no DATA frame")
    func successHasNoDataFrame() async throws {
        try await withMock { server, port async throws in
            let request = TestRequest.valid(jwt: try Fixtures.jwt())
            let output = try Nghttp.run(port: port, paths: [request.path], headers: request.headers, body: request.body)
            #expect(output.contains(":status: 200"), "\(output)")
            let headers = Nghttp.received("HEADERS", in: output)
            #expect(headers.count == 1)
            #expect(headers.first?.contains("flags=0x05") == true, "END_STREAM|END_HEADERS expected: \(headers)")
            #expect(Nghttp.received("DATA", in: output).isEmpty)
            #expect(server.stats().count(status: 200) == 1)
        }
    }

    @Test("voip allows 5120 bytes on the .voip topic")
    func voipLargerPayload() async throws {
        try await withMock { _, port async throws in
            var request = TestRequest.valid(jwt: try Fixtures.jwt())
            request.set("apns-push-type", "voip")
            request.set("apns-topic", Fixtures.bundleID + ".voip")
            request.body = payload(bytes: 5000)
            #expect(try Curl.one(port: port, request).status == 200)
        }
    }

    @Test("certificate auth: no authorization header, verified client certificate")
    func certificateAuth() async throws {
        try await withMock(certificateAuth: true) { server, port async throws in
            var request = TestRequest.valid(jwt: "")
            request.set("authorization", nil)
            let response = try Curl.one(port: port, request, clientCertificate: true)
            #expect(response.status == 200)
            let withoutCertificate = try Curl.one(port: port, request)
            #expect(withoutCertificate.status == 403)
            #expect(withoutCertificate.reason == "MissingProviderToken")
            #expect(server.requests().map(\.auth) == ["certificate", "none"])
            #expect(server.stats().certificateAuthRequests == 1)
        }
    }
}

extension ValidRequestTests {
    @Test("certificate auth with the PKCS#12 client certificate and its password file")
    func certificateAuthPKCS12() async throws {
        try await withMock(certificateAuth: true) { server, port async throws in
            // The fixtures' client certificate and key as PKCS#12, protected by a password.
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("p12-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let password = "mock-\(UInt32.random(in: 0...UInt32.max))"
            let openssl = try ChildProcess.runBlocking("/usr/bin/openssl", [
                "pkcs12", "-export", "-in", Fixtures.main.clientCertificatePath, "-inkey", Fixtures.main.clientKeyPath,
                "-passout", "pass:" + password, "-out", dir + "/client.p12"])
            #expect(openssl.termination == .exit(0), "\(openssl.stderr)")
            var request = TestRequest.valid(jwt: "")
            request.set("authorization", nil)
            let result = try Curl.run(port: port, [request], extra: [
                "--cert", dir + "/client.p12:" + password, "--cert-type", "P12",
            ])
            #expect(result.exitCode == 0, "\(result.stderr)")
            #expect(result.responses[0].status == 200)
            #expect(server.requests().first?.auth == "certificate")
        }
    }

    @Test("a client certificate from another CA fails the TLS handshake")
    func foreignClientCertificateRejected() async throws {
        try await withMock(certificateAuth: true) { server, port async throws in
            // A self-signed client certificate, not issued by the configured client CA.
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("foreign-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let openssl = try ChildProcess.runBlocking("/usr/bin/openssl", [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-subj", "/CN=foreign", "-days", "1", "-keyout", dir + "/k.pem", "-out", dir + "/c.pem"])
            #expect(openssl.termination == .exit(0))
            var request = TestRequest.valid(jwt: "")
            request.set("authorization", nil)
            let result = try Curl.run(port: port, [request], extra: ["--cert", dir + "/c.pem", "--key", dir + "/k.pem"])
            #expect(result.exitCode != 0)
            #expect(result.responses[0].status == 0)
            #expect(server.stats().requests == 0)
        }
    }
}

/// A JSON object of exactly `bytes` bytes.
func payload(bytes: Int) -> [UInt8] {
    let prefix = #"{"aps":{},"x":""#
    let suffix = #""}"#
    return Array((prefix + String(repeating: "a", count: bytes - prefix.utf8.count - suffix.utf8.count) + suffix).utf8)
}
