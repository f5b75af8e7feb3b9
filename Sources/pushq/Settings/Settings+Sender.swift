import PushTransport

extension Settings {
    /// How the senders of every provider connect: the extra CA, connections and timeouts
    /// (each provider's own settings: ``apnsConfiguration()``, ``fcmConfiguration()``).
    ///
    /// - Throws: ``SettingError`` naming the flag or variable whose value is not allowed.
    func senderConfiguration() throws -> PushSenderConfiguration {
        var c = PushSenderConfiguration()
        c.extraCAFile = try text(.caFile)
        if let n = try wholeNumber(.connections) { c.connections = n }
        // libcurl's stream limit is at least APNs' window, which may exceed its default.
        if let n = try wholeNumber(.apnsStreams) { c.maxConcurrentStreams = max(c.maxConcurrentStreams, n) }
        if let s = try seconds(.requestTimeout) { c.requestTimeout = s }
        if let s = try seconds(.connectTimeout) { c.connectTimeout = s }
        return c
    }
}
