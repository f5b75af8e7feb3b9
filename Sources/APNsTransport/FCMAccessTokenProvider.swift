import Foundation
import Logging
import PushCore
import Synchronization

/// The OAuth 2.0 access tokens of one FCM service account: cached, refreshed a few minutes
/// before they expire, one refresh at a time, and dropped once after a 401.
///
/// The decisions are ``FCMAccessTokenCache``'s (pure, in PushCore); this type does the I/O.
/// Each refresh signs an assertion and runs the blocking libcurl exchange on a `Thread` of
/// its own, never on Swift's cooperative pool; callers that need the new token suspend
/// until that thread resumes them. A refresh started ahead of expiry runs while callers
/// keep using the current token.
///
/// Share one provider between everything sending with the same service account.
/// Time comes from the injected `clock` (UNIX seconds). Neither the key, the assertions
/// nor the access tokens are ever logged or put in errors.
public final class FCMAccessTokenProvider: Sendable {
    /// The account whose tokens this provider gets.
    public let account: FCMServiceAccount
    private let exchange: FCMTokenExchange
    private let clock: @Sendable () -> Int64
    private let logger: Logger
    private let state: Mutex<State>

    private struct State {
        var cache: FCMAccessTokenCache
        var waiters: [CheckedContinuation<FCMAccessToken, any Error>] = []
        /// The error of the last failed refresh, reported while the cache says ``FCMAccessTokenCache/Decision/failed``.
        var lastError: FCMTransportError?
        var exchanges = 0
    }

    /// - Parameters:
    ///   - account: the service account (``FCMServiceAccount/init(file:)``).
    ///   - configuration: CA and deadlines of the exchange.
    ///   - cache: refresh margins; defaults to ``FCMAccessTokenCache/init(refreshMargin:minimumValidity:retryAfterFailure:)``'s.
    ///   - logger: refreshes are logged at `info`, failures at `error`; never a secret.
    ///   - clock: UNIX seconds; defaults to the wall clock.
    /// - Throws: ``FCMTransportError`` `.configuration` or `.curlSetup`.
    public init(account: FCMServiceAccount, configuration: FCMTokenExchangeConfiguration = FCMTokenExchangeConfiguration(),
                cache: FCMAccessTokenCache = FCMAccessTokenCache(), logger: Logger,
                clock: @escaping @Sendable () -> Int64 = ProviderTokenManager.systemClock) throws(FCMTransportError) {
        self.account = account
        self.exchange = try FCMTokenExchange(url: account.tokenURI, configuration: configuration)
        self.clock = clock
        var logger = logger
        logger[metadataKey: "fcm.account"] = "\(account.clientEmail)"
        self.logger = logger
        self.state = Mutex(State(cache: cache))
    }

    /// A token to send with now: the cached one, or a new one after waiting for the exchange.
    ///
    /// - Throws: ``FCMTransportError`` from the last refresh (`.tokenRefused` with a message
    ///   saying what to fix, `.tokenEndpointUnreachable`, `.signingFailed`) when there is no
    ///   usable token; a failed refresh is retried after the cache's `retryAfterFailure`.
    public func accessToken() async throws -> FCMAccessToken {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<FCMAccessToken, any Error>) in
            let now = clock()
            enum Next { case resume(FCMAccessToken), fail(FCMTransportError), waiting }
            let (next, startRefresh) = state.withLock { s -> (Next, Bool) in
                switch s.cache.next(now: now) {
                case .use(let token): return (.resume(token), false)
                case .useAndRefresh(let token): return (.resume(token), true)
                case .refresh: s.waiters.append(continuation); return (.waiting, true)
                case .wait: s.waiters.append(continuation); return (.waiting, false)
                case .failed:
                    return (.fail(s.lastError ?? FCMTransportError(.tokenEndpointUnreachable, "the last FCM token exchange failed")), false)
                }
            }
            if startRefresh { startRefreshThread() }
            switch next {
            case .resume(let token): continuation.resume(returning: token)
            case .fail(let error): continuation.resume(throwing: error)
            case .waiting: break
            }
        }
    }

    /// After FCM answered 401 UNAUTHENTICATED to a request sent with `token`: drops it once
    /// (the next ``accessToken()`` refreshes), or does nothing if it was replaced already.
    ///
    /// - Returns: what the cache did; ``FCMAccessTokenCache/Invalidation/rejectedAgain``
    ///   means a token fetched after a 401 was refused too: pause the credential.
    @discardableResult
    public func invalidate(_ token: FCMAccessToken) -> FCMAccessTokenCache.Invalidation {
        let result = state.withLock { $0.cache.invalidate(token) }
        if result != .alreadyReplaced {
            logger.info("FCM access token refused (401); fetching a new one", metadata: ["fcm.token.serial": "\(token.serial)"])
        }
        return result
    }

    /// How many exchanges were started (successful or not).
    public var exchangeCount: Int { state.withLock { $0.exchanges } }

    private func startRefreshThread() {
        state.withLock { $0.exchanges += 1 }
        let thread = Thread { [self] in
            let started = clock()
            let result: Result<(value: String, expiresIn: Int64), FCMTransportError>
            do throws(FCMTransportError) {
                let assertion = try account.assertion(now: started)
                result = .success(try exchange.run(assertion: assertion))
            } catch {
                result = .failure(error)
            }
            finishRefresh(result, startedAt: started)
        }
        thread.name = "pushq-fcm-oauth"
        thread.start()
    }

    private func finishRefresh(_ result: Result<(value: String, expiresIn: Int64), FCMTransportError>, startedAt: Int64) {
        let (waiters, outcome) = state.withLock { s -> ([CheckedContinuation<FCMAccessToken, any Error>], Result<FCMAccessToken, FCMTransportError>) in
            let outcome: Result<FCMAccessToken, FCMTransportError>
            switch result {
            case .success(let granted):
                // Expiry counts from when the request left: the token cannot outlive that.
                outcome = .success(s.cache.refreshed(value: granted.value, expiresIn: granted.expiresIn, now: startedAt))
                s.lastError = nil
            case .failure(let error):
                s.cache.refreshFailed(now: clock())
                s.lastError = error
                outcome = .failure(error)
            }
            let waiters = s.waiters
            s.waiters = []
            return (waiters, outcome)
        }
        switch outcome {
        case .success(let token):
            logger.info("FCM access token granted", metadata: ["fcm.token.serial": "\(token.serial)", "fcm.token.expires_at": "\(token.expiresAt)"])
            for waiter in waiters { waiter.resume(returning: token) }
        case .failure(let error):
            logger.error("FCM token exchange failed", metadata: ["error": "\(error)"])
            for waiter in waiters { waiter.resume(throwing: error) }
        }
    }
}
