import Foundation
import COpenSSL
import PushCore
@testable import PushTransport
import Testing

/// RFC 8291 §5 / Appendix A: every input and intermediate value, base64url as the RFC prints them.
enum RFC8291 {
    static let plaintext = Array("When I grow up, I want to be a watermelon".utf8)
    static let asPrivate = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
    static let asPublic = "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
    static let uaPrivate = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
    static let uaPublic = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let authSecret = "BTBZMqHH6r4Tts7J_aSIgg"
    static let salt = "DGv6ra1nlYgDCS1FRnbzlw"
    static let ecdhSecret = "kyrL1jIIOHEzg3sM2ZWRHDRB62YACZhhSlknJ672kSs"
    static let ikm = "S4lYMb_L0FxCeq0WhDx813KgSYqU26kOyzWUdsXYyrg"
    static let cek = "oIhVW04MRdy2XN9CiKLxTg"
    static let nonce = "4h_95klXJ5E_qnoN"
    static let body = "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"

    static func bytes(_ text: String) -> [UInt8] { Base64URL.decode(text)! }
}

/// The same key pair and salt every time: RFC 8291's example made reproducible.
struct FixedEphemerals: WebPushEphemeralSource {
    let scalar: [UInt8]
    let salt: [UInt8]
    func next() throws -> WebPushEphemeral { WebPushEphemeral(keyPair: try WebPushKeyPair(privateKey: scalar), salt: salt) }
}

/// aes128gcm as RFC 8291 defines it: Appendix A byte for byte, a round trip through a decryption
/// written here (not the product's), and a fresh key pair and salt for every message.
@Suite struct WebPushEncryptionTests {
    let rfcKeys = try! WebPushKeys(p256dh: RFC8291.uaPublic, auth: RFC8291.authSecret)

    @Test("RFC 8291 Appendix A: ECDH secret, IKM, CEK, NONCE and the whole body, byte for byte")
    func appendixA() throws {
        let encryptor = try WebPushEncryptor(source: FixedEphemerals(scalar: RFC8291.bytes(RFC8291.asPrivate), salt: RFC8291.bytes(RFC8291.salt)))
        let ephemeral = try encryptor.source.next()
        #expect(Base64URL.encode(ephemeral.keyPair.publicKey) == RFC8291.asPublic)
        let secret = try ephemeral.keyPair.sharedSecret(with: WebPushPeerKey(point: rfcKeys.p256dh))
        #expect(Base64URL.encode(secret) == RFC8291.ecdhSecret)
        let derived = try encryptor.deriveKeys(ecdhSecret: secret, auth: rfcKeys.auth, uaPublic: rfcKeys.p256dh,
                                               asPublic: ephemeral.keyPair.publicKey, salt: ephemeral.salt)
        #expect(Base64URL.encode(derived.ikm) == RFC8291.ikm)
        #expect(Base64URL.encode(derived.cek) == RFC8291.cek)
        #expect(Base64URL.encode(derived.nonce) == RFC8291.nonce)
        let body = try encryptor.encrypt(RFC8291.plaintext, for: rfcKeys)
        #expect(body.count == 144)
        #expect(Base64URL.encode(body) == RFC8291.body)
    }

    @Test("the test's own decryption opens RFC 8291's body with the user agent's private key")
    func independentDecryptOpensTheRFCBody() throws {
        let ua = try #require(TestECKey(scalar: RFC8291.bytes(RFC8291.uaPrivate)))
        #expect(Base64URL.encode(ua.publicPoint) == RFC8291.uaPublic)
        #expect(try aes128gcmDecrypt(RFC8291.bytes(RFC8291.body), receiver: ua, auth: RFC8291.bytes(RFC8291.authSecret)) == RFC8291.plaintext)
    }

    @Test("round trip: what is encrypted for a fresh subscription decrypts to the same bytes; a flipped bit fails",
          arguments: [0, 1, 41, 1000, 3993])
    func roundTrip(size: Int) throws {
        let ua = try #require(TestECKey.generate())
        var auth = [UInt8](repeating: 0, count: 16)
        #expect(RAND_bytes(&auth, 16) == 1)
        let plaintext = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let body = try WebPushEncryptor().encrypt(plaintext, for: WebPushKeys(p256dh: ua.publicPoint, auth: auth))
        #expect(body.count == 86 + size + 1 + 16)
        #expect(Array(body[16..<21]) == [0, 0, 0x10, 0, 65])  // rs = 4096, idlen = 65
        #expect(try aes128gcmDecrypt(body, receiver: ua, auth: auth) == plaintext)
        var tampered = body
        tampered[body.count - 20] ^= 1
        #expect(throws: (any Error).self) { try aes128gcmDecrypt(tampered, receiver: ua, auth: auth) }
        var wrongAuth = auth
        wrongAuth[0] ^= 1
        #expect(throws: (any Error).self) { try aes128gcmDecrypt(body, receiver: ua, auth: wrongAuth) }
    }

