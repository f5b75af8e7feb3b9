import PushServe

extension Settings {
    /// Everything `pushq serve` runs with: the database, the listener, TLS, the pool.
    ///
    /// - Throws: ``SettingError`` naming the flag or variable whose value is not allowed, or the
    ///   one of the certificate and key given without the other.
    func serveConfiguration() throws -> ServeConfiguration {
        var c = ServeConfiguration(databaseURL: try databaseURL())
        if case .address(let address)? = try value(.httpAddr) {
            c.host = address.host
            c.port = address.port
        }
        switch (try text(.httpTLSCert), try text(.httpTLSKey)) {
        case let (cert?, key?):
            c.tls = (cert, key)
        case (nil, nil):
            break
        case (nil, _):
            throw SettingError(setting: SettingKey.httpTLSCert.variable, value: nil, expected: "the certificate of \(SettingKey.httpTLSKey.variable), in PEM")
        case (_, nil):
            throw SettingError(setting: SettingKey.httpTLSKey.variable, value: nil, expected: "the private key of \(SettingKey.httpTLSCert.variable), in PEM")
        }
        c.proxyTerminatesTLS = try text(.tlsTerminatedByProxy) == "true"
        if let n = try wholeNumber(.serveConnections) { c.databaseConnections = n }
        return c
    }
}
