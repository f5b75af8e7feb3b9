/// Failed logins, counted per client over a sliding window: after ``limit`` failures within
/// ``windowSeconds`` a client is refused (HTTP 429) until the oldest of them leaves the window.
/// A failed login is a form with a wrong key or a request with a wrong bearer key. Pure: the
/// caller passes the time and keeps the value (serve: one per process, under a lock).
///
/// At most ``maxClients`` clients are remembered; beyond that the one whose last failure is
/// oldest is forgotten, so a flood of addresses cannot grow it without bound.
public struct LoginThrottle: Sendable {
    /// Failures allowed per client within the window. Defaults to 10.
    public var limit: Int
    /// The window, in seconds. Defaults to 60.
    public var windowSeconds: Double
    /// Clients remembered. Defaults to 10 000.
    public var maxClients: Int
    private var failures: [String: [Double]] = [:]

    public init(limit: Int = 10, windowSeconds: Double = 60, maxClients: Int = 10_000) {
        self.limit = limit
        self.windowSeconds = windowSeconds
        self.maxClients = maxClients
    }

    /// Seconds until `client` may try again, or nil when it may now.
    public mutating func retryAfter(client: String, now: Double) -> Double? {
        guard var times = failures[client] else { return nil }
        times.removeAll { $0 <= now - windowSeconds }
        failures[client] = times.isEmpty ? nil : times
        guard times.count >= limit, let oldest = times.first else { return nil }
        return max(0, oldest + windowSeconds - now)
    }

    /// Counts a failed login of `client` at `now`.
    public mutating func recordFailure(client: String, now: Double) {
        if failures[client] == nil, failures.count >= maxClients,
           let stalest = failures.min(by: { ($0.value.last ?? 0) < ($1.value.last ?? 0) })?.key {
            failures[stalest] = nil
        }
        var times = failures[client, default: []]
        times.removeAll { $0 <= now - windowSeconds }
        times.append(now)
        if times.count > limit { times.removeFirst(times.count - limit) }
        failures[client] = times
    }
}
