import Logging
import PushCore
import PushStore
import PushTransport
import PGClient

extension ChannelLoop {
    /// The nightly reconciliation, run by the channel loop: for each (credential, environment,
    /// bundle id) of `pushq.channels` that this worker serves and nobody checked in the last
    /// ``WorkerConfiguration/channelReconcileSeconds`` (one worker of the fleet takes it), lists
    /// the app's channels at Apple (`all-channels`) and records those that no live row has, in
    /// `pushq.channel_reconciliations` (`pushq status`, `pushq_channels_unknown_at_apple`), with
    /// a warning. Nothing is deleted: a channel pushq does not know may be another system's.
    mutating func reconcile(_ connection: PGConnection) async throws {
        let scopes = try await connection.channelScopes(credentials: configuration.credentialNames(.apns),
                                                        defaultEnvironment: configuration.apns.environment)
        for scope in scopes where !stopRequested {
            guard let bundleID = scope.topic ?? configuration.defaultTopic(credential: scope.credential) else { continue }
            guard try await connection.takeReconciliation(credential: scope.credential, environment: scope.environment, topic: bundleID,
                                                          workerID: configuration.workerID,
                                                          everySeconds: configuration.channelReconcileSeconds) else { continue }
            let endpoint = Endpoint(credential: scope.credential, environment: scope.environment)
            var metadata: Logger.Metadata = [LogKey.credential: "\(scope.credential)", LogKey.environment: "\(scope.environment.rawValue)",
                                             "channel.bundle_id": "\(bundleID)"]
            let listed: [String]?
            let reason: String?
            do {
                let client = try channelClient(endpoint, bundleID: bundleID)
                let response = await client.send(.listAll)
                metrics.channelRequest(operation: ChannelOperation.listAll.name, result: Self.resultLabel(response.outcome))
                listed = response.outcome == .done ? response.answer?.channels : nil
                reason = response.outcome == .done ? nil : response.outcome.reasonText
            } catch {
                (listed, reason) = (nil, "ChannelClientUnavailable")
                metadata["error"] = "\(error)"
            }
            let unknown = try await connection.recordReconciliation(credential: scope.credential, environment: scope.environment,
                                                                    topic: bundleID, listed: listed, reason: reason)
            if let listed {
                metadata["channels.listed"] = "\(listed.count)"
                metadata["channels.unknown"] = "\(unknown.count)"
                if unknown.isEmpty {
                    logger.info("reconciled broadcast channels with Apple: none unknown", metadata: metadata)
                } else {
                    metadata["channels.unknown_ids"] = "\(unknown.prefix(20).joined(separator: ","))"
                    logger.warning("Apple has broadcast channels that pushq.channels does not: delete them at Apple, or insert rows for them (pushq status lists them)",
                                   metadata: metadata)
                }
            } else {
                metadata[LogKey.reason] = "\(reason ?? "")"
                logger.warning("could not list the broadcast channels at Apple; tried again at the next reconciliation", metadata: metadata)
            }
        }
    }
}
