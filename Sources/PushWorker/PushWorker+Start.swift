import Foundation
import Logging
import PushCore
import PushStore
import PGClient

extension PushWorker {
    /// Loads and checks every configured credential before anything starts: a token key signs
    /// a token, a certificate opens with its password. An expired certificate is logged here
    /// and pauses its credential at its first connection.
    ///
    /// - Throws: ``WorkerError`` `.configuration` naming the credential and the problem.
    func checkCredentials() throws {
        for (key, credential) in configuration.credentials.sorted(by: { $0.key < $1.key }) {
            let name = key.name
            do {
                switch credential {
                case .apns(.token(let manager)):
                    _ = try manager.newest()
                case .fcm(let account):
                    // Signs one OAuth assertion: a key OpenSSL cannot use stops the worker now, naming the file.
                    _ = try account.assertion(now: Int64(Date().timeIntervalSince1970))
                case .webpush(let credential):
                    // Signs one VAPID token: a key OpenSSL cannot sign with stops the worker now.
                    _ = try credential.key.token(VAPIDClaims(audience: Self.vapidCheckOrigin, subject: credential.subject,
                                                             issuedAt: Int64(Date().timeIntervalSince1970)))
                case .apns(.certificate(let certificate)):
                    if let notAfter = try certificate.validate(), notAfter <= Int64(Date().timeIntervalSince1970) {
                        logger.error("the client certificate of credential \(name) has expired: its notifications wait (credential paused at its first connection) until it is renewed",
                                     metadata: [LogKey.provider: "apns", LogKey.credential: "\(name)", "certificate.file": "\(certificate.file)",
                                                "certificate.not_after": "\(Date(timeIntervalSince1970: TimeInterval(notAfter)))"])
                    }
                }
            } catch {
                throw WorkerError(.configuration, key.provider == .apns ? "credential \(name): \(error)" : "\(key.provider.serviceName) credential \(name): \(error)")
            }
        }
    }

    /// The audience of the VAPID token ``checkCredentials()`` signs (never sent).
    static let vapidCheckOrigin: WebPushOrigin = {
        guard case .success(let origin) = WebPushOrigin.parse("https://push.example.com") else { preconditionFailure("a valid origin") }
        return origin
    }()

    /// Refuses to run through a pooler that does not keep a session per client
    /// (``PGConnection/checkSessionsKept(_:_:)``); a check that fails otherwise is left to the
    /// loops, which retry their statements.
    ///
    /// - Throws: ``WorkerError`` `.configuration` with the problem and the fix, the connections closed.
    func requireSessions(_ claimConnection: PGConnection, _ completeConnection: PGConnection) async throws {
        do {
            try await PGConnection.checkSessionsKept(claimConnection, completeConnection)
        } catch where error.code == .sessionNotKept {
            await claimConnection.close()
            await completeConnection.close()
            throw WorkerError(.configuration, error.message)
        } catch {
            logger.warning("could not check that the worker's connections keep their sessions", metadata: ["error": "\(error)"])
        }
    }

    /// Connects to PostgreSQL, retrying with backoff until it works or a stop is requested.
    func connect(purpose: String) async -> PGConnection? {
        var delay = 0.2
        var warned = false
        while !stopRequested {
            do {
                return try await PGConnection.connect(configuration.databaseURL, logger: logger,
                                                      statementTimeout: .milliseconds(Int(configuration.statementTimeoutSeconds * 1000)),
                                                      statementDeadline: .milliseconds(Int(configuration.statementDeadlineSeconds * 1000)))
            } catch {
                if !warned {
                    logger.error("cannot connect to PostgreSQL; retrying with backoff", metadata: ["pg.purpose": "\(purpose)", "error": "\(error)"])
                    warned = true
                }
                await workWake.wait(timeout: .milliseconds(Int(delay * 1000)))
                delay = min(delay * 2, 5)
            }
        }
        return nil
    }
}
