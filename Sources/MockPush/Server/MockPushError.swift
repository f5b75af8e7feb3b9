/// Why the mock could not start or do what was asked.
///
/// `description` names the file, key or setting; it never contains a key or a JWT.
public struct MockPushError: Error, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        let name: String
        public static let badConfiguration = Code(name: "badConfiguration")
        public static let keyLoadFailed = Code(name: "keyLoadFailed")
        public static let tlsSetupFailed = Code(name: "tlsSetupFailed")
        public static let notStarted = Code(name: "notStarted")
        public static let alreadyStarted = Code(name: "alreadyStarted")
        public static let timeout = Code(name: "timeout")
        public static let bindFailed = Code(name: "bindFailed")
        public var description: String { name }
    }

    public var code: Code
    public var message: String
    public var cause: (any Error)?

    public init(_ code: Code, _ message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    public var description: String {
        if let cause { return "MockPush \(code): \(message) (\(cause))" }
        return "MockPush \(code): \(message)"
    }
}
