import ArgumentParser
import Foundation
import PushTransport

/// `pushq webpush-key FILE`: the `applicationServerKey` of a VAPID key, which a web page passes to
/// `PushManager.subscribe`; `--generate` makes the key first.
struct WebPushKey: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webpush-key",
        abstract: "Print a VAPID key's applicationServerKey for the web front end (--generate makes the key).",
        discussion: """
            Prints the base64url (no padding) of the key's uncompressed P-256 public point, 87 characters: \
            the applicationServerKey of PushManager.subscribe. Subscriptions made with it can only be sent \
            to with this key, so keep the file (PUSHQ_WEBPUSH_VAPID_KEY_FILE) as long as they live. \
            With --generate, a new key is written to FILE first (PKCS#8 PEM, readable by its owner only; \
            an existing FILE is refused, never replaced). The private key is never printed. \
            docs/webpush.md has the whole setup.
            """
    )

    @Argument(help: "The VAPID key file: a P-256 private key, PEM (PKCS#8 or SEC1).")
    var file: String
    @Flag(help: "Write a new P-256 key to FILE (mode 0600) first; refuses a FILE that exists.")
    var generate = false

    func run() throws {
        print(try Self.applicationServerKey(file: file, generate: generate))
    }

    /// The `applicationServerKey` of the key in `file`, after writing a new key there when `generate`.
    ///
    /// - Throws: ``CommandFailure`` naming the file: it cannot be read or is not a P-256 key, or
    ///   (`generate`) it exists already or cannot be written.
    static func applicationServerKey(file: String, generate: Bool) throws -> String {
        if generate { try write(try VAPIDKey.generatePEM(), toNew: file) }
        do {
            return try VAPIDKey(file: file).applicationServerKey
        } catch {
            throw CommandFailure("\(error)")
        }
    }

    /// Writes `bytes` to `path`, which must not exist, readable and writable by its owner only.
    private static func write(_ bytes: [UInt8], toNew path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let why = errno == EEXIST ? "it exists already (a new key would orphan the subscriptions made with it); choose another path"
                                      : String(cString: strerror(errno))
            throw CommandFailure("cannot write a new VAPID key to \(path): \(why)")
        }
        defer { close(fd) }
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { Foundation.write(fd, $0.baseAddress, $0.count) }
            guard n > 0 else {
                let why = String(cString: strerror(errno))
                unlink(path)
                throw CommandFailure("cannot write a new VAPID key to \(path): \(why)")
            }
            written += n
        }
        guard fsync(fd) == 0 else {
            let why = String(cString: strerror(errno))
            unlink(path)
            throw CommandFailure("cannot write a new VAPID key to \(path): \(why)")
        }
    }
}
