/// Apple's checks on a request, as pure functions, by Apple's rules (``MockAPNsRules``,
/// ``MockAPNsPushType``). The connection handler calls them in this order: `checkPath`,
/// (authentication), `checkHeaders`, `checkBody`.
///
/// Decisions where Apple's documentation is silent, chosen here and documented:
/// - absent `apns-push-type` is taken as `alert` (Apple infers the type);
/// - `apns-topic` absent → `MissingTopic` with token auth, allowed with certificate auth
///   (Apple takes the certificate's topic);
/// - a topic that is a configured bundle id with the wrong suffix for the push type → `BadTopic`;
///   a topic under no configured bundle id → `TopicDisallowed`;
/// - a body that is not a JSON object (first and last non-blank bytes are not `{` `}`,
///   a cheap check, not a parse) → 400 `PayloadEmpty`, the closest permanent reason in Apple's list.
struct RequestValidator: Sendable {
    let bundleIDs: [String]

    /// Method and path. Returns the device token on success.
    static func checkPath(_ head: RequestHead) -> Checked<Substring> {
        guard head.method == "POST" else { return .failure(.methodNotAllowed) }
        let path = head.pathOnly
        let prefix = "/3/device".utf8
        guard path.utf8.starts(with: prefix) else { return .failure(.badPath) }
        let rest = path.utf8.dropFirst(prefix.count)
        guard let slash = rest.first else { return .failure(.missingDeviceToken) }
        guard slash == UInt8(ascii: "/") else { return .failure(.badPath) }
        let tokenBytes = rest.dropFirst()
        if tokenBytes.isEmpty { return .failure(.missingDeviceToken) }
        if tokenBytes.contains(UInt8(ascii: "/")) { return .failure(.badPath) }
        let token = Substring(tokenBytes)
        guard MockAPNsRules.isValidDeviceToken(token) else { return .failure(.badDeviceToken) }
        return .success(token)
    }

    /// Push type, topic, priority, expiration, collapse id and apns-id.
    func checkHeaders(_ head: RequestHead, certificateAuth: Bool) -> Checked<MockAPNsPushType> {
        if head.hasDuplicates { return .failure(.duplicateHeaders) }
        let pushType: MockAPNsPushType
        if let raw = head.pushType {
            guard let type = MockAPNsPushType(rawValue: raw) else { return .failure(.invalidPushType) }
            pushType = type
        } else {
            pushType = .alert
        }
        if let topic = head.topic {
            if let reason = checkTopic(topic, pushType: pushType) { return .failure(reason) }
        } else if !certificateAuth {
            return .failure(.missingTopic)
        }
        if let priority = head.priority {
            // Digits only: Int("+5") is not a priority.
            guard priority.utf8.count <= 2, priority.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                  let value = Int(priority), pushType.allows(priority: value)
            else { return .failure(.badPriority) }
        }
        if let expiration = head.expiration, !MockAPNsRules.isValidExpiration(expiration) {
            return .failure(.badExpirationDate)
        }
        if let collapseID = head.collapseID, collapseID.utf8.count > MockAPNsRules.maxCollapseIDBytes {
            return .failure(.badCollapseId)
        }
        if let apnsID = head.apnsID, !MockAPNsRules.isValidApnsID(apnsID) {
            return .failure(.badMessageId)
        }
        return .success(pushType)
    }

    func checkTopic(_ topic: String, pushType: MockAPNsPushType) -> MockAPNsReason? {
        let suffix = pushType.topicSuffix
        var underBundle = false
        for bundle in bundleIDs {
            if topic == bundle + suffix { return nil }
            if topic == bundle || topic.hasPrefix(bundle + ".") { underBundle = true }
        }
        return underBundle ? .badTopic : .topicDisallowed
    }

    /// Empty → `PayloadEmpty`; over the push type's limit → `PayloadTooLarge`;
    /// not a JSON object (cheap check) → `PayloadEmpty`.
    static func checkBody(_ body: some BidirectionalCollection<UInt8>, pushType: MockAPNsPushType) -> MockAPNsReason? {
        checkBody(body, maxBytes: pushType.maxPayloadBytes)
    }

    /// ``checkBody(_:pushType:)`` with a limit of `maxBytes` (a broadcast's 5 KB).
    static func checkBody(_ body: some BidirectionalCollection<UInt8>, maxBytes: Int) -> MockAPNsReason? {
        if body.isEmpty { return .payloadEmpty }
        if body.count > maxBytes { return .payloadTooLarge }
        let blank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        guard let first = body.first(where: { !blank($0) }) else { return .payloadEmpty }
        let last = body.last(where: { !blank($0) })
        guard first == UInt8(ascii: "{"), last == UInt8(ascii: "}") else { return .payloadEmpty }
        return nil
    }
}

/// The outcome of one check: a value, or the APNs reason to answer with.
/// (`Result` needs an `Error`; `MockAPNsReason` is a plain value.)
enum Checked<Value> {
    case success(Value)
    case failure(MockAPNsReason)
}

extension Checked: Equatable where Value: Equatable {}
