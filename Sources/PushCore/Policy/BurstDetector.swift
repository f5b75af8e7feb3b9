/// Tells a wrong environment or topic from bad tokens: the share of burst-suspect answers
/// (`BadDeviceToken`, `DeviceTokenNotForTopic`) among an endpoint's most recent answers.
///
/// A few bad tokens are normal; more than half of the last ``minimumAnswers`` or more answers
/// means the tokens are being sent to the wrong place, and invalidating them would destroy
/// thousands of good tokens. Each notification counts once, with its latest answer, so a
/// row that is tried again cannot fill the window by itself. Pure: the ``Decider`` keeps
/// one per endpoint, and keeps it across pauses.
public struct BurstDetector: Sendable, Hashable {
    /// How many recent answers are remembered. Defaults to 32.
    public let capacity: Int
    /// Fewest answers seen before a burst can be declared. Defaults to 20.
    public let minimumAnswers: Int
    private var rows: [Int64] = []
    private var suspect: [Bool] = []
    private var next = 0
    private var suspects = 0

    public init(capacity: Int = 32, minimumAnswers: Int = 20) {
        precondition(capacity >= minimumAnswers && minimumAnswers >= 1)
        self.capacity = capacity
        self.minimumAnswers = minimumAnswers
    }

    /// Records the answer to notification `row` (transport failures are not answers). A row
    /// already remembered has its answer replaced instead of taking another place.
    public mutating func record(row: Int64, suspect isSuspect: Bool) {
        if let i = rows.firstIndex(of: row) {
            if suspect[i] != isSuspect { suspects += isSuspect ? 1 : -1 }
            suspect[i] = isSuspect
            return
        }
        if rows.count < capacity {
            rows.append(row)
            suspect.append(isSuspect)
        } else {
            if suspect[next] { suspects -= 1 }
            rows[next] = row
            suspect[next] = isSuspect
            next = (next + 1) % capacity
        }
        if isSuspect { suspects += 1 }
    }

    /// Whether more than half of at least ``minimumAnswers`` recent answers were suspect.
    public var isBurst: Bool { canJudge && suspects * 2 > rows.count }

    /// Answers remembered.
    public var count: Int { rows.count }

    /// Suspect answers among them.
    public var suspectCount: Int { suspects }

    /// Whether enough answers were seen to tell a burst from a few bad tokens.
    public var canJudge: Bool { rows.count >= minimumAnswers }
}
