import Hummingbird
import PushStore
import PGClient

/// A dashboard read stopped by the dashboard's statement timeout
/// (``ServeConfiguration/dashboardQueryTimeout``): its page says so instead of failing.
struct DashboardCut: Error, Sendable {
    /// The timeout that stopped it.
    var after: Duration
}

extension ServeServices {
    /// Runs a dashboard read on the dashboard's own pool (never an API slot); a statement
    /// stopped by its timeout (SQLSTATE 57014) becomes ``DashboardCut``.
    ///
    /// - Throws: ``DashboardCut``, ``DatabaseBusy``, or what `body` throws.
    func dashboardRead<T: Sendable>(_ body: (PGConnection) async throws -> T) async throws -> T {
        do {
            return try await dashboardPool.withConnection(body)
        } catch let error as PGError where error.sqlState == "57014" {
            throw DashboardCut(after: dashboardPool.limits.statementTimeout)
        }
    }
}

extension DashboardPage {
    /// The page of a search (or list) stopped by the dashboard's statement timeout.
    func stopped(_ cut: DashboardCut) -> HTML {
        let seconds = DashboardPage.seconds(cut.after)
        return layout.page(title: "Search stopped", """
            <p class="error">The search was stopped after \(seconds) s: narrow it (a whole token, a user, a rarer \
            metadata value, the last hour).</p>
            """)
    }

    /// The page shown when every dashboard connection stayed busy while the request waited.
    func busy() -> HTML {
        layout.page(title: "Busy", "<p class=\"error\">The dashboard's database connections are all busy: try again in a moment.</p>")
    }

    /// `5`, `0.5`: a duration in seconds as the page writes it.
    static func seconds(_ duration: Duration) -> String {
        let (whole, atto) = duration.components
        guard atto != 0 else { return String(whole) }
        let value = Double(whole) + Double(atto) / 1e18
        return String((value * 1000).rounded() / 1000)
    }
}
