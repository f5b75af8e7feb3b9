import PushTransport

extension Settings {
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
