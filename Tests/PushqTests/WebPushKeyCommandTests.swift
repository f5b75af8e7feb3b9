import Foundation
import PushTransport
@testable import pushq
import Testing

/// A VAPID key made with `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256` (PKCS#8) and
/// `openssl ec` (the same key as SEC1), and its public point as OpenSSL itself prints it
/// (`openssl pkey -pubout -outform DER | tail -c 65`, base64url): an expectation computed outside pushq.
enum VAPIDFixture {
    static let pkcs8 = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgacRNPuq1hlsOMQB1
        xOsMOSuaJpayy4PAeQ6050SK3suhRANCAAQ4IC9Ki6G1D6aqvquMYsW3qUCM2SJ8
        2D3c3D0Gu9EFuKN45Je58vT4bVuqi46Jph19oEXC+VeuDir1NwW+HeLP
        -----END PRIVATE KEY-----

        """
    static let sec1 = """
        -----BEGIN EC PRIVATE KEY-----
        MHcCAQEEIGnETT7qtYZbDjEAdcTrDDkrmiaWssuDwHkOtOdEit7LoAoGCCqGSM49
        AwEHoUQDQgAEOCAvSouhtQ+mqr6rjGLFt6lAjNkifNg93Nw9BrvRBbijeOSXufL0
        +G1bqouOiaYdfaBFwvlXrg4q9TcFvh3izw==
        -----END EC PRIVATE KEY-----

        """
    static let applicationServerKey = "BDggL0qLobUPpqq-q4xixbepQIzZInzYPdzcPQa70QW4o3jkl7ny9PhtW6qLjommHX2gRcL5V64OKvU3Bb4d4s8"

    /// A path in a fresh temporary folder (not created), removed with the folder by `cleanup`.
    static func path(_ name: String) throws -> (path: String, cleanup: () -> Void) {
        let dir = NSTemporaryDirectory() + "pushq-webpush-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return (dir + "/" + name, { try? FileManager.default.removeItem(atPath: dir) })
    }

    /// `text` written to a new temporary file.
    static func file(_ text: String, name: String = "vapid.pem") throws -> (path: String, cleanup: () -> Void) {
        let f = try path(name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: f.path))
        return f
    }
}

/// `pushq webpush-key FILE [--generate]` (issue 47): the applicationServerKey a web page subscribes with.
@Suite("pushq webpush-key")
struct WebPushKeyCommandTests {
    @Test("prints the base64url public point of a PKCS#8 and of a SEC1 key, as OpenSSL computes it", arguments: ["pkcs8", "sec1"])
    func prints(form: String) throws {
        let f = try VAPIDFixture.file(form == "pkcs8" ? VAPIDFixture.pkcs8 : VAPIDFixture.sec1)
        defer { f.cleanup() }
        let command = try WebPushKey.parse([f.path])
        #expect(!command.generate)
        #expect(try WebPushKey.applicationServerKey(file: command.file, generate: false) == VAPIDFixture.applicationServerKey)
    }

    /// The file is new, PKCS#8 PEM, mode 0600; what is printed is its key's public point (65 bytes, 0x04 first, 87
    /// characters of base64url); a second run makes another key.
    @Test("--generate writes a new P-256 key readable by its owner only and prints its applicationServerKey")
    func generates() throws {
        let f = try VAPIDFixture.path("new.pem")
        defer { f.cleanup() }
        let command = try WebPushKey.parse(["--generate", f.path])
        #expect(command.generate)
        let printed = try WebPushKey.applicationServerKey(file: f.path, generate: true)
        let attributes = try FileManager.default.attributesOfItem(atPath: f.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let pem = try String(contentsOfFile: f.path, encoding: .utf8)
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        #expect(printed == (try VAPIDKey(file: f.path)).applicationServerKey)
        #expect(printed.count == 87 && !printed.contains("=") && !printed.contains("+") && !printed.contains("/"))
        var base64 = printed.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += "="
        let point = try #require(Data(base64Encoded: base64))
        #expect(point.count == 65 && point.first == 0x04)

        let other = try VAPIDFixture.path("other.pem")
        defer { other.cleanup() }
        #expect(try WebPushKey.applicationServerKey(file: other.path, generate: true) != printed)
    }

    @Test("--generate refuses a file that exists and leaves it as it was")
    func refusesExisting() throws {
        let f = try VAPIDFixture.file(VAPIDFixture.pkcs8)
        defer { f.cleanup() }
        let error = #expect(throws: CommandFailure.self) { try WebPushKey.applicationServerKey(file: f.path, generate: true) }
        #expect(error?.description.contains("\(f.path): it exists already") == true, "\(error?.description ?? "no error")")
        #expect(try String(contentsOfFile: f.path, encoding: .utf8) == VAPIDFixture.pkcs8)
    }

    /// A missing file, a file that is no key, and a key on another curve: each names the file, never its bytes.
    @Test("a file that is not a P-256 key is refused, naming the file and never its content", arguments: ["missing", "text", "p384"])
    func refusesNonKeys(kind: String) throws {
        let p384 = """
            -----BEGIN PRIVATE KEY-----
            MIG2AgEAMBAGByqGSM49AgEGBSuBBAAiBIGeMIGbAgEBBDAAKgDzhsFhAgVHFDYL
            L+0OpGYtaDDzScd9iIfEXNipnCFIrca+zMqZ7fKfrvK76ROhZANiAASdxQpVkRkz
            R+oP7mU57Eq2bbemENgrmegTqW32KXVRGoXKV5D5/o26Fw8PEXCptpaf11/AlIP0
            3Pf2LYKheSIaw0RktxxtUa7wrZwIKqgsXnsODlGhvsgQI4AizqS1g+M=
            -----END PRIVATE KEY-----

            """
        let f = try VAPIDFixture.file(kind == "text" ? "not a key at all: SECRET-BYTES\n" : p384)
        defer { f.cleanup() }
        let path = kind == "missing" ? f.path + ".absent" : f.path
        let error = #expect(throws: CommandFailure.self) { try WebPushKey.applicationServerKey(file: path, generate: false) }
        #expect(error?.description.contains(path) == true, "\(error?.description ?? "no error")")
        #expect(error?.description.contains("SECRET-BYTES") == false)
        #expect(error?.description.contains("MIG2") == false)
    }
}
