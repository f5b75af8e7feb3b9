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
        var waiters: [Waiter] = []
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
        logger[metadataKey: LogKey.account] = "\(account.clientEmail)"
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
            switch next(orWait: .task(continuation)) {
            case .success(let token?): continuation.resume(returning: token)
            case .failure(let error): continuation.resume(throwing: error)
            case .success(nil): break
            }
        }
    }

    /// ``accessToken()`` for a thread of the caller's own that may block (a `PushSender`
    /// connection thread), never Swift's cooperative pool: returns at once with a usable
    /// token, or blocks the calling thread until the refresh in progress (one at a time,
    /// shared with every other caller) ends.
    ///
    /// - Throws: ``FCMTransportError`` as ``accessToken()``.
    func accessTokenBlocking() throws(FCMTransportError) -> FCMAccessToken {
        let waiter = BlockingWaiter()
        switch next(orWait: .thread(waiter)) {
        case .success(let token?): return token
        case .failure(let error): throw error
        case .success(nil): return try waiter.wait().get()
        }
    }

    /// The cache's decision for a caller: a token, an error, or nil after registering
    /// `waiter` for the refresh (started here when the cache says so).
    private func next(orWait waiter: Waiter) -> Result<FCMAccessToken?, FCMTransportError> {
        let now = clock()
        let (result, startRefresh) = state.withLock { s -> (Result<FCMAccessToken?, FCMTransportError>, Bool) in
            switch s.cache.next(now: now) {
            case .use(let token): return (.success(token), false)
            case .useAndRefresh(let token): return (.success(token), true)
            case .refresh: s.waiters.append(waiter); return (.success(nil), true)
            case .wait: s.waiters.append(waiter); return (.success(nil), false)
            case .failed:
                return (.failure(s.lastError ?? FCMTransportError(.tokenEndpointUnreachable, "the last FCM token exchange failed")), false)
            }
        }
        if startRefresh { startRefreshThread() }
        return result
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
            logger.info("FCM access token refused (401); fetching a new one", metadata: [LogKey.tokenSerial: "\(token.serial)"])
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
        let (waiters, outcome) = state.withLock { s -> ([Waiter], Result<FCMAccessToken, FCMTransportError>) in
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
            logger.info("FCM access token granted", metadata: [LogKey.tokenSerial: "\(token.serial)", LogKey.tokenExpiresAt: "\(token.expiresAt)"])
        case .failure(let error):
            logger.error("FCM token exchange failed", metadata: ["error": "\(error)"])
        }
        for waiter in waiters { waiter.resume(outcome) }
    }

    /// A caller waiting for a refresh: a suspended task or a blocked thread.
    private enum Waiter: Sendable {
        case task(CheckedContinuation<FCMAccessToken, any Error>)
        case thread(BlockingWaiter)

        func resume(_ outcome: Result<FCMAccessToken, FCMTransportError>) {
            switch self {
            case .task(let continuation): continuation.resume(with: outcome.mapError { $0 as any Error })
            case .thread(let waiter): waiter.resume(outcome)
            }
        }
    }
}

/// A thread blocked in ``FCMAccessTokenProvider/accessTokenBlocking()`` until a refresh ends.
private final class BlockingWaiter: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let outcome = Mutex<Result<FCMAccessToken, FCMTransportError>?>(nil)

    func resume(_ result: Result<FCMAccessToken, FCMTransportError>) {
        outcome.withLock { $0 = result }
        semaphore.signal()
    }

    func wait() -> Result<FCMAccessToken, FCMTransportError> {
        semaphore.wait()
        return outcome.withLock { $0! }
    }
}
