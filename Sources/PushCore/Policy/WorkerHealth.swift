/// What `/healthz` and `/readyz` answer, decided from what the worker last saw (no I/O).
///
/// - **Live** (`/healthz`): every loop of the worker ticked within ``staleAfterSeconds``. A
///   loop blocked for longer (a statement past its deadline, a deadlock, a wedged thread)
///   makes the worker not live: restart it. So does a loop whose statements PostgreSQL
///   refuses in a way only an operator can mend (``refusals``: a missing privilege, a
///   missing table): the worker keeps retrying, and is live again once they work.
/// - **Ready** (`/readyz`): live, PostgreSQL answered the last statement, the worker is not
///   draining, and at least one of its credentials is not paused.
public struct WorkerHealth: Sendable, Hashable {
    /// The loops whose ticks liveness watches.
    public enum Loop: String, Sendable, Hashable, CaseIterable {
        case claim, complete, upkeep
    }

    /// Seconds since each loop last ticked; a loop that never ticked is absent.
    public var loopAges: [Loop: Double]
    /// Seconds since the worker started its loops (a loop gets this long for its first tick).
    public var runningSeconds: Double
    /// Whether the last statement on the claim connection worked.
    public var databaseConnected: Bool
    /// A stop was requested: the worker finishes what it holds and claims nothing.
    public var draining: Bool
    /// The worker's credentials, by name.
    public var credentials: Set<String>
    /// Credentials paused (a `credential` or `burst` hold) in any environment.
    public var pausedCredentials: Set<String>
    /// How long a loop may go without a tick, in seconds.
    public var staleAfterSeconds: Double
    /// Loops whose last statement PostgreSQL refused for a reason retrying cannot mend
    /// (``StatementFailure/configuration``), with that problem in one sentence.
    public var refusals: [Loop: String]

    public init(loopAges: [Loop: Double], runningSeconds: Double, databaseConnected: Bool, draining: Bool,
                credentials: Set<String>, pausedCredentials: Set<String>, staleAfterSeconds: Double,
                refusals: [Loop: String] = [:]) {
        self.loopAges = loopAges
        self.runningSeconds = runningSeconds
        self.databaseConnected = databaseConnected
        self.draining = draining
        self.credentials = credentials
        self.pausedCredentials = pausedCredentials
        self.staleAfterSeconds = staleAfterSeconds
        self.refusals = refusals
    }

    /// The loops that have not ticked for too long, in ``Loop`` order.
    public var stuckLoops: [Loop] {
        Loop.allCases.filter { loop in
            (loopAges[loop] ?? runningSeconds) > staleAfterSeconds
        }
    }

    /// Why the worker is not live; empty when it is.
    public var livenessProblems: [String] {
        stuckLoops.map { "the \($0.rawValue) loop has not run for more than \(Int(staleAfterSeconds)) s" }
            + Loop.allCases.compactMap { loop in refusals[loop].map { "the \(loop.rawValue) loop is refused by PostgreSQL: \($0)" } }
    }

    /// Why the worker is not ready; empty when it is.
    public var readinessProblems: [String] {
        var problems = livenessProblems
        if !databaseConnected { problems.append("PostgreSQL is not answering") }
        if draining { problems.append("the worker is draining (stop requested)") }
        if !credentials.isEmpty, credentials.isSubset(of: pausedCredentials) {
            problems.append("every credential is paused: \(credentials.sorted().joined(separator: ", "))")
        }
        return problems
    }
}
