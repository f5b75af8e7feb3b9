import PushCore
import Testing

/// APNs sends the wrong-environment key refusal in two spellings; both are the same refusal.
@Suite struct ReasonSpellingTests {
    @Test("BadEnvironmentKeyInToken pauses the credential as BadEnvironmentKeyIdInToken does, for pushes and channel management")
    func badEnvironmentKeyInTokenPauses() {
        let reason = APNsReason("BadEnvironmentKeyInToken")
        #expect(reason.rawValue == "BadEnvironmentKeyInToken")
        #expect(Outcome.classify(status: 403, reason: reason) == .pauseCredential("BadEnvironmentKeyInToken"))
        #expect(ChannelOutcome.classify(ChannelAnswer(status: 403, reason: reason), operation: .listAll)
                == .hold(.credential, reason: "BadEnvironmentKeyInToken"))
    }
}
