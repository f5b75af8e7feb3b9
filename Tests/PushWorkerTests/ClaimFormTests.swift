@testable import PushWorker
import Testing

/// Which claim text the claim loop sends (``ClaimForm``): the plain one, the considerate one for
/// ``ClaimForm/hold`` after a plain claim found a lane that needs it, then the plain one again.
@Suite("The claim loop's choice of claim text")
struct ClaimFormTests {
    @Test("plain at first; considerate for the hold after a plain claim asked for it; plain again after, until asked again")
    func hold() {
        var form = ClaimForm()
        let t0 = ContinuousClock.now
        #expect(!form.considerate(at: t0))
        form.needed(at: t0)
        #expect(form.considerate(at: t0))
        #expect(form.considerate(at: t0 + ClaimForm.hold - .milliseconds(1)))
        #expect(!form.considerate(at: t0 + ClaimForm.hold))
        form.needed(at: t0 + ClaimForm.hold * 2)
        #expect(form.considerate(at: t0 + ClaimForm.hold * 2 + .seconds(1)))
    }
}
