import Testing
@Test func placeholderPushWorkerTests() { #expect(Bool(true)) }
