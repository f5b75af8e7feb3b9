import Foundation

/// One broadcast channel the mock knows (JSON form of the items of `GET /_mock/channels`).
public struct MockChannel: Sendable, Hashable, Codable {
    /// The id APNs gives: a base64 string ("The channel ID is a base64-encoded string").
    public var id: String
    /// The app it belongs to.
    public var bundleID: String
    /// `message-storage-policy`: 0 (No Message Stored) or 1 (Most Recent Message Stored).
    public var storagePolicy: Int

    public init(id: String, bundleID: String, storagePolicy: Int) {
        self.id = id
        self.bundleID = bundleID
        self.storagePolicy = storagePolicy
    }
}

/// The broadcast channels of the environment the mock plays, in creation order.
///
/// Apple, "Sending channel management requests to APNs": an app keeps up to 10 000 channels in
/// each environment; a create past that is answered 400 `CannotCreateChannelConfig`.
struct MockChannelStore {
    /// Apple's limit per app and environment.
    static let maxChannelsPerApp = 10_000

    private(set) var channels: [String: MockChannel] = [:]
    private var order: [String] = []
    private var counts: [String: Int] = [:]
    private var rng = SplitMix64(seed: 0x6368_616e)

    /// Creates a channel, or returns nil when the app has ``maxChannelsPerApp`` already.
    mutating func create(bundleID: String, storagePolicy: Int) -> MockChannel? {
        guard count(bundleID: bundleID) < Self.maxChannelsPerApp else { return nil }
        var id: String
        repeat {
            var bytes: [UInt8] = []
            for _ in 0..<2 { withUnsafeBytes(of: rng.next()) { bytes.append(contentsOf: $0) } }
            id = Data(bytes).base64EncodedString()
        } while channels[id] != nil
        let channel = MockChannel(id: id, bundleID: bundleID, storagePolicy: storagePolicy)
        channels[id] = channel
        order.append(id)
        counts[bundleID, default: 0] += 1
        return channel
    }

    /// Removes a channel; false when there was none.
    mutating func delete(id: String) -> Bool {
        guard let removed = channels.removeValue(forKey: id) else { return false }
        order.removeAll { $0 == id }
        counts[removed.bundleID, default: 1] -= 1
        return true
    }

    /// The channel `id` of `bundleID`, nil when unknown (or another app's).
    func channel(id: String, bundleID: String) -> MockChannel? {
        channels[id].flatMap { $0.bundleID == bundleID ? $0 : nil }
    }

    /// The app's channels in creation order (every app's for nil).
    func list(bundleID: String?) -> [MockChannel] {
        order.compactMap { channels[$0] }.filter { bundleID == nil || $0.bundleID == bundleID }
    }

    func count(bundleID: String) -> Int { counts[bundleID] ?? 0 }
}
