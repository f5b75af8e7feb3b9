import Foundation
@testable import PushStore
import Testing
import PGClient

/// The libpq options that bound connecting and a vanished peer (`PGConnectDefaults`).
@Suite("Connection defaults")
struct ConnectDefaultsTests {
    @Test("connections get connect_timeout, keepalives and tcp_user_timeout, on the socket too")
    func defaultsInForce() async throws {
        try await TestDatabase.withConnection { c in
            let options = await c.connectionOptions
            for (keyword, value) in PGConnectDefaults.options {
                #expect(options[keyword] == value, "\(keyword)")
            }
            let timeouts = try await SocketTimeouts(c)
            #expect(timeouts == SocketTimeouts.defaults)
        }
    }

    @Test("a setting in the URI or in a key=value string wins over the default")
    func urlValuesWin() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let uri = try await PGConnection.connect(url + (url.contains("?") ? "&" : "?") + "connect_timeout=3&keepalives_idle=45&tcp_user_timeout=5000",
                                                     logger: TestDatabase.logger)
            let options = await uri.connectionOptions
            #expect(options["connect_timeout"] == "3")
            #expect(options["keepalives_idle"] == "45")
            #expect(options["tcp_user_timeout"] == "5000")
            #expect(options["keepalives_interval"] == "10")
            #expect(try await SocketTimeouts(uri) == SocketTimeouts(keepalive: 1, idle: 45, interval: 10, count: 3, userTimeout: 5000))

            let keyValue = "host=\(options["host"] ?? "") port=\(options["port"] ?? "") user=\(options["user"] ?? "") "
                + "dbname=\(options["dbname"] ?? "") keepalives_count=7"
            await uri.close()
            let conninfo = try await PGConnection.connect(keyValue, logger: TestDatabase.logger)
            #expect(await conninfo.connectionOptions["keepalives_count"] == "7")
            #expect(await conninfo.connectionOptions["connect_timeout"] == "10")
            #expect(try await SocketTimeouts(conninfo).count == 7)
            await conninfo.close()
        }
    }

    @Test("a default whose libpq environment variable is set is left to it")
    func environmentVariableWins() {
        #expect(PGConnectDefaults.environmentVariables["connect_timeout"] == "PGCONNECT_TIMEOUT")
        let withVariable = PGConnectDefaults.parameters(url: "postgresql://h/db", environment: ["PGCONNECT_TIMEOUT": "4"])
        #expect(withVariable.map(\.keyword) == ["keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count",
                                                "tcp_user_timeout", "target_session_attrs", "dbname"])
        let without = PGConnectDefaults.parameters(url: "postgresql://h/db", environment: [:])
        #expect(without.map(\.keyword) == PGConnectDefaults.options.map(\.keyword) + ["dbname"])
        #expect(without.last?.value == "postgresql://h/db")
    }

    @Test("connecting to a server that accepts but never answers fails within connect_timeout", .timeLimit(.minutes(1)))
    func silentServer() async throws {
        let silent = try TCPProxy(forwardingTo: nil)
        defer { silent.stop() }
        let start = ContinuousClock.now
        let error = await #expect(throws: PGError.self) {
            _ = try await PGConnection.connect("postgresql://postgres:s3cretpw@127.0.0.1:\(silent.port)/pushq?connect_timeout=2",
                                               logger: TestDatabase.logger)
        }
        let elapsed = ContinuousClock.now - start
        #expect(error?.code == .connectionFailed)
        #expect(error?.message.contains("timeout expired") == true, "\(String(describing: error))")
        #expect(error?.description.contains("s3cretpw") == false)
        #expect(silent.acceptedCount == 1)
        // libpq counts whole seconds: 2 s may last up to 3.
        #expect(elapsed >= .seconds(1) && elapsed < .seconds(5), "took \(elapsed)")
    }
}

/// The kernel's keepalive and user-timeout settings of a connection's socket.
struct SocketTimeouts: Equatable {
    var keepalive: Int32
    var idle: Int32
    var interval: Int32
    var count: Int32
    var userTimeout: Int32

    /// What `PGConnectDefaults` asks for.
    static let defaults = SocketTimeouts(keepalive: 1, idle: 30, interval: 10, count: 3, userTimeout: 30_000)

    init(keepalive: Int32, idle: Int32, interval: Int32, count: Int32, userTimeout: Int32) {
        (self.keepalive, self.idle, self.interval, self.count, self.userTimeout) = (keepalive, idle, interval, count, userTimeout)
    }

    init(_ connection: PGConnection) async throws {
        let fd = await connection.socketDescriptor
        func option(_ level: Int32, _ name: Int32) throws -> Int32 {
            var value: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(fd, level, name, &value, &length) == 0 else {
                throw TestSetupError("getsockopt(\(name)) failed: \(String(cString: strerror(errno)))")
            }
            return value
        }
        let tcp = Int32(IPPROTO_TCP)
        self.init(keepalive: try option(SOL_SOCKET, SO_KEEPALIVE), idle: try option(tcp, TCP_KEEPIDLE),
                  interval: try option(tcp, TCP_KEEPINTVL), count: try option(tcp, TCP_KEEPCNT),
                  userTimeout: try option(tcp, TCP_USER_TIMEOUT))
    }
}
