import PushStore
import PGClient

extension PGConnection {
    /// Runs `body`, then closes the connection (awaited, whether `body` returned or threw),
    /// so a command's last query is finished and the connection closed before it exits.
    /// Nonisolated: `body` runs on the caller's side and each call to the connection is awaited.
    nonisolated func closing<T>(_ body: (PGConnection) async throws -> T) async throws -> T {
        let value: T
        do {
            value = try await body(self)
        } catch {
            await close()
            throw error
        }
        await close()
        return value
    }
}
