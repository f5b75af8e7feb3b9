import PushTransport
import PushCore

extension Settings {
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
}
