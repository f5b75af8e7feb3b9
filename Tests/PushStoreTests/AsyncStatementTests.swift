import Foundation
import PushStore
import Testing
import PGClient

/// What `PQexec` did and the send-and-poll loop must keep doing.
@Suite("Statements through libpq's asynchronous API")
struct AsyncStatementTests {
    @Test("a notification that arrives while the listener runs other statements is delivered")
    func notificationDuringStatement() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let listener = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let sender = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await listener.listen("busy")
            // The server holds a notification back while the listener is in a transaction and
            // sends it just before COMMIT's answer: it reaches libpq's queue during COMMIT.
            try await listener.execute("BEGIN")
            try await sender.query("SELECT pg_notify('busy', 'while in a transaction')")
            try await listener.execute("COMMIT")
            // Its own NOTIFY, in a string of several statements, arrives the same way.
            try await listener.execute("SELECT 1; NOTIFY busy, 'own'; SELECT 2")
            let received = try await listener.waitForNotifications(timeout: .seconds(5))
            #expect(received == [
                PGNotification(channel: "busy", payload: "while in a transaction", senderPID: await sender.backendPID),
                PGNotification(channel: "busy", payload: "own", senderPID: await listener.backendPID),
            ])
            await listener.close()
            await sender.close()
        }
    }

    @Test("execute runs every statement of a string, and an error in one rolls the whole string back")
    func severalStatements() async throws {
        try await TestDatabase.withConnection { c in
            try await c.execute("CREATE TABLE m (x int); INSERT INTO m VALUES (1), (2)")
            #expect(try await c.query("SELECT count(*) FROM m").decode(Int.self, 0, 0) == 2)
            let error = await #expect(throws: PGError.self) {
                try await c.execute("INSERT INTO m VALUES (3); INSERT INTO m VALUES (1 / 0); INSERT INTO m VALUES (4)")
            }
            #expect(error?.sqlState == "22012")
            // One string is one implicit transaction: the first INSERT was rolled back.
            #expect(try await c.query("SELECT count(*) FROM m").decode(Int.self, 0, 0) == 2)
        }
    }

    @Test("COPY is refused, and the next call works on a new session")
    func copyRefused() async throws {
        try await TestDatabase.withConnection { c in
            let pid = await c.backendPID
            let error = await #expect(throws: PGError.self) { try await c.execute("COPY (SELECT 1) TO STDOUT") }
            #expect(error?.code == .invalidValue)
            #expect(error?.message.contains("COPY") == true)
            let five = try await c.query("SELECT 5").decode(Int.self, 0, 0)
            #expect(five == 5)
            #expect(await c.backendPID != pid)
        }
    }
}
