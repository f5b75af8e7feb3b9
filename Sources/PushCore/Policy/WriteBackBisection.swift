/// Splits a write-back that failed on data until the row that makes it fail is alone, and says
/// when to end that row. Pure: the complete loop carries out each ``Step`` and reports how it went.
///
/// A write-back of n rows is one transaction, so one row whose answer makes it fail (a data
/// exception, SQLSTATE class 22, or an integrity error, class 23) rolls back every row's, and
/// retrying it would fail forever. After such a failure the endpoints to hold or resume (the
/// batch's "extras", written once) are written alone first; then the rows are halved: each half
/// is written on its own (a row with its token invalidation and throttle), a half that fails is
/// halved again, and a row whose write alone fails is ended (`failed`, a local reason) by a
/// statement that reads none of its answer. Every row is written or ended exactly once.
///
/// When the left half of a failing part is written, the right half must hold the failure, so it
/// is halved at once without being written; a single row is ended only after its own write failed.
/// With n rows of which one is bad this takes at most 2·⌈log2 n⌉ + 2 statements after the
/// failed write (⌈log2 n⌉ + 2 when the bad row comes last), plus one for the extras; when every
/// row is bad, 3n − 2 (3n with extras). A transient failure (``StatementFailure/transient``) changes nothing: the
/// same step is carried out again after a backoff.
public struct WriteBackBisection: Sendable, Equatable {
    /// What the complete loop does next.
    public enum Step: Sendable, Hashable {
        /// Write the holds and resumed endpoints alone; then ``written()`` or ``failed(_:)``.
        case writeExtras
        /// Write these rows (indexes into the batch) with their invalidations and throttles, and
        /// nothing else; then ``written()`` or ``failed(_:)``.
        case write(Range<Int>)
        /// End this row `failed` with a local reason, fenced on its lease like the write-back,
        /// and log the error of its write once; then ``written()`` or ``failed(_:)``.
        case end(Int)
        /// Every row is written or ended.
        case done
    }

    enum Pending: Sendable, Hashable {
        case extras
        /// Not known to fail: to write.
        case unknown(Range<Int>)
        /// Known to fail: `observed` when this very write failed, else inferred (a complement was written).
        case failing(Range<Int>, observed: Bool)
        /// The right half of a failing part, waiting for its left half: fails if that is written.
        case sibling(Range<Int>)
        case end(Int)
    }

    /// What is left, the next on top.
    var pending: [Pending]
    /// Rows ended (their write alone failed on data), in the order they were ended.
    public private(set) var ended: [Int] = []
    /// Rows whose write and end both failed on data: neither written nor ended; their lease
    /// returns them to the queue.
    public private(set) var abandoned: [Int] = []
    /// Whether the extras failed on data and were dropped.
    public private(set) var extrasDropped = false
    /// Statements reported so far (written or failed, transient failures included).
    public private(set) var statements = 0

    /// Starts after the write-back of `count` rows, with extras or not, failed on data.
    public init(count: Int, hasExtras: Bool) {
        precondition(count >= 0)
        if hasExtras {
            pending = count > 0 ? [.sibling(0..<count), .extras] : [.extras]
        } else {
            // Without extras, the failed write was exactly this one: known to fail.
            pending = count > 0 ? [.failing(0..<count, observed: true)] : []
        }
        settle()
    }

    /// What to do now.
    public var next: Step {
        switch pending.last {
        case nil: return .done
        case .extras: return .writeExtras
        case .unknown(let r): return .write(r)
        case .end(let i): return .end(i)
        case .failing, .sibling: preconditionFailure("settled away")
        }
    }

    /// The statement of ``next`` worked.
    public mutating func written() {
        guard let top = pending.popLast() else { return }
        statements += 1
        switch top {
        case .extras, .unknown:
            // The complement of the part that failed was written: the part holds the failure.
            if case .sibling(let r) = pending.last { pending[pending.count - 1] = .failing(r, observed: false) }
        case .end(let i):
            ended.append(i)
        case .failing, .sibling:
            break
        }
        settle()
    }

    /// The statement of ``next`` failed: on data (`.deterministic`), or transiently (to be run again).
    public mutating func failed(_ failure: StatementFailure) {
        statements += 1
        guard failure == .deterministic, let top = pending.popLast() else { return }
        switch top {
        case .extras:
            extrasDropped = true
            if case .sibling(let r) = pending.last { pending[pending.count - 1] = .unknown(r) }
        case .unknown(let r):
            if case .sibling(let s) = pending.last { pending[pending.count - 1] = .unknown(s) }
            pending.append(.failing(r, observed: true))
        case .end(let i):
            abandoned.append(i)
        case .failing, .sibling:
            break
        }
        settle()
    }

    /// Turns the parts on top into a statement to carry out: halves a failing part, writes a
    /// single row known to fail only by inference, ends one whose own write failed.
    private mutating func settle() {
        while case .failing(let r, let observed)? = pending.last {
            pending.removeLast()
            if r.count == 1 {
                pending.append(observed ? .end(r.lowerBound) : .unknown(r))
            } else if r.count > 1 {
                let middle = r.lowerBound + r.count / 2
                pending.append(.sibling(middle..<r.upperBound))
                pending.append(.unknown(r.lowerBound..<middle))
            }
        }
    }
}
