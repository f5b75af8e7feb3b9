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

    /// How many answers are held now.
    public var heldAnswerCount: Int { core.heldAnswers.count }
}
