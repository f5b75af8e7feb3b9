/// A generator whose every draw of `Double.random(in: 0..<1, using:)` is `unit` (to the nearest
/// 2^-53; the standard library makes a `Double` of the low 53 bits of `next()`): the policies'
/// jitter pinned to one end of its span or the middle.
struct FixedUnit: RandomNumberGenerator, Sendable {
    let bits: UInt64

    /// - Parameter unit: the value each draw gives, in `0..<1`.
    init(_ unit: Double) {
        precondition(unit >= 0 && unit < 1)
        bits = UInt64((unit * 0x1p53).rounded())
    }

    mutating func next() -> UInt64 { bits }
}

/// A seeded generator (SplitMix64): the same seed, the same draws.
struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
