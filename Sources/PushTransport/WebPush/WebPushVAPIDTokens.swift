import PushCore
import Synchronization

/// The `Authorization: vapid t=…, k=…` values of one Web Push credential: one JWT per origin
/// (`aud`), signed once and reused by every connection thread until shortly before it expires
/// (``VAPIDClaims/needsReplacing(issuedAt:expiresAt:now:margin:)``). A signature costs ~26 µs;
/// a message to an origin already signed for costs a dictionary look-up under a lock.
final class WebPushVAPIDTokens: Sendable {
    private struct Entry {
        var value: String
        var issuedAt: Int64
        var expiresAt: Int64
    }

    let credential: WebPushCredential
    /// UNIX seconds, injected so that tests see a renewal without waiting.
    private let clock: @Sendable () -> Int64
    private let cache = Mutex<[WebPushOrigin: Entry]>([:])
    /// Tokens signed so far (for tests and metrics).
    private let signed = Atomic<Int>(0)

    init(credential: WebPushCredential, clock: @escaping @Sendable () -> Int64) {
        self.credential = credential
        self.clock = clock
    }

    /// The header value for `origin` now: the cached token, or a new one signed here (on the
    /// calling connection thread; two threads may both sign once, the later one is kept).
    ///
    /// - Throws: ``PushTransportError`` when OpenSSL cannot sign.
    func authorization(for origin: WebPushOrigin) throws -> String {
        let now = clock()
        if let entry = cache.withLock({ $0[origin] }),
           !VAPIDClaims.needsReplacing(issuedAt: entry.issuedAt, expiresAt: entry.expiresAt, now: now) {
            return entry.value
        }
        let claims = VAPIDClaims(audience: origin, subject: credential.subject, issuedAt: now)
        let value = try credential.key.authorization(claims)
        signed.add(1, ordering: .relaxed)
        cache.withLock { $0[origin] = Entry(value: value, issuedAt: now, expiresAt: claims.expiresAt) }
        return value
    }

    /// Tokens signed since start.
    var signedCount: Int { signed.load(ordering: .relaxed) }
}
