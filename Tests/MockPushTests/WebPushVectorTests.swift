import Foundation
@testable import MockPush
import Testing

/// RFC 8291's example (§5, "Push Message Encryption Example") and its intermediate values
/// (Appendix A), transcribed from the RFC's text; the RFC prints them wrapped, whitespace removed.
enum RFC8291Example {
    static let plaintext = "When I grow up, I want to be a watermelon"
    /// Appendix A, "Plaintext".
    static let plaintextBase64URL = "V2hlbiBJIGdyb3cgdXAsIEkgd2FudCB0byBiZSBhIHdhdGVybWVsb24"
    static let asPublic = "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
    static let asPrivate = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
    static let uaPublic = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let uaPrivate = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
    static let salt = "DGv6ra1nlYgDCS1FRnbzlw"
    static let authSecret = "BTBZMqHH6r4Tts7J_aSIgg"
    static let ecdhSecret = "kyrL1jIIOHEzg3sM2ZWRHDRB62YACZhhSlknJ672kSs"
    static let ikm = "S4lYMb_L0FxCeq0WhDx813KgSYqU26kOyzWUdsXYyrg"
    static let cek = "oIhVW04MRdy2XN9CiKLxTg"
    static let nonce = "4h_95klXJ5E_qnoN"
    /// Appendix A: the 86-octet header and the ciphertext, each base64url on its own.
    static let header = "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
    static let ciphertext = "8pfeW0KbunFT06SuDKoJH9Ql87S1QUrdirN6GcG7sFz1y1sqLgVi1VhjVkHsUoEsbI_0LpXMuGvnzQ"
    /// §5: the whole body as sent.
    static let body = "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27ml"
        + "mlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPT"
        + "pK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"
}

/// The mock's decryption against RFC 8291's example, and the tests' own encryptor against it too
/// (so that the round trips in WebPushAnswerTests are two implementations agreeing with the RFC).
@Suite struct WebPushVectorTests {
    typealias V = RFC8291Example

    @Test func appendixTranscriptionIsConsistent() {
        #expect(String(decoding: base64urlDecode(V.plaintextBase64URL), as: UTF8.self) == V.plaintext)
        #expect(base64urlDecode(V.header) + base64urlDecode(V.ciphertext) == base64urlDecode(V.body))
        #expect(base64urlDecode(V.header).count == 86)
    }

    /// The mock's steps give the appendix's intermediate values: ECDH secret, CEK and nonce.
    @Test func mockKeyDerivationGivesAppendixIntermediates() throws {
        let receiver = try MockWebPushKey.privateKey(scalar: base64urlDecode(V.uaPrivate))
        #expect(base64url(receiver.publicPoint) == V.uaPublic)
        let sender = try #require(MockWebPushKey.publicKey(point: base64urlDecode(V.asPublic)))
        let secret = try #require(receiver.sharedSecret(with: sender))
        #expect(base64url(secret) == V.ecdhSecret)
        let keys = try #require(MockWebPushDecryptor.contentKeys(
            ecdhSecret: secret, authSecret: base64urlDecode(V.authSecret), salt: base64urlDecode(V.salt),
            receiverPublic: receiver.publicPoint, senderPublic: sender.publicPoint))
        #expect(base64url(keys.cek) == V.cek)
        #expect(base64url(keys.nonce) == V.nonce)
    }

    @Test func mockDecryptsAppendixCiphertextToAppendixPlaintext() throws {
        let receiver = try MockWebPushKey.privateKey(scalar: base64urlDecode(V.uaPrivate))
        let body = base64urlDecode(V.header) + base64urlDecode(V.ciphertext)
        let plaintext = try MockWebPushDecryptor.decrypt(body, receiver: receiver, authSecret: base64urlDecode(V.authSecret)).get()
        #expect(String(decoding: plaintext, as: UTF8.self) == V.plaintext)
        // One octet changed anywhere in the ciphertext: the tag refuses it.
        var tampered = body
        tampered[100] ^= 0x01
        let refused = MockWebPushDecryptor.decrypt(tampered, receiver: receiver, authSecret: base64urlDecode(V.authSecret))
        #expect(throws: MockWebPushDecryptor.Failure.self) { try refused.get() }
        // Another auth secret: refused too.
        let wrongAuth = MockWebPushDecryptor.decrypt(body, receiver: receiver, authSecret: [UInt8](repeating: 7, count: 16))
        #expect(throws: MockWebPushDecryptor.Failure.self) { try wrongAuth.get() }
    }

    @Test func testEncryptorReproducesTheRFCExampleBody() throws {
        let body = try WebPushTestSender.encrypt(Array(V.plaintext.utf8), p256dh: V.uaPublic, auth: V.authSecret,
                                                 sender: try TestP256Key.privateKey(scalar: base64urlDecode(V.asPrivate)),
                                                 salt: base64urlDecode(V.salt))
        #expect(base64url(body) == base64url(base64urlDecode(V.body)))
    }

    /// A subscription with the RFC's receiver keys, sent the RFC's body over TLS + HTTP/2: the
    /// mock records the RFC's plaintext.
    @Test func endpointWithRFCKeysRecordsTheRFCPlaintext() async throws {
        try await withMock { server, port in
            let target = try server.webPushTarget(port: port, MockWebPushSubscriptionOptions(privateKey: V.uaPrivate, auth: V.authSecret))
            #expect(target.subscription.keys.p256dh == V.uaPublic)
            var request = try target.request()
            request.body = base64urlDecode(V.body)
            let response = try Curl.one(port: port, request)
            #expect(response.status == 201, "\(response.body)")
            let record = try #require(server.webPushRequests().first)
            #expect(record.decrypted)
            #expect(record.plaintextString == V.plaintext)
        }
    }
}
