extension Settings {
    /// `--database-url`, else `PUSHQ_DATABASE_URL`: every command needs one.
    ///
    /// - Throws: ``SettingError`` when neither is given.
    func databaseURL() throws -> String {
        guard let url = try text(.databaseURL) else {
            throw SettingError(setting: "PUSHQ_DATABASE_URL (or --database-url)", value: nil,
                               expected: "a libpq connection URI or conninfo string, e.g. postgresql://user@127.0.0.1:5432/pushq")
        }
        return url
    }
}
