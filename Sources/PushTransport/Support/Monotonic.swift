#if canImport(Glibc)
import Glibc
#endif

/// Nanoseconds on the monotonic clock (for deadlines, idle times and staggering), the clock
/// of `PushRequest.startDeadline`.
public func monotonicNanoseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}
