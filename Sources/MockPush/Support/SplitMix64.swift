/// A small seeded generator (SplitMix64): reproducible failure draws and cheap apns-ids.
struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A random version-4 UUID, lowercase canonical form (the form APNs uses for `apns-id`).
    mutating func uuidString() -> String {
        var high = next()
        var low = next()
        // Version 4 (byte 6 high nibble), variant 10 (byte 8 top bits).
        high = (high & ~(0xF0 << 8)) | (0x40 << 8)
        low = (low & ~(0xC0 << 56)) | (0x80 << 56)
        return String(unsafeUninitializedCapacity: 36) { out in
            let hex: StaticString = "0123456789abcdef"
            var o = 0
            for i in 0..<16 {
                if i == 4 || i == 6 || i == 8 || i == 10 {
                    out[o] = UInt8(ascii: "-")
                    o += 1
                }
                // Bytes 0...7 from `high`, most significant first; 8...15 from `low`.
                let word = i < 8 ? high : low
                let byte = UInt8(truncatingIfNeeded: word >> (UInt64(7 - (i & 7)) * 8))
                out[o] = hex.utf8Start[Int(byte >> 4)]
                out[o + 1] = hex.utf8Start[Int(byte & 0x0F)]
                o += 2
            }
            return o
        }
    }
}
