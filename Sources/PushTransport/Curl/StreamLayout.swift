/// What a provider's requests look like to a stream, fixed for a sender: the URL, the header
/// nodes a stream keeps and the answer headers it reads. A ``StreamSlot`` sizes its buffers
/// from it when it is built; header nodes take these sizes as limits and grow to them only as
/// longer values come (``CurlHeaderList``): nothing is allocated per request once they have.
struct StreamLayout: Sendable {
    /// What every request's URL starts with: APNs' `https://host[:port]/3/device/`; FCM's whole
    /// `…/v1/projects/{id}/messages:send`.
    var urlPrefix: [UInt8]
    /// Room after the prefix for the part of the URL that changes per request (APNs: the device
    /// token), 0 for none.
    var urlSuffixCapacity: Int
    /// The authorization header up to its token: `authorization: bearer ` (APNs) or
    /// `authorization: Bearer ` (FCM).
    var authorizationPrefix: StaticString
    /// The most bytes of the authorization node, NUL included: room for any token the authorizer hands out.
    var authorizationCapacity: Int
    /// The provider's own header nodes, in order, each with its most bytes (NUL included): room
    /// for any value its requests may carry. ``StreamSlot/setHeader(_:prefix:value:)`` takes their
    /// index in this list.
    var headerCapacities: [Int]
    /// Headers every request carries as they are, e.g. `content-type: application/json`;
    /// `accept:` and `expect:` remove curl's own.
    var fixedHeaders: [StaticString]
    /// The answer headers to keep for the answer parser, lower-case with their colon
    /// (`apns-id:`); ``StreamSlot/answerHeader(_:)`` takes their index in this list.
    var answerHeaders: [StaticString]
}
