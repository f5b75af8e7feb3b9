import Logging
import PushCore
import PushStore
import PushTransport
import PGClient

/// Claims due rows while the window has room, until a stop is requested; takes the due
/// probes of held endpoints; and every ``WorkerConfiguration/heartbeatSeconds`` does the
/// worker's upkeep (``Upkeep``, on this loop's connection), whose expiry of a backlog goes on a few
/// chunks each turn until it is done.
///
/// A claim that fails on a row's data (SQLSTATE class 22, 23 or P0) starts a ``PoisonHunt``
/// (``PushWorker/hunt(after:limit:_:_:)``): the row is found and ended `failed`/`ClaimError`, and
/// claiming goes on at full size. Other failures are retried with backoff, after what
/// ``PushWorker/databaseFailed(_:loop:purpose:_:)`` does for them (a read-only session is dropped; a
/// missing privilege is logged with its fix and fails `/healthz`).
///
/// Its state is its own (``PushWorker/ClaimTurn``: the backoff, the holds last read, the caps'
/// budgets, the lanes' rotation, its copy of the worker's generator; and the ``Upkeep`` it runs);
/// the claim statement, the hand-over to the senders, the poison hunt and the probes are the
/// worker's, which it calls.
struct ClaimLoop {
    let worker: PushWorker
    var turn: PushWorker.ClaimTurn
    var upkeep: Upkeep
    /// How long the drained loop waits (``ClaimLoop/drainedTimeout(_:poll:took:)``).
    var drainedWait = DrainedWait()

    init(worker: PushWorker) {
        self.worker = worker
        turn = PushWorker.ClaimTurn(worker.configuration, random: worker.random)
        upkeep = Upkeep(worker: worker)
    }

    var configuration: WorkerConfiguration { worker.configuration }
    var logger: Logger { worker.logger }
    var metrics: WorkerMetrics { worker.metrics }
    var stopRequested: Bool { worker.stopRequested }

    /// Runs until a stop is requested.
    mutating func run(_ connection: PGConnection) async {
        let holdLimit = configuration.holdLimit
        // Claim in chunks worth a statement: not one row per freed stream.
        let minimumClaim = max(1, min(configuration.claimBatchSize, holdLimit / 4))
        let poll = Duration.milliseconds(Int(configuration.pollSeconds * 1000))
        while !stopRequested {
            worker.tick(.claim)
            await upkeep.runIfDue(connection)
            if holdLimit - worker.heldCount < minimumClaim {
                await worker.roomWake.wait(timeout: poll)
                await urgentClaim(connection)
                continue
            }
            worker.state.withLock { $0.enqueued = false }
            do {
                try await readHolds(connection)
                try await ensureBudgets(connection)
            } catch {
                await worker.databaseFailed(error, loop: .claim, purpose: PushWorker.claimPurpose, connection)
                await backOff(PushWorker.message(.transient), "\(error)")
                continue
            }
            var drained = true, heldBackByCap = false, took = 0
            for scope in turn.scopes() {
                let limit = min(holdLimit - worker.heldCount, configuration.claimBatchSize)
                guard limit > 0, !stopRequested else { drained = false; break }
                guard let claimed = await claimTurn(scope, limit: limit, connection) else { drained = false; break }
                worker.dispatch(claimed)
                took += claimed.rows.count
                if claimed.rows.count >= limit { drained = false }
                // Entries moved to their quiet window's end, or rows deferred by a frequency cap,
                // while others may be due behind them: this is not the queue drained.
                if claimed.claimAgain { drained = false }
                heldBackByCap = heldBackByCap || claimed.heldBackByCap
            }
            turn.rotation &+= 1
            if heldBackByCap {
                // Rows wait for a cap's budget, which refills continuously: claim again soon. A
                // held-back turn that took nothing makes sure the budget rows exist (one deleted
                // by hand would hold its lane back for good), and after two in a row the loop
                // waits longer (still within the budget's quarter-second burst).
                turn.emptyHeldBack = took == 0 ? turn.emptyHeldBack + 1 : 0
                if took == 0 { turn.budgetsReady = false }
                await worker.workWake.wait(timeout: turn.emptyHeldBack >= 2 ? Self.capRecheck * 4 : Self.capRecheck)
            } else if drained && !upkeep.workLeft {
                // The queue is drained for now: wait for a NOTIFY, a short retry, the next entry of
                // pushq.due to come due, or the poll.
                let signaled = await worker.workWake.wait(timeout: await drainedTimeout(connection, poll: poll, took: took))
                drainedWait.waited(signaled: signaled)
            }
        }
    }

