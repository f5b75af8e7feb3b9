import PushCore
import Testing

@Suite struct WorkerHealthTests {
    static func health(ages: [WorkerHealth.Loop: Double] = [.claim: 1, .complete: 1, .upkeep: 3], running: Double = 100,
                       database: Bool = true, draining: Bool = false,
                       credentials: Set<String> = ["default", "b"], paused: Set<String> = [],
                       refusals: [WorkerHealth.Loop: String] = [:]) -> WorkerHealth {
        WorkerHealth(loopAges: ages, runningSeconds: running, databaseConnected: database, draining: draining,
                     credentials: credentials, pausedCredentials: paused, staleAfterSeconds: 60, refusals: refusals)
    }

    /// (name, health, live, ready)
    static let table: [(String, WorkerHealth, Bool, Bool)] = [
        ("all loops recent", health(), true, true),
        ("claim loop stuck", health(ages: [.claim: 61, .complete: 1, .upkeep: 1]), false, false),
        ("complete loop stuck", health(ages: [.claim: 1, .complete: 600, .upkeep: 1]), false, false),
        ("upkeep stuck", health(ages: [.claim: 1, .complete: 1, .upkeep: 90]), false, false),
        ("a loop at the limit is still live", health(ages: [.claim: 60, .complete: 60, .upkeep: 60]), true, true),
        ("just started, no tick yet", health(ages: [:], running: 2), true, true),
        ("never ticked for longer than the limit", health(ages: [.claim: 1, .complete: 1], running: 61), false, false),
        ("database down: live, not ready", health(database: false), true, false),
        ("draining: live, not ready", health(draining: true), true, false),
        ("one credential of two paused", health(paused: ["b"]), true, true),
        ("every credential paused", health(paused: ["b", "default"]), true, false),
        ("a paused credential the worker lacks", health(credentials: ["default"], paused: ["other"]), true, true),
        ("a loop refused by PostgreSQL (42501) though ticking: not live", health(refusals: [.complete: "SQLSTATE 42501"]), false, false),
    ]

    @Test("live while every loop ticks; ready when also connected, not draining, one credential usable",
          arguments: table.indices)
    func rows(index: Int) {
        let (name, h, live, ready) = Self.table[index]
        #expect(h.livenessProblems.isEmpty == live, "\(name)")
        #expect(h.readinessProblems.isEmpty == ready, "\(name)")
    }

    @Test("a refusal names its loop and the problem")
    func refusalMessage() {
        let h = Self.health(refusals: [.complete: "recording answers fails with SQLSTATE 42501"])
        #expect(h.livenessProblems == ["the complete loop is refused by PostgreSQL: recording answers fails with SQLSTATE 42501"])
    }

    @Test("problems name the stuck loop and the paused credentials")
    func messages() {
        let h = Self.health(ages: [.claim: 1, .complete: 99, .upkeep: 1], draining: true, paused: ["b", "default"])
        #expect(h.stuckLoops == [.complete])
        #expect(h.readinessProblems == [
            "the complete loop has not run for more than 60 s",
            "the worker is draining (stop requested)",
            "every credential is paused: b, default",
        ])
    }

    @Test("retry labels name the kind of retry")
    func retryLabels() {
        #expect(Outcome.retry(.outcomeUnknown(.timeout)).retryLabel == "transport")
        #expect(Outcome.retry(.serverError(nil)).retryLabel == "server_error")
        #expect(Outcome.retry(.tooManyRequests).retryLabel == "too_many_requests")
        #expect(Outcome.retry(.idleTimeout).retryLabel == "idle_timeout")
        #expect(Outcome.retry(.unknownReason("X")).retryLabel == "unknown_reason")
        #expect(Outcome.retryNow(.renewProviderToken).retryLabel == "connection")
        #expect(Outcome.pauseCredential("InvalidProviderToken").retryLabel == "held")
        #expect(Outcome.fcm(.backOffCredential(seconds: 60)).retryLabel == "quota")
        #expect(Outcome.fcm(.throttleToken(seconds: 60)).retryLabel == "too_many_requests")
        #expect(Outcome.fcm(.refreshAccessToken).retryLabel == "connection")
    }

    @Test("every retry label is one of retryLabels, the kinds the worker makes counters for")
    func retryLabelsAreClosed() {
        let outcomes: [Outcome] = [
            .retry(.outcomeUnknown(.timeout)), .retry(.serverError(nil)), .retry(.tooManyRequests), .retry(.idleTimeout),
            .retry(.unknownReason("X")), .retryNow(.renewProviderToken), .pauseCredential("X"), .sent,
            .fcm(.backOffCredential(seconds: 1)), .fcm(.throttleToken(seconds: 1)), .fcm(.refreshAccessToken),
            .fcm(.retry(.serverError(.internalError), retryAfter: nil)), .fcm(.retry(.unknown("X"), retryAfter: nil)),
        ]
        let labels = Set(outcomes.map(\.retryLabel))
        #expect(labels == Set(Outcome.retryLabels))
    }
}
