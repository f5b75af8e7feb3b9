/// Operations shared by the in-process API (`MockPushServer`) and the control endpoints.
extension MockCore {
    func setRule(forToken token: String, _ rule: MockTokenRule?) {
        state.withLock { s in
            s.rules[token.lowercased()] = rule.map { MockRuleProgress(rule: $0) }
        }
    }

    func setFailureRate(_ rate: MockFailureRate?) {
        state.withLock { $0.setFailureRate(rate) }
    }

    func setFaults(_ faults: MockConnectionFaults) {
        state.withLock { s in
            s.faults = faults
            faultsChanged(faults)
        }
    }

    func setAnswerAll(_ answer: MockAnswer?) {
        state.withLock { $0.answerAll = answer }
    }

    func stats() -> MockPushStats {
        state.withLock { $0.stats }
    }

    func requests() -> [MockRecordedRequest] {
        state.withLock { $0.records }
    }

    func reset() {
        updateStats { s in
            s.reset(configuration: configuration)
            faultsChanged(s.faults)
        }
    }
}

/// FCM operations shared by the in-process API and the control endpoints.
extension MockCore {
    func setFCMRule(forToken token: String, _ rule: MockFCMTokenRule?) {
        state.withLock { s in s.fcm.rules[token] = rule.map { MockRuleProgress(rule: $0) } }
    }

    func fcmRequests() -> [MockFCMRecordedRequest] {
        state.withLock { $0.fcm.records }
    }

    func setFCMAccessTokenLifetime(seconds: Int64) {
        state.withLock { $0.fcm.lifetimeSeconds = seconds }
    }

    func expireFCMAccessTokens() {
        let now = self.now()
        state.withLock { $0.fcm.expireAll(now: now) }
    }
}