    @Test("two messages never share a key pair or a salt, even with the same payload and subscription")
    func freshPerMessage() throws {
        let ua = try #require(TestECKey.generate())
        let keys = try WebPushKeys(p256dh: ua.publicPoint, auth: [UInt8](repeating: 9, count: 16))
        let encryptor = try WebPushEncryptor()
        var salts: Set<[UInt8]> = []
        var senderKeys: Set<[UInt8]> = []
        for _ in 0..<64 {
            let body = try encryptor.encrypt(Array("same".utf8), for: keys)
            salts.insert(Array(body[0..<16]))
            senderKeys.insert(Array(body[21..<86]))
            #expect(try aes128gcmDecrypt(body, receiver: ua, auth: keys.auth) == Array("same".utf8))
        }
        #expect(salts.count == 64)
        #expect(senderKeys.count == 64)
    }

    /// A private key is a scalar in 1…n−1 (SEC 1 §3.2.1). n + 1 is 256 bits and would act as 1
    /// (its public key G), so it is refused rather than taken modulo n.
    @Test("a private key is a scalar in 1 ... n-1: 0, n and n + 1 are refused invalidKey; n - 1 is taken, its public key -G")
    func privateKeyRange() throws {
        let n: [UInt8] = [0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                          0xbc, 0xe6, 0xfa, 0xad, 0xa7, 0x17, 0x9e, 0x84, 0xf3, 0xb9, 0xca, 0xc2, 0xfc, 0x63, 0x25, 0x51]
        var nPlusOne = n
        nPlusOne[31] += 1
        var nMinusOne = n
        nMinusOne[31] -= 1
        for scalar in [[UInt8](repeating: 0, count: 32), n, nPlusOne] {
            let error = try #require(throws: PushTransportError.self) { try WebPushKeyPair(privateKey: scalar) }
            #expect(error.code == .invalidKey)
        }
        var one = [UInt8](repeating: 0, count: 32)
        one[31] = 1
        let g = try WebPushKeyPair(privateKey: one).publicKey
        let minusG = try WebPushKeyPair(privateKey: nMinusOne).publicKey
        // (n − 1)·G = −G: the same x, y negated (p − y).
        #expect(minusG[0] == 0x04 && Array(minusG[1..<33]) == Array(g[1..<33]) && Array(minusG[33..<65]) != Array(g[33..<65]))
    }

    @Test("3 994 bytes are refused PayloadTooLarge, never truncated; a point off the curve is the subscription's fault")
    func refusals() throws {
        let encryptor = try WebPushEncryptor()
        let big = try #require(throws: PushRequest.Refusal.self) { try encryptor.encrypt([UInt8](repeating: 0x41, count: 3994), for: rfcKeys) }
        #expect(big.reason == "PayloadTooLarge")
        var offCurve = rfcKeys.p256dh
        offCurve[64] ^= 1
        let bad = try #require(throws: PushRequest.Refusal.self) {
            try encryptor.encrypt([1], for: WebPushKeys(p256dh: offCurve, auth: rfcKeys.auth))
        }
        #expect(bad.reason == "InvalidSubscriptionKeys" && bad.message.contains("p256dh"))
    }
}

// MARK: - The test's own aes128gcm decryption (RFC 8188 / 8291), independent of the product's path:
// HKDF from HMAC (EVP_Q_mac), AES-128-GCM through the legacy EVP_aes_128_gcm, ECDH on the test's key.

/// A P-256 key the test owns (the user agent's): frees its EVP_PKEY when done.
final class TestECKey {
    let pkey: OpaquePointer
    let publicPoint: [UInt8]

    init?(pkey: OpaquePointer) {
        var point = [UInt8](repeating: 0, count: 65)
        var length = 0
        guard EVP_PKEY_get_octet_string_param(pkey, "encoded-pub-key", &point, 65, &length) == 1, length == 65 else {
            EVP_PKEY_free(pkey)
            return nil
        }
        self.pkey = pkey
        publicPoint = point
    }

    static func generate() -> TestECKey? { copenssl_ec_gen("P-256").flatMap { TestECKey(pkey: $0) } }

