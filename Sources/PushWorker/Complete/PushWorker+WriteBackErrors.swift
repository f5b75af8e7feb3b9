import Logging
import PushCore
import PushStore
import PGClient

extension PushWorker {
    /// After the write-back of `batch` failed on data (SQLSTATE class 22, 23 or P0), carries out a
    /// ``WriteBackBisection`` to its end: writes the holds and resumed endpoints once, then the
    /// rows in parts, and ends each row whose write alone fails (`failed`/`WriteBackError`),
    /// logging its error once. Transient failures on the way are retried as in ``write(_:_:)``.
    ///
    /// - Returns: what was written, the rows ended and the rows that could be neither written nor
    ///   ended (indexes into `batch.completions`; their lease brings them back, so their claim's
    ///   row of pushq.leases must stay), nil when the worker gave up on the database at shutdown.
    func bisect(_ batch: CompletionBatch, after error: any Error,
                _ connection: PGConnection) async -> (write: CompletionWrite, ended: [Int], abandoned: [Int])? {
        logger.debug("recording answers failed on data; writing them in parts to find the row", metadata: [
            "notifications": "\(batch.completions.count)", "pg.sqlstate": "\((error as? PGError)?.sqlState ?? "")", "error": "\(error)"])
        let workerID = configuration.workerID
        var bisection = WriteBackBisection(count: batch.completions.count, hasExtras: batch.hasExtras)
        var total = CompletionWrite()
        var ended: [Int] = []
        var errors: [Int: any Error] = [:]
        if batch.completions.count == 1 && !batch.hasExtras { errors[0] = error }  // ended without a write of its own
        var failures = 0
        while true {
            switch bisection.next {
            case .done:
                return (total, ended, bisection.abandoned)
            case .writeExtras:
                switch await settle(&failures, connection, {
                    try await connection.complete([], invalidations: [], holds: batch.holds, resumed: batch.resumed, workerID: workerID)
                }) {
                case .success(let w):
                    total.heldNow += w.heldNow
                    total.lifted += w.lifted
                    bisection.written()
                case .failure(let error):
                    logger.error("holds could not be recorded (their data makes the statement fail); skipped", metadata: [
                        "pg.sqlstate": "\((error as? PGError)?.sqlState ?? "")", "error": "\(error)"])
                    bisection.failed(.deterministic)
                case nil:
                    return nil
                }
            case .write(let rows):
                let part = batch.part(rows)
                switch await settle(&failures, connection, {
                    try await connection.complete(part.completions, invalidations: part.invalidations, throttles: part.throttles,
                                                  holds: [], resumed: [], workerID: workerID)
                }) {
                case .success(let w):
                    total.updated += w.updated
                    bisection.written()
                case .failure(let error):
                    if rows.count == 1 { errors[rows.lowerBound] = error }
                    bisection.failed(.deterministic)
                case nil:
                    return nil
                }
            case .end(let i):
                switch await end(batch.completions[i], after: errors[i], &failures, connection) {
                case .ended:
                    ended.append(i)
                    bisection.written()
                case .leftAlone:
                    bisection.written()
                case .failed:
                    bisection.failed(.deterministic)
                case nil:
                    return nil
                }
            }
        }
    }

    /// What became of a row ``end(_:after:_:_:)`` tried to end.
    enum EndedRow {
        /// Ended `failed`/`WriteBackError`.
        case ended
        /// Its lease was lost meanwhile: another claim's to write.
        case leftAlone
        /// It could not be ended either: its lease returns it to the queue.
        case failed
    }

    /// Ends `row`, whose write alone failed with `error`, `failed`/`WriteBackError`, and logs it.
    ///
    /// - Returns: what became of it; nil when the worker gave up on the database at shutdown.
    private func end(_ row: RowCompletion, after error: (any Error)?, _ failures: inout Int,
                     _ connection: PGConnection) async -> EndedRow? {
        var metadata: Logger.Metadata = [
            "notification.id": "\(row.id)", "notification.status": "\(row.disposition.status.rawValue)",
            "pg.sqlstate": "\((error as? PGError)?.sqlState ?? "")", "error": "\(error.map { "\($0)" } ?? "")"]
        let workerID = configuration.workerID
        switch await settle(&failures, connection, { try await connection.endWriteBackError(row.claim, workerID: workerID) }) {
        case .success(true):
            logger.error("a notification's answer could not be recorded; ended failed/WriteBackError", metadata: metadata)
            return .ended
        case .success(false):
            logger.debug("a notification's answer could not be recorded, and its lease was lost meanwhile: left alone",
                         metadata: metadata)
            return .leftAlone
        case .failure(let endError):
            metadata["end.error"] = "\(endError)"
            logger.error("a notification's answer could not be recorded, nor the notification ended; it returns to the queue when its lease runs out",
                         metadata: metadata)
            return .failed
        case nil:
            return nil
        }
    }
}
