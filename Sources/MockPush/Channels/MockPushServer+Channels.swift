/// Broadcast channels, for tests in the same process: what the channel-management API
/// (``MockPushServer/managementURL``) and broadcasts see.
extension MockPushServer {
    /// The channels of `bundleID` (of every app for nil), in creation order.
    public func channels(bundleID: String? = nil) -> [MockChannel] {
        core.channels(bundleID: bundleID)
    }

    /// Creates a channel as a `POST /1/apps/<bundle>/channels` would, without a request
    /// (e.g. one pushq never created, for a reconciliation test); nil when the app has
    /// Apple's 10 000 channels already.
    ///
    /// - Parameter storagePolicy: 0 (No Message Stored) or 1 (Most Recent Message Stored).
    @discardableResult
    public func createChannel(bundleID: String, storagePolicy: Int = 1) -> MockChannel? {
        core.createChannel(bundleID: bundleID, storagePolicy: storagePolicy)
    }

    /// Deletes a channel as a `DELETE` would; false when there was none.
    @discardableResult
    public func deleteChannel(id: String) -> Bool {
        core.deleteChannel(id: id)
    }

    /// Answers the next channel-management request with `answer` instead of carrying it out
    /// (e.g. `.status(500, reason: "InternalServerError")`, `.noAnswer`, `.reset`), once;
    /// nil cancels it.
    public func failNextChannelRequest(with answer: MockAnswer?) {
        core.failNextChannelRequest(with: answer)
    }

    /// Carries out the next create (`POST /1/apps/<bundle>/channels`) and then loses its answer:
    /// the channel exists, but the client gets no answer (`.noAnswer`: its deadline fires) or a
    /// reset stream (`.reset`), as when a connection drops after Apple acted; once. Other
    /// requests are not affected.
    public func loseNextChannelCreateAnswer(_ kind: MockAnswer.Kind = .reset) {
        core.loseNextChannelCreateAnswer(kind == .noAnswer ? .noAnswer : .reset)
    }

    /// Delays every answer of the channel-management API by `milliseconds` (0: at once), as a
    /// slow management host would: the request is carried out when it arrives, its answer goes
    /// out later.
    public func setChannelLatency(milliseconds: Int) {
        core.setChannelLatency(milliseconds: milliseconds)
    }

    /// The channel-management requests received, in order (empty when recording is off);
    /// counted in ``MockPushStats/channelRequests``, not in ``MockPushStats/requests``.
    public func channelRequests() -> [MockRecordedRequest] {
        core.channelRequests()
    }
}
