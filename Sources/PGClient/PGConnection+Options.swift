import CLibPQ

extension PGConnection {
    /// The libpq options of the current session as libpq holds them (`PQconninfo`): what
    /// the URL, the environment and `PGConnectDefaults` set. Passwords are left out.
    package var connectionOptions: [String: String] {
        guard let conn, let info = PQconninfo(conn) else { return [:] }
        defer { PQconninfoFree(info) }
        var options: [String: String] = [:]
        var option = info
        while let keyword = option.pointee.keyword {
            let name = String(cString: keyword)
            if let value = option.pointee.val, !name.contains("password") {
                options[name] = String(cString: value)
            }
            option += 1
        }
        return options
    }

    /// The session's socket descriptor (`PQsocket`), -1 when there is none. For tests
    /// that read the kernel's socket options; the descriptor stays libpq's.
    package var socketDescriptor: Int32 { conn.map { PQsocket($0) } ?? -1 }
}
