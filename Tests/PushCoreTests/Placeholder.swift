import Testing
@Test func placeholderPushCoreTests() { #expect(Bool(true)) }
