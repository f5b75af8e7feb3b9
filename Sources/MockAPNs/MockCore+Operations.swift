/// Operations shared by the in-process API (`MockAPNsServer`) and the control endpoints.
extension MockCore {
    func setRule(forToken token: String, _ rule: MockTokenRule?) {
        state.withLock { s in
            if let rule {
                s.rules[token.lowercased()] = MockSharedState.RuleProgress(rule: rule)
            } else {
                s.rules[token.lowercased()] = nil
            }
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

    func stats() -> MockAPNsStats {
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