    /// How soon a claim held back by a cap is tried again: a fraction of the budget's burst
    /// (``PushStore`` keeps a quarter of a second of each cap), so that no refill is lost.
    static let capRecheck = Duration.milliseconds(50)

    /// One claim of the loop: its rows, or nil when it failed (then handled: a failure on a row's
    /// data hunts the row down; any other is reported and backed off from). A plain claim that
    /// found a lane needing the considerate one (it took nothing) is followed by the considerate
    /// claim at once, and the loop sends that one for a while (``ClaimForm``).
    private mutating func claimTurn(_ scope: ClaimScope, limit: Int, _ connection: PGConnection) async -> Claim? {
        var scope = scope
        do {
            var claimed = try await timedClaim(connection, limit: limit, scope)
            if claimed.needsConsiderate {
                turn.form.needed(at: .now)
                scope.considerate = true
                claimed = try await timedClaim(connection, limit: limit, scope)
            }
            claimWorked()
            return claimed
        } catch where PushWorker.failure(of: error) == .deterministic {
            // A hunt's claims are considerate: a plain one would take nothing once a lane needs the
            // other, and the hunt would take that for its suspects gone.
            scope.considerate = true
            let (end, lastError) = await worker.hunt(after: error, limit: limit, scope, connection)
            if case .giveUp(let why) = end { await backOff(PushWorker.message(why), lastError) }
        } catch {
            await worker.databaseFailed(error, loop: .claim, purpose: PushWorker.claimPurpose, connection)
            await backOff(PushWorker.message(.transient), "\(error)")
        }
        return nil
    }

    /// While the window is full: when new rows were enqueued, claims up to ``urgentRows`` rows
    /// of lanes ranked lower than the highest rank held, beyond the window. The sender's queue
    /// puts them ahead of the rows of that rank still waiting for a stream, so a password reset
    /// does not wait for a campaign's prefetch to drain before it is even claimed. At most
    /// ``urgentRows`` rows over the window.
    private mutating func urgentClaim(_ connection: PGConnection) async {
        // The held rows are walked only after a NOTIFY, not at every wake-up for room.
        let highest = worker.state.withLock { s -> Int? in
            guard s.enqueued else { return nil }
            s.enqueued = false
            guard s.held.count < configuration.holdLimit + Self.urgentRows else { return nil }
            return s.held.highestRank
        }
        guard let highest, !stopRequested else { return }
        for var scope in turn.scopes() {
            scope.belowRank = highest
            guard let claimed = await claimTurn(scope, limit: Self.urgentRows, connection) else { return }
            worker.dispatch(claimed)
        }
    }

    /// The most rows an urgent claim takes beyond the window.
    static let urgentRows = 100

    /// Makes sure every capped credential and lane has its row in `pushq.rate_budgets`: at the
    /// first turn, and again after a turn held back by a cap that took nothing.
    private mutating func ensureBudgets(_ connection: PGConnection) async throws {
        guard !turn.budgetsReady else { return }
        try await connection.ensureBudgets(turn.caps.map(\.key))
        turn.budgetsReady = true
    }

    /// Reads the held endpoints (any worker's) once a second, or as soon as this worker wrote
    /// one, and sends the probes that are due.
    private mutating func readHolds(_ connection: PGConnection) async throws {
        let changed = worker.state.withLock { s in defer { s.holdsChanged = false }; return s.holdsChanged }
        guard changed || ContinuousClock.now - turn.holdsReadAt > .seconds(1) else { return }
        turn.holds = try await connection.holds()
        turn.holdsReadAt = .now
        worker.sawHolds(turn.holds)
        // A stored existential is not opened in place: the probes draw from a copy, kept after.
        var generator = turn.random
        defer { turn.random = generator }
        try await worker.probe(turn.holds.filter { $0.probeDue && configuration.serves($0.endpoint) },
                               credentials: turn.credentials, random: &generator, connection)
    }

