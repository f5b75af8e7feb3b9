/// Finds the row whose data makes every claim fail, and says when it may be ended. Pure: the
/// claim loop carries out each ``Step`` and reports how it went.
///
/// A claim is one statement, so one row that makes it fail (a data exception, SQLSTATE class
/// 22, or an integrity error, class 23) rolls the whole claim back; staying at the head of
/// the queue, it would fail every claim of every worker. After such a failure the hunt claims
/// half as many rows, doubling again after each claim that works (the rows before the bad one
/// go out meanwhile) and halving after each that fails, until a claim of one row fails. The
/// rows that claim takes (the first row to claim in each lane, waiting or lapsed) are then
/// claimed one at a time; each whose claim alone fails is a suspect. Then one row other than
/// the suspects is claimed: while that fails too, its head rows are tried alone the same way
/// (bad rows often come in batches, side by side), up to ``maximumSuspects``.
///
/// A suspect is ended (`failed`, `ClaimError`) only if its claim alone failed after a claim of
/// some other row worked during the hunt (suspects found before are claimed alone once more):
/// a claim that fails whatever the row (a broken statement, not a broken row) ends nothing,
/// even if it is mended in the middle of a hunt. When the suspects reach ``maximumSuspects``
/// with no claim that worked yet, the row due last is claimed alone to tell a batch of bad
/// rows from a broken statement.
public struct PoisonHunt: Sendable, Equatable {
    /// A row whose claim alone failed, with the error it failed with.
    public struct Suspect: Sendable, Hashable {
        public var id: Int64
        public var error: String

        public init(id: Int64, error: String) {
            self.id = id
            self.error = error
        }
    }

    /// Why a hunt stopped without ending a row.
    public enum GiveUp: Sendable, Hashable {
        /// A transient failure (lost connection, deadlock...): the usual backoff applies.
        case transient
        /// The claim fails whatever the row: nothing is ended.
        case everyRowFails
        /// Suspects were found, but no other row is due to show that the claim itself works.
        case nothingElseDue
        /// The hunt took more than ``maximumSteps`` steps (the queue kept changing under it).
        case tooLong
    }

    /// What the claim loop does next.
    public enum Step: Sendable, Hashable {
        /// Claim up to `limit` rows as usual and hand them out; then ``claimed(rows:)`` or ``failed(_:error:)``.
        case claim(limit: Int)
        /// Find the rows a claim of one would take, with the same filters, other than
        /// `excluding`: the first due row and the first row whose lease ran out; then ``found(_:)``.
        case findHeads(excluding: [Int64])
        /// Claim row `id` alone and hand it out if it comes; then ``claimed(rows:)`` or ``failed(_:error:)``.
        case claimRow(Int64)
        /// Claim one row other than `excluding` and hand it out (does the claim work at all?).
        case claimOther(excluding: [Int64])
        /// Claim the row due last, other than `excluding`, alone, and hand it out if it comes:
        /// far from the suspects, it tells whether the claim works at all.
        case claimLast(excluding: [Int64])
        /// End these rows `failed` with last_reason `ClaimError`, released from any lease, and
        /// log each once with its error; then ``isolated()``.
        case isolate([Suspect])
        /// The hunt is over: claim at full size again.
        case done
        /// The hunt stopped without ending a row: back off, then claim at full size again.
        case giveUp(GiveUp)
    }

    enum Phase: Sendable, Hashable {
        case claiming(limit: Int)
        case finding
        case trying([Int64])
        case proving
        case controlling
        case confirming([Int64])
        case isolating
        case over(Step)
    }

    /// Most suspects one hunt gathers before it ends them (or finds that the claim fails
    /// whatever the row). Defaults to 64.
    public let maximumSuspects: Int
    /// Most steps one hunt takes. Defaults to 512 (halving from 10 000 rows takes about 100 at
    /// worst; each suspect 3 or 4).
    public let maximumSteps: Int
    /// The limit of the claim that failed: claims in the hunt take at most that many rows.
    public let failedLimit: Int
    var phase: Phase
    var suspects: [Suspect] = []
    /// A claim returned a row since the hunt began: the claim statement itself works.
    var claimWorks = false
    /// Suspects whose claim alone failed after ``claimWorks`` was known.
    var confirmed: Set<Int64> = []
    var steps = 0

    /// Starts a hunt after a claim of `failedLimit` rows failed deterministically.
    public init(failedLimit: Int, maximumSuspects: Int = 64, maximumSteps: Int = 512) {
        precondition(failedLimit >= 1 && maximumSuspects >= 1 && maximumSteps >= 1)
        self.failedLimit = failedLimit
        self.maximumSuspects = maximumSuspects
        self.maximumSteps = maximumSteps
        self.phase = .claiming(limit: failedLimit)
        halve(from: failedLimit)
    }

