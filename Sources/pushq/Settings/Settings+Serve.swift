import PushCore
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
        if let given = given(.httpTrustedProxies) {
            do {
                c.trustedProxies = try TrustedProxies(parsing: given.text)
            } catch {
                throw SettingError(setting: given.name, value: given.text, expected: "comma-separated networks such as 10.0.0.0/8, fd00::/8; the entry \(error)")
            }
        }
        if let n = try wholeNumber(.serveConnections) { c.databaseConnections = n }
        if let n = try wholeNumber(.serveDashboardConnections) { c.dashboardConnections = n }
        if let s = try seconds(.serveDatabaseWait) { c.databaseWait = .milliseconds(Int64((s * 1000).rounded())) }
        if let n = try wholeNumber(.serveDatabaseQueue) { c.databaseQueue = n }
        if let s = try seconds(.dashboardQueryTimeout) { c.dashboardQueryTimeout = .milliseconds(Int64((s * 1000).rounded())) }
        if let s = try seconds(.httpIdleTimeout) { c.idleTimeout = .milliseconds(Int64((s * 1000).rounded())) }
        if let s = try seconds(.httpHeaderTimeout) { c.headerTimeout = .milliseconds(Int64((s * 1000).rounded())) }
        if let n = try wholeNumber(.httpMaxConnections) { c.maxConnections = n }
        return c
    }
}
