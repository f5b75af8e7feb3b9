import PushTransport
import PushCore

extension Settings {
    /// How the senders connect (APNs and FCM alike): the default environment, the base URL and
    /// extra CA, connections, streams and timeouts. FCM's base URL and streams are the worker's
    /// (``workerConfiguration(defaultWorkerID:)``).
    ///
    /// - Throws: ``SettingError`` naming the flag or variable whose value is not allowed.
    func senderConfiguration() throws -> PushSenderConfiguration {
        var c = PushSenderConfiguration()
        if let text = try text(.apnsEnvironment), let environment = APNsEnvironment(rawValue: text) { c.environment = environment }
        c.baseURL = try text(.apnsURL)
        c.extraCAFile = try text(.caFile)
        if let n = try wholeNumber(.connections) { c.connections = n }
        if let n = try wholeNumber(.apnsStreams) {
            c.streamsPerConnection = n
            c.maxConcurrentStreams = max(c.maxConcurrentStreams, n)
        }
        if let s = try seconds(.requestTimeout) { c.requestTimeout = s }
        if let s = try seconds(.connectTimeout) { c.connectTimeout = s }
        return c
    }
}
