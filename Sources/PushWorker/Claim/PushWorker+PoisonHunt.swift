import Logging
import PushCore
import PushStore
import PushTransport
import PGClient

extension PushWorker {
    /// After a claim of `limit` rows failed on data (SQLSTATE class 22 or 23), carries out a
    /// ``PoisonHunt`` to its end: claims and hands out rows on the way, and ends the rows that
    /// make every claim fail (`failed`/`ClaimError`), logging each once with its error.
    ///
    /// - Returns: how the hunt ended: ``PoisonHunt/Step/done`` (claim at full size again) or
    ///   ``PoisonHunt/Step/giveUp(_:)`` (back off first), with the last error seen. A stop
    ///   request ends it early (`done`).
    func hunt(after error: PGError, limit: Int, _ scope: ClaimScope,
              _ connection: PGConnection) async -> (end: PoisonHunt.Step, lastError: String) {
        logger.debug("a claim failed on data; halving it to find the row", metadata: [
            "claim.limit": "\(limit)", "pg.sqlstate": "\(error.sqlState ?? "")", "error": "\(error)"])
        var hunt = PoisonHunt(failedLimit: limit)
        var lastError = "\(error)"
        while !hunt.isOver && !stopRequested {
            do throws(PGError) {
                switch hunt.next {
                case .claim(let limit):
                    let claimed = try await claim(connection, limit: limit, scope)
                    dispatch(claimed, probe: scope.isProbe)
                    hunt.claimed(rows: claimed.rows.count)
                case .findHeads(let excluding):
                    hunt.found(try await connection.claimHeads(credentials: scope.credentials,
                                                               defaultEnvironment: configuration.apns.environment,
                                                               only: scope.only, excluding: excluding))
                case .claimRow(let id):
                    let claimed = try await claim(connection, limit: 1, scope, row: id)
                    dispatch(claimed, probe: scope.isProbe)
                    hunt.claimed(rows: claimed.rows.count)
                case .claimOther(let excluding):
                    let claimed = try await claim(connection, limit: 1, scope, excluding: excluding)
                    dispatch(claimed, probe: scope.isProbe)
                    hunt.claimed(rows: claimed.rows.count)
                case .claimLast(let excluding):
                    var count = 0
                    if let id = try await connection.lastDue(credentials: scope.credentials, defaultEnvironment: configuration.apns.environment,
                                                             only: scope.only, excluding: excluding) {
                        let claimed = try await claim(connection, limit: 1, scope, row: id)
                        dispatch(claimed, probe: scope.isProbe)
                        count = claimed.rows.count
                    }
                    hunt.claimed(rows: count)
                case .isolate(let suspects):
                    let ended = Set(try await connection.endClaimErrors(ids: suspects.map(\.id), workerID: configuration.workerID))
                    for s in suspects where ended.contains(s.id) {
                        logger.error("a notification made every claim fail; ended failed/ClaimError", metadata: [
                            "notification.id": "\(s.id)", "error": "\(s.error)"])
                    }
                    hunt.isolated()
                case .done, .giveUp:
                    break
                }
            } catch {
                lastError = "\(error)"
                hunt.failed(Self.failure(of: error), error: lastError)
            }
        }
        return (hunt.isOver ? hunt.next : .done, lastError)
    }

    /// What the claim loop logs (once per run of failures) when a hunt ends without ending a row.
    static func message(_ giveUp: PoisonHunt.GiveUp) -> String {
        switch giveUp {
        case .transient:
            return "claim failed; retrying with backoff"
        case .everyRowFails:
            return "claims fail on data whatever the row (SQLSTATE class 22 or 23): no notification ended; retrying with backoff"
        case .nothingElseDue:
            return "rows make every claim fail, and no other row is due to show that the claim itself works: no notification ended; retrying with backoff"
        case .tooLong:
            return "could not single out the notification that makes claims fail (the queue kept changing); retrying with backoff"
        }
    }
}
