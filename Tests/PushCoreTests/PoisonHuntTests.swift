import PushCore
import Testing

@Suite struct PoisonHuntTests {
    enum Event: Hashable {
        case claimed(Int)
        case failed(StatementFailure)
        case found([Int64])
        case isolated
    }

    /// A hunt started after a failed claim of `failedLimit` rows: its first step, then each event and the step it leads to.
    struct Script: Sendable, CustomTestStringConvertible {
        var label: String
        var failedLimit: Int
        var first: PoisonHunt.Step
        var events: [(Event, PoisonHunt.Step)]
        var maximumSuspects = 8
        var maximumSteps = 256
        var testDescription: String { label }
    }

    static let error = "PostgreSQL server: cannot convert infinity to bigint (SQLSTATE 22003)"

    static let scripts: [Script] = [
        Script(label: "the head row breaks a claim of 16: halved to 1, claimed alone, shown that another row goes, ended",
               failedLimit: 16, first: .claim(limit: 8), events: [
                   (.failed(.deterministic), .claim(limit: 4)),
                   (.failed(.deterministic), .claim(limit: 2)),
                   (.failed(.deterministic), .claim(limit: 1)),
                   (.failed(.deterministic), .findHeads(excluding: [])),
                   (.found([42]), .claimRow(42)),
                   (.failed(.deterministic), .claimOther(excluding: [42])),
                   (.claimed(1), .claimRow(42)),
                   (.failed(.deterministic), .isolate([PoisonHunt.Suspect(id: 42, error: error)])),
                   (.isolated, .done),
               ]),
        Script(label: "a claim that returned rows on the way shows the claim works, even with no other row due at the end",
               failedLimit: 4, first: .claim(limit: 2), events: [
                   (.claimed(2), .claim(limit: 4)),
                   (.failed(.deterministic), .claim(limit: 2)),
                   (.failed(.deterministic), .claim(limit: 1)),
                   (.failed(.deterministic), .findHeads(excluding: [])),
                   (.found([7]), .claimRow(7)),
                   (.failed(.deterministic), .claimOther(excluding: [7])),
                   (.claimed(0), .isolate([PoisonHunt.Suspect(id: 7, error: error)])),
                   (.isolated, .done),
               ]),
        Script(label: "claims that work double back up to the failed limit; one that works there ends the hunt",
               failedLimit: 500, first: .claim(limit: 250), events: [
                   (.failed(.deterministic), .claim(limit: 125)),
                   (.claimed(125), .claim(limit: 250)),
                   (.claimed(250), .claim(limit: 500)),
                   (.claimed(500), .done),
               ]),
        Script(label: "a failed claim of one row starts with the heads; odd limits halve down",
               failedLimit: 3, first: .claim(limit: 1), events: [
                   (.failed(.deterministic), .findHeads(excluding: [])),
               ]),
        Script(label: "a failed claim of one: the due head goes out alone, the lapsed head fails alone and is ended",
               failedLimit: 1, first: .findHeads(excluding: []), events: [
                   (.found([10, 20]), .claimRow(10)),
                   (.claimed(1), .claimRow(20)),
                   (.failed(.deterministic), .claimOther(excluding: [20])),
                   (.claimed(0), .isolate([PoisonHunt.Suspect(id: 20, error: error)])),
                   (.isolated, .done),
               ]),
        Script(label: "nothing due any more: the row is gone, the hunt is over",
               failedLimit: 1, first: .findHeads(excluding: []), events: [
                   (.found([]), .done),
               ]),
        Script(label: "each head goes out alone: whatever failed is gone, nothing ended",
               failedLimit: 1, first: .findHeads(excluding: []), events: [
                   (.found([3, 3]), .claimRow(3)),
                   (.claimed(0), .done),
               ]),
        Script(label: "three bad rows in a row: each claim of another row fails on the next one, then one goes and all three are ended",
               failedLimit: 1, first: .findHeads(excluding: []), events: [
                   (.found([1]), .claimRow(1)),
                   (.failed(.deterministic), .claimOther(excluding: [1])),
                   (.failed(.deterministic), .findHeads(excluding: [1])),
                   (.found([1, 2]), .claimRow(2)),
                   (.failed(.deterministic), .claimOther(excluding: [1, 2])),
                   (.failed(.deterministic), .findHeads(excluding: [1, 2])),
                   (.found([3]), .claimRow(3)),
                   (.failed(.deterministic), .claimOther(excluding: [1, 2, 3])),
                   (.claimed(1), .claimRow(1)),
                   (.failed(.deterministic), .claimRow(2)),
                   (.failed(.deterministic), .claimRow(3)),
                   (.failed(.deterministic), .isolate([1, 2, 3].map { PoisonHunt.Suspect(id: $0, error: error) })),
                   (.isolated, .done),
               ]),
        Script(label: "a claim mended in the middle of a hunt: the suspects go out when claimed alone again, nothing ended",
               failedLimit: 1, first: .findHeads(excluding: []), events: [
                   (.found([1]), .claimRow(1)),
                   (.failed(.deterministic), .claimOther(excluding: [1])),
                   (.failed(.deterministic), .findHeads(excluding: [1])),
                   (.found([2]), .claimRow(2)),
                   (.failed(.deterministic), .claimOther(excluding: [1, 2])),
                   (.claimed(1), .claimRow(1)),
                   (.claimed(1), .claimRow(2)),
                   (.claimed(0), .done),
               ]),
        Script(label: "of two suspects claimed again, one goes out: only the other is ended",
               failedLimit: 1, first: .findHeads(excluding: []), events: [
                   (.found([1, 2]), .claimRow(1)),
                   (.failed(.deterministic), .claimRow(2)),
                   (.failed(.deterministic), .claimOther(excluding: [1, 2])),
                   (.claimed(1), .claimRow(1)),
                   (.claimed(1), .claimRow(2)),
                   (.failed(.deterministic), .isolate([PoisonHunt.Suspect(id: 2, error: error)])),
               ]),
        Script(label: "a suspect but no other row due: nothing shows the claim works, so nothing is ended",
               failedLimit: 1, first: .findHeads(excluding: []), events: [
                   (.found([5]), .claimRow(5)),
                   (.failed(.deterministic), .claimOther(excluding: [5])),
                   (.claimed(0), .giveUp(.nothingElseDue)),
                   (.isolated, .giveUp(.nothingElseDue)),
               ]),
        Script(label: "every row fails alone, up to the most suspects, and so does the row due last: a broken claim, nothing ended",
               failedLimit: 1, first: .findHeads(excluding: []), events: [
                   (.found([1]), .claimRow(1)),
                   (.failed(.deterministic), .claimOther(excluding: [1])),
                   (.failed(.deterministic), .findHeads(excluding: [1])),
                   (.found([2]), .claimRow(2)),
                   (.failed(.deterministic), .claimOther(excluding: [1, 2])),
                   (.failed(.deterministic), .claimLast(excluding: [1, 2])),
                   (.failed(.deterministic), .giveUp(.everyRowFails)),
               ], maximumSuspects: 2),
        Script(label: "a batch of bad rows as big as the most suspects: the row due last goes out, and the batch is ended",
               failedLimit: 1, first: .findHeads(excluding: []), events: [
                   (.found([1]), .claimRow(1)),
                   (.failed(.deterministic), .claimOther(excluding: [1])),
                   (.failed(.deterministic), .findHeads(excluding: [1])),
                   (.found([2]), .claimRow(2)),
                   (.failed(.deterministic), .claimOther(excluding: [1, 2])),
                   (.failed(.deterministic), .claimLast(excluding: [1, 2])),
                   (.claimed(1), .claimRow(1)),
                   (.failed(.deterministic), .claimRow(2)),
                   (.failed(.deterministic), .isolate([1, 2].map { PoisonHunt.Suspect(id: $0, error: error) })),
                   (.isolated, .done),
               ], maximumSuspects: 2),
        Script(label: "the most suspects gathered after a claim worked: ended without the row due last",
               failedLimit: 2, first: .claim(limit: 1), events: [
                   (.claimed(1), .claim(limit: 2)),
                   (.failed(.deterministic), .claim(limit: 1)),
                   (.failed(.deterministic), .findHeads(excluding: [])),
                   (.found([1]), .claimRow(1)),
                   (.failed(.deterministic), .claimOther(excluding: [1])),
                   (.failed(.deterministic), .isolate([PoisonHunt.Suspect(id: 1, error: error)])),
               ], maximumSuspects: 1),
        Script(label: "the claim of other rows fails but no other head is found: the row due last decides",
               failedLimit: 1, first: .findHeads(excluding: []), events: [
                   (.found([1]), .claimRow(1)),
                   (.failed(.deterministic), .claimOther(excluding: [1])),
                   (.failed(.deterministic), .findHeads(excluding: [1])),
                   (.found([1]), .claimLast(excluding: [1])),
                   (.claimed(0), .giveUp(.nothingElseDue)),
               ]),
        Script(label: "a transient failure at any step stops the hunt for the usual backoff",
               failedLimit: 8, first: .claim(limit: 4), events: [
                   (.failed(.transient), .giveUp(.transient)),
                   (.claimed(4), .giveUp(.transient)),
               ]),
        Script(label: "a transient failure while ending the rows stops the hunt too",
               failedLimit: 1, first: .findHeads(excluding: []), events: [
                   (.found([9]), .claimRow(9)),
                   (.failed(.deterministic), .claimOther(excluding: [9])),
                   (.claimed(1), .claimRow(9)),
                   (.failed(.deterministic), .isolate([PoisonHunt.Suspect(id: 9, error: error)])),
                   (.failed(.transient), .giveUp(.transient)),
               ]),
        Script(label: "finding the heads fails on data: not a row's doing, nothing ended",
               failedLimit: 1, first: .findHeads(excluding: []), events: [
                   (.failed(.deterministic), .giveUp(.everyRowFails)),
               ]),
        Script(label: "a hunt stops after its most steps",
               failedLimit: 8, first: .claim(limit: 4), events: [
                   (.claimed(4), .claim(limit: 8)),
                   (.failed(.deterministic), .claim(limit: 4)),
                   (.claimed(4), .giveUp(.tooLong)),
               ], maximumSteps: 2),
    ]

