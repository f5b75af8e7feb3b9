import PushCore
import PushStore
import PushTestSupport
import PushTransport
@testable import PushWorker
import Testing

/// The worker's credentials are one map keyed by provider and name: its endpoints, what it
/// serves and what its claims route, for every provider alike.
@Suite("Worker credentials by provider")
struct WorkerCredentialsTests {
    /// An APNs credential that is never loaded (a certificate file is read only at start).
    static let apns = Credential.apns(.certificate(APNsClientCertificate(file: "/nonexistent/c.pem", format: .pem(keyFile: nil), password: nil)))

    /// The fixtures' FCM service account (its key is read when it is parsed).
    static func fcm() throws -> Credential {
        let json = try MockTestFixtures.fcmServiceAccountJSON(privateKeyPath: Fixtures.directory + "/fcm-key.pem", tokenURI: "https://127.0.0.1:1/token")
        return .fcm(try FCMServiceAccount(json: Array(json.utf8), file: "sa.json"))
    }

    static func configuration(_ credentials: [CredentialKey: Credential]) -> WorkerConfiguration {
        WorkerConfiguration(databaseURL: "", workerID: "w", credentials: credentials, defaultTopic: nil)
    }

    @Test("one name under two providers is two credentials: endpoints, serves and claim routing per provider")
    func keyedByProvider() throws {
        let c = Self.configuration([CredentialKey(.apns, "default"): Self.apns, CredentialKey(.fcm, "default"): try Self.fcm(),
                                    CredentialKey(.fcm, "android"): try Self.fcm()])
        #expect(c.endpoints == [Endpoint(credential: "default", environment: .production), Endpoint(credential: "default", environment: .development),
                                .fcm("android"), .fcm("default")])
        #expect(c.serves(.fcm("android")) && !c.serves(Endpoint(credential: "android", environment: .production)))
        #expect(c.credentialNames(.apns) == ["default"] && c.credentialNames(.fcm) == ["android", "default"])
        #expect(c.credentials.namesByProvider == [.apns: ["default"], .fcm: ["android", "default"]])
        #expect(c.apnsCredential("default") != nil && c.apnsCredential("android") == nil && c.fcmAccount("android") != nil)
        #expect(throws: Never.self) { try c.validate() }
    }

    @Test("the claim turn: uncapped credentials of every provider in one claim, each capped one alone with its budget")
    func claimScopes() throws {
        var c = Self.configuration([CredentialKey(.apns, "default"): Self.apns, CredentialKey(.apns, "b"): Self.apns,
                                    CredentialKey(.fcm, "default"): try Self.fcm(), CredentialKey(.fcm, "f"): try Self.fcm()])
        let capB = RateBudget(provider: .apns, credential: "b", perSecond: 5), capF = RateBudget(provider: .fcm, credential: "f", perSecond: 9)
        // A cap of a credential this worker lacks is not claimed.
        c.credentialCaps = [capB, capF, RateBudget(provider: .fcm, credential: "b", perSecond: 1)]
        let scopes = PushWorker.ClaimTurn(c, random: SystemRandomNumberGenerator()).scopes()
        #expect(scopes.map(\.credentials) == [[.apns: ["default"], .fcm: ["default"]], [.apns: ["b"]], [.fcm: ["f"]]])
        #expect(scopes.map(\.budget) == [nil, capB, capF])
    }

    @Test("a credential keyed under another provider, or none at all, is a configuration error naming it")
    func mismatch() throws {
        let wrong = Self.configuration([CredentialKey(.apns, "x"): try Self.fcm()])
        let error = #expect(throws: WorkerError.self) { try wrong.validate() }
        #expect(error?.description == "credential apns:x is a credential of FCM, not of APNs")
        #expect(throws: WorkerError.self) { try Self.configuration([:]).validate() }
    }
}
