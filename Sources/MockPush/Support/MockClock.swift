#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Clocks the mock reads: wall seconds (default JWT clock) and nanosecond stamps for records.
public enum MockClock {
    /// UNIX time in whole seconds.
    @Sendable public static func wallSeconds() -> Int64 {
        wallNanoseconds() / 1_000_000_000
    }

    /// UNIX time in nanoseconds (CLOCK_REALTIME).
    public static func wallNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    /// Monotonic nanoseconds (CLOCK_MONOTONIC), comparable with the sender's monotonic stamps.
    public static func monotonicNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}
