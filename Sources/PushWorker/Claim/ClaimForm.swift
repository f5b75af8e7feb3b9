/// Which claim text the claim loop sends (``ClaimStatement``'s two forms, through
/// ``ClaimScope/considerate``).
///
/// The plain claim leaves out the tenant walk and the caps per recipient: PostgreSQL sets up about
/// half the plan at every claim, which is most of a claim's cost when rows are few. It takes
/// nothing when a lane it would walk needs them (a cap per recipient, an entry with a tenant), and
/// says so; the loop then sends the considerate claim, at once and for ``hold``, and tries the
/// plain one again after it (a lane's tenants may all have gone out, its cap been dropped). A
/// fleet that uses neither sends only plain claims; one that does pays one plain claim that
/// takes nothing per ``hold``.
struct ClaimForm: Sendable {
    /// How long the considerate claim is sent after a plain one found a lane that needs it.
    static let hold = Duration.seconds(30)

    /// Until when the considerate claim is sent; nil: the plain one.
    private var considerateUntil: ContinuousClock.Instant?

    /// Whether the claim sent at `now` is the considerate one.
    func considerate(at now: ContinuousClock.Instant) -> Bool {
        considerateUntil.map { now < $0 } ?? false
    }

    /// A plain claim at `now` found a lane that needs the considerate claim.
    mutating func needed(at now: ContinuousClock.Instant) {
        considerateUntil = now + Self.hold
    }
}