    /// One claim statement, timed for the metrics.
    private func timedClaim(_ connection: PGConnection, limit: Int, _ scope: ClaimScope) async throws(PGError) -> Claim {
        let started = ContinuousClock.now
        let claimed = try await worker.claim(connection, limit: limit, scope)
        let took = (ContinuousClock.now - started).components
        metrics.claimed(rows: claimed.rows.count, nanoseconds: took.seconds * 1_000_000_000 + took.attoseconds / 1_000_000_000)
        return claimed
    }

    /// After a failed claim turn: logs the first failure of a run, and waits (a NOTIFY or a stop
    /// ends the wait), 0.1 s doubling to 5 s.
    private mutating func backOff(_ message: String, _ error: String) async {
        if !turn.failing {
            logger.error("\(message)", metadata: ["error": "\(error)"])
            turn.failing = true
        }
        worker.databaseAnswered(false)
        await worker.workWake.wait(timeout: .milliseconds(Int(turn.backoff * 1000)))
        turn.backoff = min(turn.backoff * 2, 5)
    }

    /// After a claim that worked: the end of a run of failures is logged.
    private mutating func claimWorked() {
        worker.databaseAccepted(.claim, purpose: PushWorker.claimPurpose)
        if turn.failing {
            logger.info("claiming again after database errors")
            turn.failing = false
            turn.backoff = 0.1
        }
        worker.databaseAnswered(true)
    }
}

extension PushWorker {
    /// What the claim loop keeps from one turn to the next.
    struct ClaimTurn {
        /// The served credentials' names, by provider.
        let credentials: [Provider: [String]]
        /// The backoff after a failed statement, in seconds, and whether the loop is failing.
        var backoff = 0.1
        var failing = false
        /// The held endpoints (any worker's) last read, and when.
        var holds: [HeldEndpoint] = []
        var holdsReadAt = ContinuousClock.now - .seconds(3600)

        /// The served credentials that have a fleet-wide cap: each is claimed on its own, with its budget.
        let caps: [RateBudget]
        var budgetsReady = false
        /// Turns in a row held back by a cap that took no row.
        var emptyHeldBack = 0
        /// Claims so far: which lane of a rank goes first.
        var rotation = 0
        /// Which claim text the turn sends: the plain one, or the considerate one for a while.
        var form = ClaimForm()
        /// Where the probes' next intervals are drawn from (``PushWorker/random``).
        var random: any RandomNumberGenerator & Sendable

        init(_ configuration: WorkerConfiguration, random: any RandomNumberGenerator & Sendable) {
            self.random = random
            credentials = configuration.credentials.namesByProvider
            caps = configuration.credentialCaps.filter { configuration.credentials[CredentialKey($0.provider, $0.credential)] != nil }
            budgetsReady = caps.isEmpty
        }

        /// This turn's claims: the credentials without a cap together, then each capped one alone.
        func scopes() -> [ClaimScope] {
            let considerate = form.considerate(at: .now)
            let capped = Set(caps.map { CredentialKey($0.provider, $0.credential) })
            var uncapped: [Provider: [String]] = [:]
            for (provider, names) in credentials {
                let left = names.filter { !capped.contains(CredentialKey(provider, $0)) }
                if !left.isEmpty { uncapped[provider] = left }
            }
            var scopes: [ClaimScope] = []
            if !uncapped.isEmpty {
                scopes.append(ClaimScope(credentials: uncapped, rotation: rotation, considerate: considerate))
            }
            for cap in caps {
                scopes.append(ClaimScope(credentials: [cap.provider: [cap.credential]], rotation: rotation, budget: cap,
                                         considerate: considerate))
            }
            return scopes
        }
    }
}
