import Foundation
import Logging
import PushCore

/// The authorization of one APNs connection: a provider token pinned for the connection and
/// switched when it ages (``ProviderTokenManager``), or a TLS client certificate checked for
/// expiry before each new connection.
struct APNsAuthorizer: PushAuthorizer {
    let credential: APNsCredential
    let certificateNotAfter: Int64?
    let layout: StreamLayout
    let logger: Logger
    /// The provider token this connection carries.
    private var token: ProviderTokenManager.Token?

    init(credential: APNsCredential, certificateNotAfter: Int64?, layout: StreamLayout, logger: Logger) {
        self.credential = credential
        self.certificateNotAfter = certificateNotAfter
        self.layout = layout
        self.logger = logger
    }

    mutating func authorize(newConnection: Bool) -> Authorization {
        switch credential {
        case .certificate(let certificate):
            // Checked before each new connection: an expired certificate pauses the credential
            // with a message saying so, instead of failing TLS handshakes.
            guard newConnection, let certificateNotAfter,
                  let failure = APNsClientCertificate.expiredFailure(file: certificate.file, notAfter: certificateNotAfter, now: Int64(time(nil)))
            else { return .certificate }
            logger.error("cannot use the APNs client certificate", metadata: ["error": "\(failure.message)"])
            return .refused(.failure(failure))
        case .token(let manager):
            do {
                let next: ProviderTokenManager.Token
                if let held = token, !newConnection {
                    next = try manager.refresh(held)
                    if next != held { logger.info("switching provider token", metadata: [LogKey.tokenAge: "\(manager.now() - held.issuedAt)s"]) }
                } else {
                    next = try manager.newest()
                }
                token = next
                guard layout.fits(next.value) else {
                    return .refused(.failure(TransportFailure(kind: .signingFailed, message: "the provider token does not fit its authorization header")))
                }
                return .bearer(BearerToken(value: next.value, serial: next.serial, issuedAt: next.issuedAt))
            } catch {
                // The credential's problem, not the notifications': `signingFailed` pauses it.
                logger.error("cannot sign a provider token", metadata: ["error": "\(error)"])
                return .refused(.failure(TransportFailure(kind: .signingFailed, message: "cannot sign a provider token: \(error)")))
            }
        }
    }

    /// Records the token's age at the answer (``PushResponse/token``); never resends.
    mutating func answered(_ response: inout PushResponse, tokenSerial: Int, tokenIssuedAt: Int64) -> Bool {
        if tokenSerial != 0, case .token(let manager) = credential {
            response.token = TokenUse(serial: tokenSerial, ageSeconds: manager.now() - tokenIssuedAt)
        }
        return false
    }

    /// After `ExpiredProviderToken`: mints once, however many streams failed with the same token.
    func renew(afterSerial serial: Int) {
        guard case .token(let manager) = credential else { return }
        do {
            _ = try manager.renew(afterSerial: serial)
        } catch {
            logger.error("cannot renew the provider token", metadata: ["error": "\(error)"])
        }
    }
}
