/// Broadcast channels: operations shared by the in-process API and the control endpoints.
extension MockCore {
    func channels(bundleID: String?) -> [MockChannel] {
        state.withLock { $0.channels.list(bundleID: bundleID) }
    }

    func createChannel(bundleID: String, storagePolicy: Int) -> MockChannel? {
        state.withLock { $0.channels.create(bundleID: bundleID, storagePolicy: storagePolicy) }
    }

    func deleteChannel(id: String) -> Bool {
        state.withLock { $0.channels.delete(id: id) }
    }

    func failNextChannelRequest(with answer: MockAnswer?) {
        state.withLock { $0.channelFault = answer }
    }

    func loseNextChannelCreateAnswer(_ kind: MockAnswer.Kind) {
        state.withLock { $0.channelCreateAnswerLost = kind }
    }

    func setChannelLatency(milliseconds: Int) {
        state.withLock { $0.channelLatencyMilliseconds = max(milliseconds, 0) }
    }

    func channelRequests() -> [MockRecordedRequest] {
        state.withLock { $0.channelRecords }
    }
}
