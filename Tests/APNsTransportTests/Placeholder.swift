import Testing
@Test func placeholderAPNsTransportTests() { #expect(Bool(true)) }
