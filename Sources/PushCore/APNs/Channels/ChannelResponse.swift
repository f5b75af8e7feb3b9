/// What became of one ``ChannelOperation``: APNs' answer, or why none came, and what to do next.
public struct ChannelResponse: Sendable, Hashable {
    /// The request this answers.
    public var operation: ChannelOperation
    /// The answer, nil if none came.
    public var answer: ChannelAnswer?
    /// Why no answer came.
    public var transportFailure: TransportFailure?

    public init(operation: ChannelOperation, answer: ChannelAnswer? = nil, transportFailure: TransportFailure? = nil) {
        self.operation = operation
        self.answer = answer
        self.transportFailure = transportFailure
    }

    /// What to do next: ``ChannelOutcome/classify(_:operation:)`` of the answer, else of the
    /// transport failure.
    public var outcome: ChannelOutcome {
        if let answer { return ChannelOutcome.classify(answer, operation: operation) }
        return ChannelOutcome.classify(transportFailure ?? TransportFailure(kind: .other, message: "no answer"))
    }

    /// The created channel's id: the answer's `apns-channel-id` after a successful create, else nil.
    public var createdChannelID: String? {
        guard case .create = operation, outcome == .done else { return nil }
        return answer?.channelID
    }
}
