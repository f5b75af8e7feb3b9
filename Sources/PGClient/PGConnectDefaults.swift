import CLibPQ

/// The libpq options that bound how long connecting, and a peer that vanished, can hold a
/// connection. Each applies unless the connection string or libpq's environment variable
/// for it (`PGCONNECT_TIMEOUT`) sets it.
///
/// - `connect_timeout=10`: connecting to one address (TCP, TLS and authentication) gives
///   up after 10 s; it also bounds each reconnect (`PQreset`). libpq counts whole seconds,
///   so the wait can run up to a second longer, and it is per address (a host name that
///   resolves to two addresses may take twice as long). Name resolution is not covered.
/// - `keepalives=1`, `keepalives_idle=30`, `keepalives_interval=10`, `keepalives_count=3`:
///   the kernel closes an idle connection whose peer stopped answering after about
///   30 + 3 × 10 = 60 s, so a listener waiting for notifications learns of it.
/// - `tcp_user_timeout=30000`: the kernel closes a connection whose sent data stays
///   unacknowledged for 30 s (milliseconds, Linux only).
/// - `target_session_attrs=read-write`: of the URL's hosts (`host=a,b`), libpq takes the
///   first that accepts writes, connecting and reconnecting alike, so a worker never sticks
///   to a standby (which answers every write with SQLSTATE 25006). `any` in the URL (or
///   `PGTARGETSESSIONATTRS`) restores libpq's default.
///
/// The kernel's timers cannot see a peer that still acknowledges packets but never answers
/// (a stuck server, a proxy that stopped forwarding): `PGConnection.statementDeadline`
/// covers that case.
package enum PGConnectDefaults {
    package static let options: [(keyword: String, value: String)] = [
        ("connect_timeout", "10"),
        ("keepalives", "1"),
        ("keepalives_idle", "30"),
        ("keepalives_interval", "10"),
        ("keepalives_count", "3"),
        ("tcp_user_timeout", "30000"),
        ("target_session_attrs", "read-write"),
    ]

    /// The keywords and values for `PQconnectdbParams` with `expand_dbname` set: the
    /// defaults not set by `environment`, then `dbname` = `url`.
    ///
    /// libpq expands a `dbname` that is a URI or `key=value` string into its settings, and
    /// a setting that appears later overrides one that appears earlier, so a value in the
    /// URL wins over the default placed before it. An environment variable, though, only
    /// fills what no entry sets, so a default whose variable is set is left out.
    package static func parameters(url: String, environment: [String: String]) -> [(keyword: String, value: String)] {
        var out = options.filter { option in
            guard let variable = environmentVariables[option.keyword] else { return true }
            return environment[variable] == nil
        }
        out.append(("dbname", url))
        return out
    }

    /// libpq's environment variable for each option that has one (`connect_timeout`:
    /// `PGCONNECT_TIMEOUT`), as `PQconndefaults` reports them.
    package static let environmentVariables: [String: String] = {
        // Out of memory: the one variable among the options above, as libpq documents it.
        guard let defaults = PQconndefaults() else { return ["connect_timeout": "PGCONNECT_TIMEOUT"] }
        defer { PQconninfoFree(defaults) }
        var variables: [String: String] = [:]
        var option = defaults
        while let keyword = option.pointee.keyword {
            if let variable = option.pointee.envvar {
                variables[String(cString: keyword)] = String(cString: variable)
            }
            option += 1
        }
        return variables
    }()
}
