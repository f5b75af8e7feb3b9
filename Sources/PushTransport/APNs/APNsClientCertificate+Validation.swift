import COpenSSL
import Foundation
import PushCore

extension APNsClientCertificate {
    /// Opens the certificate (and key) with OpenSSL, as libcurl will, so a wrong path or
    /// password is reported at start in one clear sentence rather than as TLS errors later.
    ///
    /// - Returns: the certificate's notAfter, in UNIX seconds (nil if OpenSSL cannot read it).
    /// - Throws: ``PushTransportError`` `.invalidCertificate` naming the file, with OpenSSL's message.
    @discardableResult
    public func validate() throws -> Int64? {
        let bytes: [UInt8]
        do { bytes = try readWholeFile(file) } catch {
            throw PushTransportError(.invalidCertificate, "cannot read the APNs client certificate \(file)", cause: error)
        }
        ERR_clear_error()  // start from an empty queue
        switch format {
        case .pkcs12: return try validatePKCS12(bytes)
        case .pem(let keyFile): return try validatePEM(bytes, keyFile: keyFile ?? file)
        }
    }

    /// Opens a PKCS#12 file's certificate and key; returns the certificate's notAfter.
    private func validatePKCS12(_ bytes: [UInt8]) throws -> Int64? {
        var notAfter: Int64? = nil
        let ok: Bool = bytes.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return false }
            defer { BIO_free(bio) }
            guard let p12 = d2i_PKCS12_bio(bio, nil) else { return false }
            defer { PKCS12_free(p12) }
            var key: OpaquePointer? = nil
            var cert: OpaquePointer? = nil
            let parsed = PKCS12_parse(p12, password ?? "", &key, &cert, nil) == 1
            if let key { EVP_PKEY_free(key) }
            if let cert { notAfter = Self.notAfter(cert); X509_free(cert) }
            return parsed && key != nil && cert != nil
        }
        guard ok else {
            throw PushTransportError(.invalidCertificate, "cannot open the PKCS#12 client certificate \(file) (wrong PUSHQ_APNS_CERT_PASSWORD or not a .p12 with a key): "
                + openSSLErrorMessage(fallback: "no certificate and key found"))
        }
        return notAfter
    }

    /// Opens a PEM certificate and its key (in `keyPath`, which may be the same file);
    /// returns the certificate's notAfter.
    private func validatePEM(_ bytes: [UInt8], keyFile keyPath: String) throws -> Int64? {
        var notAfter: Int64? = nil
        let hasCert = bytes.withUnsafeBytes { raw -> Bool in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return false }
            defer { BIO_free(bio) }
            guard let cert = PEM_read_bio_X509(bio, nil, nil, nil) else { return false }
            notAfter = Self.notAfter(cert)
            X509_free(cert)
            return true
        }
        guard hasCert else {
            throw PushTransportError(.invalidCertificate, "no PEM certificate in the APNs client certificate file \(file): "
                + openSSLErrorMessage(fallback: "no BEGIN CERTIFICATE block"))
        }
        let keyBytes: [UInt8]
        do { keyBytes = try readWholeFile(keyPath) } catch {
            throw PushTransportError(.invalidCertificate, "cannot read the APNs client key \(keyPath)", cause: error)
        }
        let hasKey = keyBytes.withUnsafeBytes { raw -> Bool in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return false }
            defer { BIO_free(bio) }
            let key: OpaquePointer?
            if let password {
                key = password.withCString { p in PEM_read_bio_PrivateKey(bio, nil, nil, UnsafeMutableRawPointer(mutating: p)) }
            } else {
                key = PEM_read_bio_PrivateKey(bio, nil, nil, nil)
            }
            guard let key else { return false }
            EVP_PKEY_free(key)
            return true
        }
        guard hasKey else {
            throw PushTransportError(.invalidCertificate, "cannot read a private key from \(keyPath) (missing, or wrong PUSHQ_APNS_CERT_PASSWORD): "
                + openSSLErrorMessage(fallback: "no private key found"))
        }
        return notAfter
    }

    /// The end of a certificate's validity, in UNIX seconds.
    private static func notAfter(_ cert: OpaquePointer) -> Int64? {
        guard let time = X509_get0_notAfter(cert) else { return nil }
        var parts = tm()
        guard ASN1_TIME_to_tm(time, &parts) == 1 else { return nil }
        return Int64(timegm(&parts))
    }

    /// The failure every request gets once the certificate, valid until `notAfter`, has expired at `now`.
    static func expiredFailure(file: String, notAfter: Int64, now: Int64) -> TransportFailure? {
        guard now >= notAfter else { return nil }
        let date = Date(timeIntervalSince1970: TimeInterval(notAfter))
        return TransportFailure(kind: .clientCertificateExpired,
                                message: "the APNs client certificate \(file) expired at \(date) (notAfter): renew it in your Apple developer account")
    }
}
