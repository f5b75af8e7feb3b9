/// A provider that stalls: answers held until the test releases them.
extension MockPushServer {
    /// Holds every answer decided from now on (requests are still received, validated and
    /// recorded): a provider that stops answering, with no timing involved. Requests wait on
    /// their streams until ``releaseAnswers()`` (or the client's own timeout).
    public func holdAnswers() {
        core.heldAnswers.hold()
    }

    /// Stops holding answers and sends every answer held, in the order they were decided.
    public func releaseAnswers() {
        core.heldAnswers.release()
    }

    /// When the last answer held was written after ``releaseAnswers()`` (``MockClock/monotonicNanoseconds()``),
    /// 0 before any. Until then the event loops were busy writing them, and requests that
    /// arrived meanwhile were read, and stamped, late: a test of request rates reads how long.
    public var lastHeldAnswerWrittenNanoseconds: Int64 { core.heldAnswers.lastWrittenNanoseconds }

    /// How many answers are held now.
    public var heldAnswerCount: Int { core.heldAnswers.count }
}
