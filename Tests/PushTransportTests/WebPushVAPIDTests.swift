import Foundation
import COpenSSL
import PushCore
@testable import PushTransport
import Testing

/// VAPID (RFC 8292): the key from PEM (PKCS#8 or SEC1), the applicationServerKey it derives, and the
/// `Authorization: vapid t=…, k=…` header whose JWT OpenSSL verifies with the public key.
@Suite struct WebPushVAPIDTests {
    /// A P-256 key written as SEC1 (`EC PRIVATE KEY`) PEM by OpenSSL's traditional writer.
    static func sec1PEM(_ pkey: OpaquePointer) -> [UInt8] {
        let bio = BIO_new(BIO_s_mem())!
        defer { BIO_free(bio) }
        precondition(PEM_write_bio_PrivateKey_traditional(bio, pkey, nil, nil, 0, nil, nil) == 1)
        var out = [UInt8](repeating: 0, count: 4096)
        let n = BIO_read(bio, &out, 4096)
        return Array(out.prefix(Int(n)))
    }

    /// The uncompressed point of an SPKI PEM, read by the test itself.
    static func point(ofPublicPEM pem: [UInt8]) -> [UInt8] {
        let pkey: OpaquePointer = pem.withUnsafeBytes { raw in
            let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count))
            defer { BIO_free(bio) }
            return PEM_read_bio_PUBKEY(bio, nil, nil, nil)!
        }
        defer { EVP_PKEY_free(pkey) }
        var out = [UInt8](repeating: 0, count: 65)
        var length = 0
        precondition(EVP_PKEY_get_octet_string_param(pkey, "encoded-pub-key", &out, 65, &length) == 1)
        return out
    }

    @Test("PKCS#8 and SEC1 PEM load; the applicationServerKey is the base64url of the 65-byte public point")
    func keyForms() throws {
        let pair = TestKeyPair.generate()
        let pkcs8 = try VAPIDKey(pem: pair.privatePEM)
        #expect(pkcs8.publicKey == Self.point(ofPublicPEM: pair.publicPEM))
        #expect(pkcs8.applicationServerKey == Base64URL.encode(pkcs8.publicKey))
        #expect(pkcs8.applicationServerKey.utf8.count == 87 && pkcs8.applicationServerKey.hasPrefix("B"))

        let pkey = copenssl_ec_gen("P-256")!
        defer { EVP_PKEY_free(pkey) }
        let sec1 = Self.sec1PEM(pkey)
        #expect(String(decoding: sec1, as: UTF8.self).hasPrefix("-----BEGIN EC PRIVATE KEY-----"))
        #expect(try VAPIDKey(pem: sec1).publicKey.count == 65)
    }

    @Test("the Authorization header: vapid t=<ES256 JWT OpenSSL verifies>, k=<public key>; aud, exp and sub as given")
    func authorizationHeader() throws {
        let pair = TestKeyPair.generate()
        let key = try VAPIDKey(pem: pair.privatePEM)
        guard case .success(let endpoint) = WebPushEndpoint.parse("https://web.push.apple.com/QGuZ8uN3z") else { Issue.record("parse"); return }
        let claims = VAPIDClaims(audience: endpoint.origin, subject: try VAPIDSubject("mailto:push@example.com"), issuedAt: 1_800_000_000)
        let header = try key.authorization(claims)
        #expect(header.hasPrefix("vapid t="))
        let parts = header.dropFirst("vapid t=".count).components(separatedBy: ", k=")
        #expect(parts.count == 2 && parts[1] == key.applicationServerKey)
        let jwt = parts[0].split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        #expect(jwt.count == 3 && !parts[0].contains("="))
        #expect(Base64URL.decode(jwt[1]).map { String(decoding: $0, as: UTF8.self) } ==
                #"{"aud":"https://web.push.apple.com","exp":1800043200,"sub":"mailto:push@example.com"}"#)
        let signature = try #require(Base64URL.decode(jwt[2]))
        #expect(verifyES256(message: Array((jwt[0] + "." + jwt[1]).utf8), rawSignature: signature, publicKeyPEM: pair.publicPEM))
        #expect(!verifyES256(message: Array((jwt[0] + "." + jwt[1]).utf8), rawSignature: signature,
                             publicKeyPEM: TestKeyPair.generate().publicPEM))
    }

    @Test("a key that is not P-256, or no key file, is refused naming the VAPID key and the file, never the key")
    func refusals() throws {
        let p384 = copenssl_ec_gen("P-384")!
        defer { EVP_PKEY_free(p384) }
        let curve = try #require(throws: PushTransportError.self) { try VAPIDKey(pem: Self.sec1PEM(p384)) }
        #expect(curve.code == .invalidKey && curve.description.contains("VAPID key") && curve.description.contains("P-256"))
        let missing = try #require(throws: PushTransportError.self) { try VAPIDKey(file: "/nonexistent/vapid.pem") }
        #expect(missing.description.contains("/nonexistent/vapid.pem") && missing.description.contains("VAPID key"))
        let garbage = Array("-----BEGIN PRIVATE KEY-----\nVkFQSURTRUNSRVQ=\n-----END PRIVATE KEY-----\n".utf8)
        let parse = try #require(throws: PushTransportError.self) { try VAPIDKey(pem: garbage) }
        #expect(!parse.description.contains("VkFQSURTRUNSRVQ") && parse.description.contains("VAPID key"))
        // APNs' wording is unchanged.
        let apns = try #require(throws: PushTransportError.self) { try ES256PrivateKey(pem: Self.sec1PEM(p384)) }
        #expect(apns.description == "the provider key is not on curve P-256 (prime256v1)")
    }
}
