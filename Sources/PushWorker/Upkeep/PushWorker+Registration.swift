import Foundation
import Logging
import PushCore
import PushStore
import PGClient

extension PushWorker {
    /// What this worker serves, as registered in `pushq.workers`.
    var servedCredentials: [ServedCredential] {
        configuration.credentials.keys.sorted().map { key in
            switch key.provider {
            case .apns:
                return ServedCredential(name: key.name, environment: configuration.apns.environment.rawValue,
                                        topic: configuration.credentialTopics[key.name] ?? configuration.defaultTopic)
            case .fcm:
                return ServedCredential(name: key.name, environment: Endpoint.fcmChannel, topic: nil, provider: .fcm)
            case .webpush:
                return ServedCredential(name: key.name, environment: Endpoint.webPushChannel, topic: nil, provider: .webpush)
            }
        }
    }

    /// Registers this worker in `pushq.workers` (best effort: a failure is retried by the
    /// heartbeat, ``Upkeep``): at start-up, and when the heartbeat finds its row gone.
    func register(_ connection: PGConnection) async {
        do {
            try await connection.registerWorker(id: configuration.workerID, host: Self.hostName, pid: Int(getpid()),
                                                version: PushqVersion.current, credentials: servedCredentials)
        } catch {
            logger.warning("cannot register in pushq.workers; retried with the heartbeat", metadata: ["error": "\(error)"])
        }
    }

    /// Removes this worker from `pushq.workers` at a clean stop (best effort; skipped when the
    /// database has been failing all through the shutdown: the row ages out of the live list).
    func unregister(_ connection: PGConnection) async {
        guard !databaseGivenUp, !stoppingFor(moreThan: configuration.shutdownRetrySeconds) else { return }
        do { try await connection.unregisterWorker(id: configuration.workerID) } catch {
            logger.debug("cannot unregister from pushq.workers", metadata: ["error": "\(error)"])
        }
    }

    /// This host's name, as registered.
    static let hostName: String = {
        var name = [CChar](repeating: 0, count: 256)
        gethostname(&name, name.count)
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()
}
