import Testing
@Test func placeholderMockAPNsTests() { #expect(Bool(true)) }
