import CLibPQ

extension PGConnection {
    /// Most statement texts one session prepares; others run unprepared.
    static let preparedLimit = 32

    /// Runs `sql` as a statement this session prepared the first time it ran it (libpq's
    /// `PQsendPrepare`, then `PQsendQueryPrepared`): PostgreSQL parses it once per session, and
    /// plans it once when its generic plan costs no more than the custom ones
    /// (`plan_cache_mode = auto`, after five custom plans). For statements run over and over
    /// with the same text: the claim (docs/performance.md, "The claim, prepared").
    ///
    /// A session that lost its statements (a pooler's `DISCARD ALL`: SQLSTATE 26000) forgets
    /// them; the call fails like any statement and the next one prepares again. A reconnect
    /// starts with none (``prepareSession()``).
    package func preparedQuery(_ sql: String, _ parameters: [(any PGParameter)?]) throws(PGError) -> PGResult {
        let texts = try Self.texts(parameters)
        guard let name = try statementName(sql, count: texts.count) else { return try query(sql, parameters) }
        do {
            return try run { conn in
                Self.withCStrings(texts) { pointers in
                    PQsendQueryPrepared(conn, name, Int32(pointers.count), pointers.baseAddress, nil, nil, 0)
                }
            }
        } catch {
            if error.sqlState == "26000" { prepared.removeAll() }
            throw error
        }
    }

    /// The name `sql` is prepared under in this session, prepared now if it was not; nil when
    /// the session holds ``preparedLimit`` statements already.
    private func statementName(_ sql: String, count: Int) throws(PGError) -> String? {
        if let name = prepared[sql] { return name }
        guard prepared.count < Self.preparedLimit else { return nil }
        preparedSerial += 1
        let name = "pushq_\(preparedSerial)"
        _ = try run { conn in PQsendPrepare(conn, name, sql, Int32(count), nil) }
        prepared[sql] = name
        return name
    }
}