    /// What to do now.
    public var next: Step {
        switch phase {
        case .claiming(let limit): return .claim(limit: limit)
        case .finding: return .findHeads(excluding: suspects.map(\.id))
        case .trying(let ids), .confirming(let ids): return .claimRow(ids[0])
        case .proving: return .claimOther(excluding: suspects.map(\.id))
        case .controlling: return .claimLast(excluding: suspects.map(\.id))
        case .isolating: return .isolate(suspects)
        case .over(let step): return step
        }
    }

    /// Whether the hunt is over (``next`` is ``Step/done`` or ``Step/giveUp(_:)``).
    public var isOver: Bool {
        if case .over = phase { return true }
        return false
    }

    /// The claim of ``next`` (``Step/claim(limit:)``, ``Step/claimRow(_:)``, ``Step/claimOther(excluding:)``
    /// or ``Step/claimLast(excluding:)``) worked and returned `rows` rows.
    public mutating func claimed(rows: Int) {
        guard count() else { return }
        if rows > 0 { claimWorks = true }
        switch phase {
        case .claiming(let limit):
            phase = limit >= failedLimit ? .over(.done) : .claiming(limit: min(limit * 2, failedLimit))
        case .trying(let ids):
            afterTrying(Array(ids.dropFirst()))
        case .confirming(let ids):
            // It went out: not a bad row after all (the claim was mended meanwhile).
            suspects.removeAll { $0.id == ids[0] }
            confirm(Array(ids.dropFirst()))
        case .proving, .controlling:
            if claimWorks { confirm(nil) } else { phase = .over(.giveUp(.nothingElseDue)) }
        default:
            break
        }
    }

    /// The statement of ``next`` failed; `error` is its message, logged if the row is ended.
    public mutating func failed(_ failure: StatementFailure, error: String) {
        guard count() else { return }
        guard failure == .deterministic else {
            phase = .over(.giveUp(.transient))
            return
        }
        switch phase {
        case .claiming(let limit):
            halve(from: limit)
        case .trying(let ids):
            suspects.append(Suspect(id: ids[0], error: error))
            if claimWorks { confirmed.insert(ids[0]) }
            afterTrying(Array(ids.dropFirst()))
        case .confirming(let ids):
            confirmed.insert(ids[0])
            confirm(Array(ids.dropFirst()))
        case .proving:
            // Another row fails too (a batch of bad rows), or every row does: try the next head
            // alone, up to the most suspects; then tell which it is, unless a claim worked already.
            if suspects.count < maximumSuspects {
                phase = .finding
            } else if claimWorks {
                confirm(nil)
            } else {
                phase = .controlling
            }
        case .controlling, .finding, .isolating:
            // Statements that read no row's data failed on data: nothing here is explained by one row.
            phase = .over(.giveUp(.everyRowFails))
        case .over:
            break
        }
    }

    /// ``Step/findHeads(excluding:)`` found these rows (none when nothing is due).
    public mutating func found(_ ids: [Int64]) {
        guard count(), case .finding = phase else { return }
        let known = Set(suspects.map(\.id))
        var fresh: [Int64] = []
        for id in ids where !known.contains(id) && !fresh.contains(id) { fresh.append(id) }
        if !fresh.isEmpty {
            phase = .trying(fresh)
        } else if suspects.isEmpty {
            phase = .over(.done)
        } else {
            // The claim of other rows failed, yet no other head: end the suspects if a claim worked.
            if claimWorks { confirm(nil) } else { phase = .controlling }
        }
    }

    /// ``Step/isolate(_:)`` ended the suspects.
    public mutating func isolated() {
        guard count(), case .isolating = phase else { return }
        phase = .over(.done)
    }

    private mutating func halve(from limit: Int) {
        phase = limit > 1 ? .claiming(limit: limit / 2) : .finding
    }

    /// Claims alone, once more, the suspects found before a claim worked (`pending`, or all such
    /// when nil); then ends the ones that still fail.
    private mutating func confirm(_ pending: [Int64]?) {
        let rest = pending ?? suspects.map(\.id).filter { !confirmed.contains($0) }
        if !rest.isEmpty {
            phase = .confirming(rest)
        } else {
            phase = suspects.isEmpty ? .over(.done) : .isolating
        }
    }

    private mutating func afterTrying(_ rest: [Int64]) {
        if !rest.isEmpty {
            phase = .trying(rest)
        } else if suspects.isEmpty {
            phase = .over(.done)  // each row went out alone: whatever failed is gone
        } else {
            phase = .proving
        }
    }

    /// Counts a step; false (and the hunt given up) past ``maximumSteps``, or once it is over.
    private mutating func count() -> Bool {
        if case .over = phase { return false }
        steps += 1
        if steps > maximumSteps {
            phase = .over(.giveUp(.tooLong))
            return false
        }
        return true
    }
}
