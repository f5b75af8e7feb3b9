/// A broadcast channel's `message-storage-policy`, fixed when the channel is created.
///
/// Apple: with no message stored, a device offline when a broadcast goes out never gets it
/// (and a broadcast must carry `apns-expiration: 0`); with the most recent message stored,
/// APNs keeps the newest one for a device that comes back.
public enum ChannelStoragePolicy: Int, Sendable, Hashable, CaseIterable {
    /// `0`: No Message Stored.
    case noMessageStored = 0
    /// `1`: Most Recent Message Stored.
    case mostRecentMessageStored = 1
}
