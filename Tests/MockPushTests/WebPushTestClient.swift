// The sender's side of Web Push for the mock's tests, written here with OpenSSL and apart from the
// mock's decryptor (HKDF through OpenSSL's own HKDF, not the mock's HMAC steps): RFC 8291
// encryption and RFC 8292 VAPID, so that a round trip is two implementations agreeing, and
// WebPushVectorTests pins this one to RFC 8291's example as well.
import COpenSSL
import Foundation
@testable import MockPush

struct WebPushTestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

func base64urlDecode(_ text: String) -> [UInt8] {
    var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while s.count % 4 != 0 { s += "=" }
    return Array(Data(base64Encoded: s) ?? Data())
}

/// A P-256 key of the test's sender (owns its EVP_PKEY).
final class TestP256Key: @unchecked Sendable {
    let pkey: OpaquePointer

    private init(_ pkey: OpaquePointer) { self.pkey = pkey }
    deinit { EVP_PKEY_free(pkey) }

    static func generate() throws -> TestP256Key {
        guard let key = copenssl_ec_gen("P-256") else { throw WebPushTestError("EC keygen failed") }
        return TestP256Key(key)
    }

    /// From a 32-byte scalar (SEC1 ECPrivateKey DER without the public key; OpenSSL computes it).
    static func privateKey(scalar: [UInt8]) throws -> TestP256Key {
        let der: [UInt8] = [0x30, 0x31, 0x02, 0x01, 0x01, 0x04, 0x20] + scalar
            + [0xA0, 0x0A, 0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]
        let key = der.withUnsafeBufferPointer { buf -> OpaquePointer? in
            var p: UnsafePointer<UInt8>? = buf.baseAddress
            return d2i_AutoPrivateKey(nil, &p, buf.count)
        }
        guard let key else { throw WebPushTestError("not a P-256 scalar") }
        return TestP256Key(key)
    }

    static func publicKey(point: [UInt8]) throws -> TestP256Key {
        let der: [UInt8] = [0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01,
                            0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00] + point
        let key = der.withUnsafeBufferPointer { buf -> OpaquePointer? in
            var p: UnsafePointer<UInt8>? = buf.baseAddress
            return d2i_PUBKEY(nil, &p, buf.count)
        }
        guard let key else { throw WebPushTestError("not a P-256 point") }
        return TestP256Key(key)
    }

    /// The uncompressed point, 65 bytes.
    var point: [UInt8] {
        var der = [UInt8](repeating: 0, count: 128)
        let n = der.withUnsafeMutableBufferPointer { buf -> Int32 in
            var p: UnsafeMutablePointer<UInt8>? = buf.baseAddress
            return i2d_PUBKEY(pkey, &p)
        }
        return Array(der[Int(n) - 65..<Int(n)])
    }

    var pointBase64URL: String { base64url(point) }

    func ecdh(_ peer: TestP256Key) throws -> [UInt8] {
        guard let ctx = EVP_PKEY_CTX_new(pkey, nil) else { throw WebPushTestError("ctx") }
        defer { EVP_PKEY_CTX_free(ctx) }
        var out = [UInt8](repeating: 0, count: 32)
        var n = 32
        guard EVP_PKEY_derive_init(ctx) == 1, EVP_PKEY_derive_set_peer(ctx, peer.pkey) == 1, EVP_PKEY_derive(ctx, &out, &n) == 1 else {
            throw WebPushTestError("ECDH failed")
        }
        return out
    }

    /// ES256 over `message`, JWT's raw r‖s.
    func signES256(_ message: [UInt8]) throws -> [UInt8] {
        guard let ctx = EVP_MD_CTX_new() else { throw WebPushTestError("ctx") }
        defer { EVP_MD_CTX_free(ctx) }
        var length = 0
        guard EVP_DigestSignInit(ctx, nil, EVP_sha256(), nil, pkey) == 1,
              EVP_DigestSign(ctx, nil, &length, message, message.count) == 1 else { throw WebPushTestError("sign") }
        var der = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(ctx, &der, &length, message, message.count) == 1,
              let raw = MockPushFixtures.rawSignature(der: Array(der.prefix(length))) else { throw WebPushTestError("sign") }
        return raw
    }
}

/// HKDF-SHA-256 through OpenSSL's HKDF (extract and expand).
func testHKDF(salt: [UInt8], ikm: [UInt8], info: [UInt8], length: Int) throws -> [UInt8] {
    guard let ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nil) else { throw WebPushTestError("hkdf ctx") }
    defer { EVP_PKEY_CTX_free(ctx) }
    var out = [UInt8](repeating: 0, count: length)
    var n = length
    guard EVP_PKEY_derive_init(ctx) == 1, EVP_PKEY_CTX_set_hkdf_md(ctx, EVP_sha256()) == 1,
          EVP_PKEY_CTX_set1_hkdf_salt(ctx, salt, Int32(salt.count)) == 1,
          EVP_PKEY_CTX_set1_hkdf_key(ctx, ikm, Int32(ikm.count)) == 1,
          EVP_PKEY_CTX_add1_hkdf_info(ctx, info, Int32(info.count)) == 1,
          EVP_PKEY_derive(ctx, &out, &n) == 1 else { throw WebPushTestError("hkdf") }
    return out
}

