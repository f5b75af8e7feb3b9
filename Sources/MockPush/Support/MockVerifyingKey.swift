import COpenSSL
import Foundation

/// A public key a signature is checked with, held as an OpenSSL `EVP_PKEY`: a P-256 key for
/// ES256 (APNs provider tokens) or an RSA key for RS256 (FCM service-account assertions).
///
/// Owns the `EVP_PKEY*` and frees it in `deinit`.
///
/// `@unchecked Sendable`: the key is never mutated after `init`; OpenSSL allows a
/// constant `EVP_PKEY` to be used by several threads at once as long as each
/// verification has its own `EVP_MD_CTX`, which `verify` creates per call.
final class MockVerifyingKey: @unchecked Sendable {
    enum Algorithm {
        /// ECDSA P-256 with SHA-256; signatures are JWT's raw r‖s (64 bytes).
        case es256
        /// RSASSA-PKCS1-v1_5 with SHA-256.
        case rs256
    }

    let algorithm: Algorithm
    private let pkey: OpaquePointer

    /// Reads a PEM public key (`BEGIN PUBLIC KEY`), or a PEM private key (a `.p8`, a service
    /// account's key) whose public half is used.
    ///
    /// - Parameter owner: whose key it is, for errors ("key id ABC123DEFG").
    /// - Throws: `MockPushError.keyLoadFailed` naming `path` and OpenSSL's message, also when
    ///   the key is not of `algorithm`'s type.
    init(pemPath path: String, algorithm: Algorithm, owner: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw MockPushError(.keyLoadFailed, "cannot read the public key file \(path) of \(owner)")
        }
        let pem = Array(data)
        let (baseID, kind) = algorithm == .es256 ? (EVP_PKEY_EC, "a P-256 key") : (EVP_PKEY_RSA, "an RSA key")
        func readKey(_ read: (OpaquePointer) -> OpaquePointer?) -> OpaquePointer? {
            pem.withUnsafeBytes { raw -> OpaquePointer? in
                guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
                defer { BIO_free(bio) }
                return read(bio)
            }
        }
        let key = readKey { PEM_read_bio_PUBKEY($0, nil, nil, nil) } ?? readKey { PEM_read_bio_PrivateKey($0, nil, nil, nil) }
        guard let key else {
            throw MockPushError(.keyLoadFailed, "cannot read \(kind) from \(path): \(openSSLErrorMessage())")
        }
        guard EVP_PKEY_get_base_id(key) == baseID else {
            EVP_PKEY_free(key)
            throw MockPushError(.keyLoadFailed, "\(path) is not \(kind)")
        }
        ERR_clear_error()
        self.pkey = key
        self.algorithm = algorithm
    }

    deinit { EVP_PKEY_free(pkey) }

    /// Whether `signature` is a valid signature of `message` under this key and algorithm.
    func verify(signature: [UInt8], of message: some Sequence<UInt8>) -> Bool {
        let signature = algorithm == .es256 ? Self.derSignature(rawRS: signature) : signature
        guard let signature, let ctx = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestVerifyInit(ctx, nil, EVP_sha256(), nil, pkey) == 1 else {
            ERR_clear_error()
            return false
        }
        let ok = signature.withUnsafeBufferPointer { sig in
            Array(message).withUnsafeBufferPointer { msg in
                EVP_DigestVerify(ctx, sig.baseAddress, sig.count, msg.baseAddress, msg.count)
            }
        }
        if ok != 1 { ERR_clear_error() }
        return ok == 1
    }

    /// Converts JWT's raw r‖s (64 bytes) into the DER `ECDSA-Sig-Value` OpenSSL verifies.
    static func derSignature(rawRS: [UInt8]) -> [UInt8]? {
        guard rawRS.count == 64, let sig = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(sig) }
        let (r, s) = rawRS.withUnsafeBufferPointer { buf in
            (BN_bin2bn(buf.baseAddress, 32, nil), BN_bin2bn(buf.baseAddress! + 32, 32, nil))
        }
        // ECDSA_SIG_set0 takes ownership of r and s only when it succeeds.
        guard let r, let s, ECDSA_SIG_set0(sig, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        let length = i2d_ECDSA_SIG(sig, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buf -> Int32 in
            var p: UnsafeMutablePointer<UInt8>? = buf.baseAddress
            return i2d_ECDSA_SIG(sig, &p)
        }
        return written == length ? der : nil
    }
}
