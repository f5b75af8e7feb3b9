// queue-bench: the database side of pushq's benchmarks (scripts/bench).
//
// usage: queue-bench sql URL BATCH
//          The SQL ceiling: claims and completes every due row with the worker's own statements
//          (PGConnection.claim / complete: FOR UPDATE SKIP LOCKED claim, fenced unnest update),
//          no HTTP. Prints "rows=N seconds=S rate=R".
//        queue-bench latency URL COUNT GAP_MS [TENANT [LANE]]
//          Inserts COUNT single rows, the i-th at start + i × GAP_MS (a steady rate however long
//          each INSERT takes); prints "APNS_ID WALL_NS" per row, the wall clock read just before
//          each INSERT (scripts/bench joins them with the mock's records). With TENANT (and
//          LANE), each row carries that tenant (and lane): the `tenants` part's trickle.
//        queue-bench wait URL TIMEOUT_S
//          Returns when no row is queued, sending or retrying (exit 2 after TIMEOUT_S). One
//          connection and an index probe every 50 ms: waiting must not take CPU from the
//          system it measures (a psql per poll cost a fifth of the machine). Prints the CPU
//          ticks (1/100 s) its own PostgreSQL backend used, for scripts/bench to take out of
//          PostgreSQL's figure: each probe walks the index entries of rows claimed since the
//          last vacuum, ~6 µs per notification of a 50 000-row drain.
import Foundation
import Logging
import PushCore
import PushStore
import PGClient

var logger = Logger(label: "queue-bench")
logger.logLevel = .warning
let args = CommandLine.arguments

func wallNanoseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(2)
}

switch args.count >= 2 ? args[1] : "" {
case "sql":
    guard args.count == 4, let batch = Int(args[3]) else { fail("usage: queue-bench sql URL BATCH") }
    let claimer = try await PGConnection.connect(args[2], logger: logger)
    let completer = try await PGConnection.connect(args[2], logger: logger)
    let sent = Disposition(status: .sent, reason: nil)
    let started = ContinuousClock.now
    var total = 0
    // Two connections, claim and complete overlapped as in the worker: claim batch n+1 while batch n is written back.
    var pending: Task<Void, Error>? = nil
    while true {
        let rows = try await claimer.claim(limit: batch, workerID: "queue-bench", leaseSeconds: 60,
                                           credentials: [.apns: ["default"]], defaultEnvironment: .development)
        try await pending?.value
        if rows.isEmpty { break }
        total += rows.count
        let completions = rows.map { RowCompletion(id: $0.id, attempt: $0.attempts, lease: $0.lease, disposition: sent, httpStatus: 200, apnsUniqueID: nil) }
        pending = Task {
            try await completer.complete(completions, invalidations: [], holds: [], resumed: [Endpoint(credential: "default", environment: .development)],
                                         workerID: "queue-bench")
        }
    }
    let elapsed = ContinuousClock.now - started
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    print("rows=\(total) seconds=\(String(format: "%.3f", seconds)) rate=\(Int(Double(total) / seconds))")
case "latency":
    guard (5...7).contains(args.count), let count = Int(args[3]), let gap = Int(args[4]) else {
        fail("usage: queue-bench latency URL COUNT GAP_MS [TENANT [LANE]]")
    }
    let tenant: String? = args.count > 5 ? args[5] : nil
    let lane: String? = args.count > 6 ? args[6] : nil
    let c = try await PGConnection.connect(args[2], logger: logger)
    var columns = "device_token, payload", values = "$1, '{\"aps\":{\"alert\":\"latency\"}}'"
    var extra: [(any PGParameter)?] = []
    for (column, value) in [("tenant", tenant), ("lane", lane)] {
        guard let value else { continue }
        extra.append(value)
        columns += ", " + column; values += ", $\(extra.count + 1)"
    }
    let insert = "INSERT INTO pushq.notifications (\(columns)) VALUES (\(values)) RETURNING apns_id"
    let start = ContinuousClock.now
    for i in 0..<count {
        let hex = String(i, radix: 16)
        let token = "c" + String(repeating: "0", count: 63 - hex.count) + hex
        let before = wallNanoseconds()
        let parameters: [(any PGParameter)?] = [token] + extra
        let r = try await c.query(insert, parameters)
        print("\(try r.firstRow().string("apns_id") ?? "") \(before)")
        try await Task.sleep(until: start + .milliseconds(gap * (i + 1)), clock: .continuous)
    }
case "wait":
    guard args.count == 4, let timeout = Double(args[3]) else { fail("usage: queue-bench wait URL TIMEOUT_S") }
    let c = try await PGConnection.connect(args[2], logger: logger)
    let backend = try await c.query("SELECT pg_backend_pid() AS pid").firstRow().string("pid") ?? ""
    /// utime + stime of the backend (fields 14 and 15 of /proc/PID/stat; the name in field 2 has no spaces).
    func backendTicks() -> Int {
        guard let stat = try? String(contentsOfFile: "/proc/\(backend)/stat", encoding: .utf8) else { return 0 }
        let fields = stat.split(separator: " ")
        guard fields.count > 14, let user = Int(fields[13]), let system = Int(fields[14]) else { return 0 }
        return user + system
    }
    let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
    // While pushq.due has an entry (every waiting row has one), a probe is one step from the end
    // of due_order, whose newest entries are live. Only then is pushq.notifications read, for the
    // rows still in flight: it has no index of status any more, so that read is a scan of the
    // whole table, which every 50 ms took a fair share of a core from the drain it measures,
    // more for wider rows (Web Push's), whose table has more pages.
    let probe = """
        SELECT EXISTS (SELECT 1 FROM pushq.due d ORDER BY d.lane DESC, d.due_at DESC, d.id DESC LIMIT 1)
            OR EXISTS (SELECT 1 FROM pushq.notifications WHERE status IN ('queued', 'retrying', 'sending')) AS open
        """
    while try await c.query(probe).firstRow().string("open") == "t" {
        if ContinuousClock.now > deadline { fail("queue-bench wait: rows still open after \(timeout) s") }
        try await Task.sleep(for: .milliseconds(50))
    }
    print(backendTicks())
default:
    fail("usage: queue-bench sql URL BATCH | queue-bench latency URL COUNT GAP_MS [TENANT [LANE]] | queue-bench wait URL TIMEOUT_S")
}