/// An RFC 8291 sender for tests.
enum WebPushTestSender {
    /// The aes128gcm body of `plaintext` for the subscription (`p256dh`, `auth`, base64url),
    /// with a fresh sender key and salt unless given; `delimiter` 0x02 as the RFC says (another
    /// value makes a message the user agent must discard), `rs` 4096.
    static func encrypt(_ plaintext: [UInt8], p256dh: String, auth: String, sender: TestP256Key? = nil, salt: [UInt8]? = nil,
                        delimiter: UInt8 = 0x02, rs: UInt32 = 4096) throws -> [UInt8] {
        let sender = try sender ?? TestP256Key.generate()
        var fresh = [UInt8](repeating: 0, count: 16)
        guard salt != nil || RAND_bytes(&fresh, 16) == 1 else { throw WebPushTestError("RAND_bytes") }
        let salt = salt ?? fresh
        let uaPublic = base64urlDecode(p256dh)
        let asPublic = sender.point
        let secret = try sender.ecdh(try TestP256Key.publicKey(point: uaPublic))
        let ikm = try testHKDF(salt: base64urlDecode(auth), ikm: secret,
                               info: Array("WebPush: info".utf8) + [0] + uaPublic + asPublic, length: 32)
        let cek = try testHKDF(salt: salt, ikm: ikm, info: Array("Content-Encoding: aes128gcm".utf8) + [0], length: 16)
        let nonce = try testHKDF(salt: salt, ikm: ikm, info: Array("Content-Encoding: nonce".utf8) + [0], length: 12)
        let sealed = try aesGCMSeal(plaintext + [delimiter], key: cek, nonce: nonce)
        let rsBytes: [UInt8] = [UInt8(rs >> 24), UInt8((rs >> 16) & 0xFF), UInt8((rs >> 8) & 0xFF), UInt8(rs & 0xFF)]
        return salt + rsBytes + [65] + asPublic + sealed
    }

    static func aesGCMSeal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8]) throws -> [UInt8] {
        guard let ctx = EVP_CIPHER_CTX_new() else { throw WebPushTestError("cipher ctx") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        var out = [UInt8](repeating: 0, count: plaintext.count + 16)
        var n: Int32 = 0
        var m: Int32 = 0
        var tag = [UInt8](repeating: 0, count: 16)
        guard EVP_EncryptInit_ex(ctx, EVP_aes_128_gcm(), nil, key, nonce) == 1,
              EVP_EncryptUpdate(ctx, &out, &n, plaintext, Int32(plaintext.count)) == 1,
              out.withUnsafeMutableBufferPointer({ EVP_EncryptFinal_ex(ctx, $0.baseAddress! + Int(n), &m) }) == 1,
              EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, &tag) == 1 else { throw WebPushTestError("seal") }
        return Array(out.prefix(Int(n + m))) + tag
    }

    /// `vapid t=<JWT>, k=<key>` signed by `key` (RFC 8292), with any claims (to test refusals);
    /// `k` defaults to the signing key's point.
    static func vapid(key: TestP256Key, audience: String, expiresIn: Int64 = 3600, subject: String? = "mailto:push@example.com",
                      alg: String = "ES256", k: String? = nil, now: Int64 = MockClock.wallSeconds()) throws -> String {
        let header = #"{"typ":"JWT","alg":"\#(alg)"}"#
        var claims = #"{"aud":"\#(audience)","exp":\#(now + expiresIn)"#
        if let subject { claims += #","sub":"\#(subject)""# }
        claims += "}"
        let input = base64url(Array(header.utf8)) + "." + base64url(Array(claims.utf8))
        let signature = try key.signES256(Array(input.utf8))
        return "vapid t=\(input).\(base64url(signature)), k=\(k ?? key.pointBase64URL)"
    }
}

/// A subscription made by the mock and a sender for it: builds requests over the test's curl.
struct WebPushTestTarget {
    var subscription: MockWebPushSubscription
    var vapidKey: TestP256Key
    var port: Int

    var path: String { "/wp/" + subscription.id }
    var origin: String { String(subscription.endpoint[..<subscription.endpoint.range(of: "/wp/")!.lowerBound]) }

    /// A valid message: encrypted `plaintext`, TTL 60, a VAPID JWT for the endpoint's origin.
    func request(_ plaintext: String = #"{"web_push":8030,"notification":{"title":"hi"}}"#) throws -> TestRequest {
        let body = try WebPushTestSender.encrypt(Array(plaintext.utf8), p256dh: subscription.keys.p256dh, auth: subscription.keys.auth)
        return TestRequest(method: "POST", path: path, headers: [
            ("authorization", try WebPushTestSender.vapid(key: vapidKey, audience: origin)),
            ("ttl", "60"), ("content-encoding", "aes128gcm"), ("content-type", "application/octet-stream"),
        ], body: body)
    }
}

extension MockPushServer {
    /// A fresh subscription and a fresh VAPID key to send to it with.
    func webPushTarget(port: Int, _ options: MockWebPushSubscriptionOptions = .init()) throws -> WebPushTestTarget {
        WebPushTestTarget(subscription: try makeWebPushSubscription(options), vapidKey: try TestP256Key.generate(), port: port)
    }
}
