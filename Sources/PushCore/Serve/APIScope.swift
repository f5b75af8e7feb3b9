/// What an API key may do: the scope it was created with (`pushq api-key create NAME --scope S`).
///
/// Scopes are not ranked: each allows a set of ``APIPermission``s, and `admin` allows them all.
/// A `devices` key (a mobile backend registering tokens) cannot read the queue; a `read` key
/// (a dashboard viewer, a monitoring script) cannot change anything.
public enum APIScope: String, Sendable, CaseIterable, Codable {
    /// Reads: `GET /api/v1/status`, notifications, a user's devices, the dashboard's pages.
    case read
    /// What `read` allows, and enqueueing and cancelling notifications.
    case enqueue
    /// Registering and unregistering devices, and listing a user's devices.
    case devices
    /// Everything, the dashboard's operator actions included (cancel a lane, pause a lane, lift a hold).
    case admin

    /// Whether a key of this scope may do `permission`.
    public func allows(_ permission: APIPermission) -> Bool {
        switch (self, permission) {
        case (.admin, _): return true
        case (.read, .readQueue): return true
        case (.enqueue, .readQueue), (.enqueue, .enqueue): return true
        case (.devices, .registerDevices): return true
        default: return false
        }
    }
}

/// One kind of thing a request does, checked against the caller's ``APIScope``.
public enum APIPermission: String, Sendable, CaseIterable {
    /// Read the queue: status, notifications, users' devices, the dashboard's pages.
    case readQueue = "read the queue"
    /// Enqueue notifications (one, a batch, a user's fan-out) and cancel one.
    case enqueue = "enqueue or cancel notifications"
    /// Register, refresh and unregister devices; list a user's devices.
    case registerDevices = "register or unregister devices"
    /// Operator actions: cancel a lane's queued rows, pause or resume a lane, lift a hold.
    case operate = "operate lanes and holds"
}
