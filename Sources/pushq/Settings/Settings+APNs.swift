import PushTransport
import PushCore

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

    /// APNs' own settings: the default environment, the base URL and the streams per connection.
    ///
    /// - Throws: ``SettingError`` naming the flag or variable whose value is not allowed.
    func apnsConfiguration() throws -> APNsConfiguration {
        var c = APNsConfiguration()
        if let text = try text(.apnsEnvironment), let environment = APNsEnvironment(rawValue: text) { c.environment = environment }
        c.baseURL = try text(.apnsURL)
        if let n = try wholeNumber(.apnsStreams) { c.streamsPerConnection = n }
        return c
    }

    /// FCM's own settings: the base URL and the streams per connection.
    ///
    /// - Throws: ``SettingError`` naming the flag or variable whose value is not allowed.
    func fcmConfiguration() throws -> FCMConfiguration {
        var c = FCMConfiguration()
        c.baseURL = try text(.fcmURL)
        if let n = try wholeNumber(.fcmStreams) { c.streamsPerConnection = n }
        return c
    }
}
