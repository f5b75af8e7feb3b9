import Testing
@Test func placeholderPushStoreTests() { #expect(Bool(true)) }
