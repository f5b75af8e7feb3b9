import CCurl

/// What every transfer pushq makes shares, whatever it carries: HTTP/2 over TLS 1.2 or
/// later, the peer's certificate and host name always verified, deadlines always on, no
/// signals. Applied to every stream of every sender and to FCM's token exchange: the one place
/// that says how pushq talks TLS.
struct CurlTransferSettings: Sendable {
    /// Deadline of one transfer, from when it is handed to libcurl.
    var requestTimeoutMilliseconds: Int
    /// Deadline of a connection's TCP+TLS setup.
    var connectTimeoutMilliseconds: Int
    /// The trusted CAs given in memory (``caBundle(adding:libcurl:)``), nil for libcurl's own.
    var caBundle: [UInt8]?
    /// The extra CA's file, for messages.
    var caFile: String?
    /// `CURLOPT_VERBOSE`: libcurl's trace on stderr. It prints request headers, tokens
    /// included: for debugging tests against the mock only.
    var verbose = false

    /// Reads the extra CA file, if any, into the bundle.
    ///
    /// - Throws: ``PushTransportError`` `.configuration` naming the file.
    init(requestTimeout: Double, connectTimeout: Double, extraCAFile: String?, verbose: Bool, libcurl: LibcurlInfo) throws {
        requestTimeoutMilliseconds = Int(requestTimeout * 1000)
        connectTimeoutMilliseconds = Int(connectTimeout * 1000)
        caBundle = try extraCAFile.map { try Self.caBundle(adding: $0, libcurl: libcurl) }
        caFile = extraCAFile
        self.verbose = verbose
    }

    /// Sets these options on `easy`.
    ///
    /// - Throws: ``PushTransportError`` `.curlSetup` naming the option libcurl refused.
    func apply(to easy: CurlEasy) throws {
        try easy.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS), "CURLOPT_HTTP_VERSION")
        try easy.set(CURLOPT_NOSIGNAL, 1, "CURLOPT_NOSIGNAL")
        try easy.set(CURLOPT_TIMEOUT_MS, requestTimeoutMilliseconds, "CURLOPT_TIMEOUT_MS")
        try easy.set(CURLOPT_CONNECTTIMEOUT_MS, connectTimeoutMilliseconds, "CURLOPT_CONNECTTIMEOUT_MS")
        try easy.set(CURLOPT_SSL_VERIFYPEER, 1, "CURLOPT_SSL_VERIFYPEER")
        try easy.set(CURLOPT_SSL_VERIFYHOST, 2, "CURLOPT_SSL_VERIFYHOST")
        try easy.set(CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_2), "CURLOPT_SSLVERSION")
        if verbose { try easy.set(CURLOPT_VERBOSE, 1, "CURLOPT_VERBOSE") }
        if let caBundle {
            try easy.set(CURLOPT_CAINFO_BLOB, blob: caBundle, "CURLOPT_CAINFO_BLOB for PUSHQ_CA_FILE \(caFile ?? "")")
        }
    }

    /// The PEM blob given to libcurl as `CURLOPT_CAINFO_BLOB` so that `extraFile` is trusted
    /// *in addition to* the system roots.
    ///
    /// A CA blob makes libcurl ignore `CURLOPT_CAINFO` (the bundle file) but not
    /// `CURLOPT_CAPATH`. When libcurl has a built-in CA directory (Debian: `/etc/ssl/certs`),
    /// the system roots keep coming from it and the blob is just the extra CA. Otherwise the
    /// blob is the system bundle followed by the extra CA. Keep the blob small: libcurl 7.88
    /// copies the SSL configuration, blob included, for every transfer (a 200 KB bundle cost
    /// ~100 µs of memcpy per notification).
    static func caBundle(adding extraFile: String, libcurl: LibcurlInfo) throws -> [UInt8] {
        let extra: [UInt8]
        do { extra = try readWholeFile(extraFile) } catch {
            throw PushTransportError(.configuration, "cannot read PUSHQ_CA_FILE \(extraFile)", cause: error)
        }
        guard String(decoding: extra, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----") else {
            throw PushTransportError(.configuration, "PUSHQ_CA_FILE \(extraFile) holds no PEM certificate")
        }
        if let problem = pemCertificateProblem(extra) {
            throw PushTransportError(.configuration, "PUSHQ_CA_FILE \(extraFile) holds a certificate OpenSSL cannot read: \(problem)")
        }
        if libcurl.defaultCAPath != nil { return extra }
        var bundle: [UInt8] = []
        if let system = libcurl.defaultCAInfo, let roots = try? readWholeFile(system) {
            bundle = roots
            bundle.append(UInt8(ascii: "\n"))
        }
        return bundle + extra
    }
}

/// A TLS client certificate a sender's streams present (APNs certificate authentication):
/// what libcurl needs to load it, which it does itself for each new connection.
struct CurlClientCertificate: Sendable {
    /// The certificate file (`CURLOPT_SSLCERT`).
    var file: String
    /// `P12` or `PEM` (`CURLOPT_SSLCERTTYPE`).
    var type: String
    /// The PEM key's file (`CURLOPT_SSLKEY`), nil for PKCS#12 (the key is inside).
    var keyFile: String?
    /// The password of the PKCS#12 file or of the PEM key (`CURLOPT_KEYPASSWD`). Secret: never logged.
    var password: String?

    /// Sets these options on `easy`.
    func apply(to easy: CurlEasy) throws {
        try easy.set(CURLOPT_SSLCERT, string: file, "CURLOPT_SSLCERT for \(file)")
        try easy.set(CURLOPT_SSLCERTTYPE, string: type, "CURLOPT_SSLCERTTYPE")
        if let keyFile {
            try easy.set(CURLOPT_SSLKEY, string: keyFile, "CURLOPT_SSLKEY")
            try easy.set(CURLOPT_SSLKEYTYPE, string: "PEM", "CURLOPT_SSLKEYTYPE")
        }
        if let password { try easy.set(CURLOPT_KEYPASSWD, string: password, "CURLOPT_KEYPASSWD") }
    }
}
