import ChildProcess
import Foundation
import MockPush
import PushCore
import PushTransport
import Testing

/// What the encryptor seals and the VAPID key signs is accepted by an implementation that is not
/// pushq's: the mock's Web Push service (RFC 8188/8291 decryption and RFC 8292 checks of its own),
/// over real TLS and HTTP/2 (`/usr/bin/curl` carries the request; pushq's Web Push sender comes later).
@Suite struct WebPushMockTests {
    @Test("the mock's Web Push service decrypts what WebPushEncryptor sealed and accepts VAPIDKey's token (201)")
    func mockAcceptsTheMessage() async throws {
        let harness = try await MockHarness.start()
        do {
            let subscription = try harness.server.makeWebPushSubscription()
            let keys = try WebPushKeys(p256dh: subscription.keys.p256dh, auth: subscription.keys.auth)
            let endpoint = try WebPushEndpoint.parse(subscription.endpoint).get()
            let vapid = try VAPIDKey(pem: TestKeyPair.generate().privatePEM)
            let claims = VAPIDClaims(audience: endpoint.origin, subject: try VAPIDSubject("mailto:push@example.com"),
                                     issuedAt: Int64(Date().timeIntervalSince1970))
            let payload = Array(#"{"web_push":8030,"notification":{"title":"Hi","navigate":"https://example.com/"}}"#.utf8)
            let file = NSTemporaryDirectory() + "webpush-body-\(UUID().uuidString)"
            defer { unlink(file) }
            try Data(try WebPushEncryptor().encrypt(payload, for: keys)).write(to: URL(fileURLWithPath: file))
            let result = try await ChildProcess.run("/usr/bin/curl", [
                "-sS", "--http2", "--cacert", Fixtures.caFile, "--max-time", "10", "-o", "/dev/null", "-w", "%{http_code}",
                "-H", "TTL: 60", "-H", "Content-Encoding: aes128gcm", "-H", "Content-Type: application/octet-stream",
                "-H", "Authorization: \(try vapid.authorization(claims))", "--data-binary", "@" + file, subscription.endpoint,
            ], environment: [:])
            #expect(result.stdout == "201", "curl: \(result.stderr)")
            let recorded = try #require(harness.server.webPushRequests().last)
            #expect(recorded.decrypted && recorded.plaintext == payload)
            #expect(recorded.vapidAudience == endpoint.origin.description)
            #expect(recorded.vapidSubject == "mailto:push@example.com")
            #expect(recorded.vapidPublicKey == vapid.applicationServerKey)
        } catch {
            try await harness.stop()
            throw error
        }
        try await harness.stop()
    }
}
