extension Decider {
    /// Whether an FCM credential's recent answers show its project's quota used up rather than
    /// one device's rate: ``quotaTokensToHold`` or more different tokens got a 429, and they are
    /// more than half of the tokens last answered.
    func projectQuota(_ quota: BurstDetector) -> Bool {
        quota.suspectCount >= quotaTokensToHold && quota.isBurst
    }
}

extension Answer {
    /// The key the quota detector remembers this answer under: its device token's (FNV-1a,
    /// 64 bits), so that one device's many rows take one place; the row's id without a token.
    var tokenKey: Int64 {
        guard let deviceToken else { return row }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in deviceToken.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        return Int64(bitPattern: hash)
    }
}

extension Outcome {
    /// Whether this is FCM's 429, for the project or for one token.
    var isQuotaAnswer: Bool {
        switch self {
        case .fcm(.backOffCredential), .fcm(.throttleToken): return true
        default: return false
        }
    }
}