    @Test("steps of a hunt", arguments: scripts)
    func script(_ script: Script) {
        var hunt = PoisonHunt(failedLimit: script.failedLimit, maximumSuspects: script.maximumSuspects, maximumSteps: script.maximumSteps)
        #expect(hunt.next == script.first)
        for (i, (event, expected)) in script.events.enumerated() {
            switch event {
            case .claimed(let rows): hunt.claimed(rows: rows)
            case .failed(let failure): hunt.failed(failure, error: Self.error)
            case .found(let ids): hunt.found(ids)
            case .isolated: hunt.isolated()
            }
            #expect(hunt.next == expected, "after event \(i): \(event)")
        }
        #expect(hunt.isOver == { if case .done = hunt.next { return true }; if case .giveUp = hunt.next { return true }; return false }())
    }

    /// SQLSTATE classes 22 and 23 are deterministic; lost connections, serialization failures, deadlocks,
    /// shutdowns and timeouts are not (a missing column is configuration: see StatementFailureTests)
    @Test("SQLSTATE classes 22 and 23 are deterministic; lost connections, conflicts, shutdowns and timeouts are not",
          arguments: [("22003", StatementFailure.deterministic), ("22P02", .deterministic), ("22008", .deterministic),
                      ("23514", .deterministic), ("23505", .deterministic), ("40001", .transient), ("40P01", .transient),
                      ("57P01", .transient), ("57014", .transient), ("08006", .transient), ("42703", .configuration),
                      ("2", .transient), ("", .transient), (nil, .transient)] as [(String?, StatementFailure)])
    func classify(_ sqlState: String?, _ expected: StatementFailure) {
        #expect(StatementFailure(sqlState: sqlState) == expected)
    }
}
