import PushCore
@testable import pushq
import Testing

/// `PUSHQ_HTTP_TRUSTED_PROXIES` / `--http-trusted-proxies` into serve's configuration.
@Suite("Settings: trusted proxies")
struct TrustedProxiesSettingTests {
    static let database = ["PUSHQ_DATABASE_URL": "postgresql://127.0.0.1:1/pushq"]

    @Test("networks from the variable or the flag; unset trusts none; a bad entry is refused naming the setting and the entry")
    func trustedProxies() throws {
        #expect(try Settings(environment: Self.database).serveConfiguration().trustedProxies == .none)
        let fromVariable = try Settings(environment: Self.database.merging(["PUSHQ_HTTP_TRUSTED_PROXIES": "10.0.0.0/8, fd00::/8"]) { $1 })
            .serveConfiguration()
        #expect(fromVariable.trustedProxies.networks.map(\.description) == ["10.0.0.0/8", "fd00:0:0:0:0:0:0:0/8"])
        let fromFlag = try Settings(environment: Self.database, flags: [.httpTrustedProxies: "192.168.0.0/16"]).serveConfiguration()
        #expect(fromFlag.trustedProxies.networks.map(\.description) == ["192.168.0.0/16"])
        for (environment, flags, setting) in [(["PUSHQ_HTTP_TRUSTED_PROXIES": "10.0.0.0/8, 10.0.0.300/8"], [SettingKey: String?](), "PUSHQ_HTTP_TRUSTED_PROXIES"),
                                              ([:], [.httpTrustedProxies: "10.0.0.300/8"], "--http-trusted-proxies")] {
            let error = #expect(throws: SettingError.self) {
                try Settings(environment: Self.database.merging(environment) { $1 }, flags: flags).serveConfiguration()
            }
            #expect(error?.setting == setting && error?.description.contains("\"10.0.0.300/8\"") == true, "\(error?.description ?? "")")
        }
    }
}
