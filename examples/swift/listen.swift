// Enqueue once, hear the outcome: a dedupe key and a completion signal, in Swift with libpq
// alone (the C library pushq itself uses; no package to fetch).
//
//   PUSHQ_DATABASE_URL=postgresql://pushq@db.internal/pushq \
//   swift -I Sources/CLibPQ $(pkg-config --cflags-only-I libpq) examples/swift/listen.swift DEVICE_TOKEN
//
// (Sources/CLibPQ is pushq's module map for libpq: `libpq-dev` on Debian.) Listens on a channel,
// enqueues one APNs notification with a dedupe_key and that notify_channel, retries the INSERT
// the way a job runner would (the key makes it a no-op), then waits for the row's signal instead
// of polling. Prints the signal and the final status; exits 0 only if it was sent. The contract:
// docs/producers.md.
import CLibPQ
import Foundation

struct Failure: Error, CustomStringConvertible { var description: String }

/// A completion signal's payload (docs/producers.md lists every field).
struct Signal: Decodable {
    var id: Int64
    var status: String
    var last_status: Int?
    var last_reason: String?
}

/// One libpq connection, which it owns and closes.
final class Connection {
    private let conn: OpaquePointer

    init(_ url: String) throws {
        conn = PQconnectdb(url)
        guard PQstatus(conn) == CONNECTION_OK else {
            defer { PQfinish(conn) }
            throw Failure(description: String(cString: PQerrorMessage(conn)))
        }
    }

    deinit { PQfinish(conn) }

    /// Runs `sql` with text parameters ($1, $2…); returns the rows' columns as text, nil for NULL.
    @discardableResult
    func query(_ sql: String, _ parameters: [String?] = []) throws -> [[String?]] {
        let copies = parameters.map { $0.flatMap { strdup($0) } }
        defer { copies.forEach { free($0) } }
        let values = copies.map { $0.map { UnsafePointer($0) } }
        let result = PQexecParams(conn, sql, Int32(values.count), nil, values, nil, nil, 0)
        defer { PQclear(result) }
        guard [PGRES_TUPLES_OK, PGRES_COMMAND_OK].contains(PQresultStatus(result)) else {
            throw Failure(description: String(cString: PQresultErrorMessage(result)))
        }
        return (0..<PQntuples(result)).map { row in
            (0..<PQnfields(result)).map { PQgetisnull(result, row, $0) == 1 ? nil : String(cString: PQgetvalue(result, row, $0)) }
        }
    }

    /// The notifications that arrive within `seconds` (none if none do). Those libpq read
    /// while a query ran are queued already: returned at once, without waiting.
    func notifications(within seconds: Double) throws -> [(channel: String, payload: String)] {
        var received = queued()
        if received.isEmpty {
            var fd = pollfd(fd: PQsocket(conn), events: Int16(POLLIN), revents: 0)
            _ = poll(&fd, 1, Int32(seconds * 1000))
            guard PQconsumeInput(conn) == 1, PQstatus(conn) == CONNECTION_OK else {
                throw Failure(description: String(cString: PQerrorMessage(conn)))
            }
            received = queued()
        }
        return received
    }

    private func queued() -> [(channel: String, payload: String)] {
        var received: [(String, String)] = []
        while let n = PQnotifies(conn) {
            received.append((String(cString: n.pointee.relname), String(cString: n.pointee.extra)))
            PQfreemem(n)
        }
        return received
    }
}

let channel = "order_events"
let final = "{sent,failed,expired,cancelled}"

/// The new row's id, or nil when a row with this key exists already.
func enqueue(_ db: Connection, token: String, key: String) throws -> String? {
    try db.query("""
        INSERT INTO pushq.notifications (device_token, payload, expires_at, metadata, dedupe_key, notify_channel)
        VALUES ($1, '{"aps":{"alert":{"title":"Order 1042","body":"Your order has shipped"},"sound":"default"}}',
                now() + interval '1 hour', '{"order": 1042, "example": "swift-listen"}', $2, $3)
        ON CONFLICT (dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING
        RETURNING id
        """, [token, key, channel]).first?[0] ?? nil
}

/// A connection of its own that listens on `channel`.
func listen(_ url: String) throws -> Connection {
    let db = try Connection(url)
    try db.query("LISTEN \(channel)")
    return db
}

/// The row's final outcome from its signal. NOTIFY is not durable: after a reconnection,
/// signals sent while no one listened are lost, so the row itself is read again (LISTEN first,
/// then read: nothing falls between).
func outcome(of id: String, url: String, listener: Connection, timeout: Double) -> Signal? {
    let deadline = Date().addingTimeInterval(timeout)
    var listener: Connection? = listener
    while Date() < deadline {
        do {
            if listener == nil {
                listener = try listen(url)
                let row = try listener?.query("""
                    SELECT json_build_object('id', id, 'status', status, 'last_status', last_status, 'last_reason', last_reason)
                      FROM pushq.notifications WHERE id = $1 AND status = ANY($2::text[])
                    """, [id, final]).first?[0] ?? nil
                if let row { return try JSONDecoder().decode(Signal.self, from: Data(row.utf8)) }
            }
            for n in try listener?.notifications(within: max(0.1, deadline.timeIntervalSinceNow)) ?? [] {
                let signal = try JSONDecoder().decode(Signal.self, from: Data(n.payload.utf8))
                if String(signal.id) == id {
                    print("signal on \(n.channel): \(n.payload)")
                    return signal
                }
            }
        } catch {
            FileHandle.standardError.write(Data("listener failed (\(error)); reconnecting\n".utf8))
            listener = nil
            Thread.sleep(forTimeInterval: 1)
        }
    }
    return nil
}

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: listen.swift DEVICE_TOKEN\n".utf8))
    exit(2)
}
let token = CommandLine.arguments[1]
let url = ProcessInfo.processInfo.environment["PUSHQ_DATABASE_URL"] ?? ""
let key = "order-1042-shipped:" + token.prefix(16)
do {
    let listener = try listen(url)  // before the INSERT: its signal cannot come before anyone listens
    let db = try Connection(url)
    guard let id = try enqueue(db, token: token, key: key) else { throw Failure(description: "a row with key \(key) exists already") }
    print("notification \(id): enqueued with key \(key)")
    if try enqueue(db, token: token, key: key) == nil { print("retried INSERT: nothing enqueued, the key exists") }
    guard let signal = outcome(of: id, url: url, listener: listener, timeout: 60) else {
        print("notification \(id): no outcome within 60 s")
        exit(1)
    }
    print("notification \(id): \(signal.status) (HTTP \(signal.last_status.map(String.init) ?? "None")) \(signal.last_reason ?? "")"
        .trimmingCharacters(in: .whitespaces))
    exit(signal.status == "sent" ? 0 : 1)
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}