    /// From a raw scalar through a PEM the test writes itself (SEC1 DER, base64).
    convenience init?(scalar: [UInt8]) {
        let der: [UInt8] = [0x30, 0x31, 0x02, 0x01, 0x01, 0x04, 0x20] + scalar + [0xa0, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07]
        let b64 = Base64URL.encode(der).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        let padded = b64 + String(repeating: "=", count: (4 - b64.count % 4) % 4)
        let pem = Array("-----BEGIN EC PRIVATE KEY-----\n\(padded)\n-----END EC PRIVATE KEY-----\n".utf8)
        let key: OpaquePointer? = pem.withUnsafeBytes { raw in
            let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count))
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
        }
        guard let key else { return nil }
        self.init(pkey: key)
    }

    deinit { EVP_PKEY_free(pkey) }
}

struct DecryptFailure: Error { let step: String }

func hmacSHA256(key: [UInt8], _ data: [UInt8]) throws -> [UInt8] {
    var out = [UInt8](repeating: 0, count: 32)
    var length = 0
    guard EVP_Q_mac(nil, "HMAC", nil, "SHA256", nil, key, key.count, data, data.count, &out, 32, &length) != nil, length == 32 else {
        throw DecryptFailure(step: "HMAC")
    }
    return out
}

/// RFC 5869 with one expand block (at most 32 bytes).
func hkdfOneBlock(salt: [UInt8], ikm: [UInt8], info: [UInt8], length: Int) throws -> [UInt8] {
    let prk = try hmacSHA256(key: salt, ikm)
    return Array(try hmacSHA256(key: prk, info + [1]).prefix(length))
}

func aes128gcmDecrypt(_ body: [UInt8], receiver: TestECKey, auth: [UInt8]) throws -> [UInt8] {
    guard body.count >= 86 + 17 else { throw DecryptFailure(step: "length") }
    let salt = Array(body[0..<16])
    let rs = body[16..<20].reduce(0) { $0 << 8 | Int($1) }
    let idlen = Int(body[20])
    guard rs == 4096, idlen == 65 else { throw DecryptFailure(step: "header") }
    let senderPoint = Array(body[21..<86])
    let record = Array(body[86...])
    guard record.count <= rs else { throw DecryptFailure(step: "one record") }

    // ECDH: the receiver's private key with the sender's point (an SPKI the test builds itself).
    let spki: [UInt8] = [0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08,
                         0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00] + senderPoint
    let peer: OpaquePointer? = spki.withUnsafeBufferPointer { b in
        var cursor: UnsafePointer<UInt8>? = b.baseAddress
        return d2i_PUBKEY(nil, &cursor, b.count)
    }
    guard let peer else { throw DecryptFailure(step: "sender key") }
    defer { EVP_PKEY_free(peer) }
    let ctx = EVP_PKEY_CTX_new(receiver.pkey, nil)!
    defer { EVP_PKEY_CTX_free(ctx) }
    var secret = [UInt8](repeating: 0, count: 32)
    var secretLength = 32
    guard EVP_PKEY_derive_init(ctx) == 1, EVP_PKEY_derive_set_peer(ctx, peer) == 1,
          EVP_PKEY_derive(ctx, &secret, &secretLength) == 1 else { throw DecryptFailure(step: "ECDH") }

    let ikm = try hkdfOneBlock(salt: auth, ikm: secret, info: Array("WebPush: info\0".utf8) + receiver.publicPoint + senderPoint, length: 32)
    let cek = try hkdfOneBlock(salt: salt, ikm: ikm, info: Array("Content-Encoding: aes128gcm\0".utf8), length: 16)
    let nonce = try hkdfOneBlock(salt: salt, ikm: ikm, info: Array("Content-Encoding: nonce\0".utf8), length: 12)

    let ciphertext = Array(record.dropLast(16))
    var tag = Array(record.suffix(16))
    let cipher = EVP_CIPHER_CTX_new()!
    defer { EVP_CIPHER_CTX_free(cipher) }
    var plain = [UInt8](repeating: 0, count: ciphertext.count + 16)
    var n: Int32 = 0
    var m: Int32 = 0
    guard EVP_DecryptInit_ex(cipher, EVP_aes_128_gcm(), nil, cek, nonce) == 1,
          EVP_DecryptUpdate(cipher, &plain, &n, ciphertext, Int32(ciphertext.count)) == 1,
          EVP_CIPHER_CTX_ctrl(cipher, EVP_CTRL_GCM_SET_TAG, 16, &tag) == 1 else { throw DecryptFailure(step: "AES-GCM") }
    let verified = plain.withUnsafeMutableBufferPointer { EVP_DecryptFinal_ex(cipher, $0.baseAddress! + Int(n), &m) }
    guard verified == 1 else { throw DecryptFailure(step: "tag") }
    plain = Array(plain.prefix(Int(n + m)))
    // The last record ends with 0x02, then only zero padding may follow it.
    while plain.last == 0 { plain.removeLast() }
    guard plain.last == 2 else { throw DecryptFailure(step: "padding delimiter") }
    return Array(plain.dropLast())
}
