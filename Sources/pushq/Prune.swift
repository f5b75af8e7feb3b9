import ArgumentParser
import Foundation
import PushCore
import PushStore
import PushWorker
import PGClient

struct Prune: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Delete final notifications past their retention, once (for cron).",
        discussion: """
            Deletes what a worker's pruner deletes: sent rows finished more than \
            \(SettingKey.retainSentSeconds.variable) ago (default \(SettingKey.retainSentSeconds.defaultValue), one day), \
            and failed, expired and cancelled rows finished more than \(SettingKey.retainFinalSeconds.variable) ago \
            (default \(SettingKey.retainFinalSeconds.defaultValue), seven days), in batches of 1000 rows, each its own \
            short transaction. Rows that are not final are never deleted. Then it retires the Live Activity \
            tokens of pushq.devices registered more than 12 hours ago (Apple's limits), in batches of the \
            same size. Only one pruner runs at a time \
            (an advisory lock): if a worker or another `pushq prune` is pruning, this one does nothing and \
            says so. With --dry-run, counts the rows it would delete and deletes nothing.
            """
    )

    @OptionGroup var database: DatabaseOptions

    @Flag(help: "Count the rows that would be deleted; delete nothing.") var dryRun = false

    func run() async throws {
        let settings = database.settings()
        let logger = try settings.logger(label: "pushq.prune")
        let policy = try settings.retention()
        let c = try await PGConnection.connect(try settings.databaseURL(), logger: logger)
        try await c.closing { c in try await prune(c, policy: policy) }
    }

    /// One dry or real round on `c`.
    private func prune(_ c: PGConnection, policy: RetentionPolicy) async throws {
        let ages = "sent older than \(Int(policy.sentSeconds)) s, failed/expired/cancelled older than \(Int(policy.finalSeconds)) s"
        if dryRun {
            var counts: [PrunePass: Int] = [:]
            for (pass, age) in policy.passes { counts[pass] = try await c.pruneCandidates(pass, olderThan: age) }
            print("would delete \(Self.summary(counts)) (\(ages)); deleted nothing (dry run)")
            return
        }
        let started = ContinuousClock.now
        var walk = PruneWalk()
        switch try await Pruner(policy: policy).round(c, walk: &walk, now: 0, rest: { s in try? await Task.sleep(for: .milliseconds(Int(s * 1000))) }) {
        case .notElected:
            print("another pruner is running (a worker or another pushq prune); deleted nothing")
        case .pruned(let deleted, let batches, let retired):
            let took = ContinuousClock.now - started
            print("deleted \(Self.summary(deleted)) (\(ages)) and retired \(retired) Live Activity token\(retired == 1 ? "" : "s") "
                  + "past Apple's limits in \(batches) batch\(batches == 1 ? "" : "es"), \(took.components.seconds) s")
        }
    }

    /// "N rows: S sent, E failed/expired/cancelled".
    static func summary(_ counts: [PrunePass: Int]) -> String {
        let sent = counts[.sent, default: 0]
        let ended = counts[.ended, default: 0]
        return "\(sent + ended) rows: \(sent) sent, \(ended) failed/expired/cancelled"
    }
}
