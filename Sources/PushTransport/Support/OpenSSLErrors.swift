import COpenSSL

/// Drains OpenSSL's thread-local error queue into one message (`ERR_error_string_n`).
///
/// Returns `fallback` when the queue is empty. Always leaves the queue empty, so a
/// later failure does not report this one's errors.
func openSSLErrorMessage(fallback: String) -> String {
    var messages: [String] = []
    while true {
        let code = ERR_get_error()
        if code == 0 { break }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
    return messages.isEmpty ? fallback : messages.joined(separator: "; ")
}

/// Reads every PEM certificate in `pem` with OpenSSL; nil if all are readable (and there is
/// at least one), otherwise OpenSSL's message.
func pemCertificateProblem(_ pem: [UInt8]) -> String? {
    ERR_clear_error()  // start from an empty queue
    return pem.withUnsafeBytes { raw -> String? in
        guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else {
            return openSSLErrorMessage(fallback: "BIO_new_mem_buf failed")
        }
        defer { BIO_free(bio) }
        var count = 0
        while let cert = PEM_read_bio_X509(bio, nil, nil, nil) {
            X509_free(cert)
            count += 1
        }
        // The loop ends at the end of the data (PEM_R_NO_START_LINE) or at a broken block.
        let last = ERR_peek_last_error()
        let endOfData = ERR_GET_LIB(last) == ERR_LIB_PEM && ERR_GET_REASON(last) == PEM_R_NO_START_LINE
        if count > 0, last == 0 || endOfData {
            ERR_clear_error()  // the end-of-data error just read
            return nil
        }
        return openSSLErrorMessage(fallback: "no certificate found")
    }
}

/// Parses a PEM private key (an `EVP_PKEY` the caller owns and frees), or nil with OpenSSL's
/// reasons in its error queue for ``openSSLErrorMessage(fallback:)``: the queue is emptied
/// first, so that they are this parse's alone.
func readPEMPrivateKey(_ pem: [UInt8]) -> OpaquePointer? {
    ERR_clear_error()
    return pem.withUnsafeBytes { raw in
        guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
        defer { BIO_free(bio) }
        return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
    }
}
