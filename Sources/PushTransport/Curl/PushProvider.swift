import Logging
import PushCore

/// What a push provider supplies to the shared HTTP/2 machinery of `Curl/`: its URL and
/// header layout, its request headers, its authorizer and its answer parser.
///
/// The connection loop (``PushConnection``) and the streams (``StreamSlot``) know no provider:
/// they call these. A sender holds one provider value for its whole life, built by its
/// initializer (`APNs/PushSender+APNs.swift`, `FCM/PushSender+FCM.swift`); each connection gets
/// an ``Authorizer`` of its own. The connection is generic over the provider, so calls are
/// resolved once, at compile time, and nothing is boxed per request.
///
/// Adding a provider is adding a folder with a type conforming to this protocol, its
/// authorizer and a `PushSender` initializer: see docs/architecture.md, "Adding a provider".
protocol PushProvider: Sendable {
    associatedtype Authorizer: PushAuthorizer

    /// Which provider this is: for names and logs, and the only requests it takes
    /// (``PushRequest/provider``).
    var provider: Provider { get }
    /// The base URL requests go to, for logs (no secret in it).
    var baseURL: String { get }
    /// Streams in flight per connection (the window): the provider's own configuration's.
    var streamsPerConnection: Int { get }
    /// The URL, header nodes and answer headers of every stream.
    var layout: StreamLayout { get }
    /// The TLS client certificate every stream presents (APNs certificate authentication), or nil.
    var clientCertificate: CurlClientCertificate? { get }

    /// The authorizer of a new connection, used only on that connection's thread.
    ///
    /// - Parameter logger: the connection's logger (its metadata names the provider, the
    ///   credential and the connection).
    func makeAuthorizer(logger: Logger) -> Authorizer

    /// Why `request` cannot be sent as it is (a header value that would break the request, a
    /// request of another provider's), or nil. Checked before anything else happens to its
    /// batch; the request then ends `TransportFailure.Kind.invalidHeader`.
    func problem(with request: PushRequest) -> String?

    /// Writes `request`'s URL (``StreamSlot/setURL(path:suffix:)``) and headers into `stream`;
    /// its body is written already.
    ///
    /// - Returns: nil, or why the request cannot be sent (a value that does not fit its node).
    func load(_ request: PushRequest, into stream: StreamSlot) -> TransportFailure?

    /// The answer parser: the provider's part of the answer `stream` received for `request`
    /// with `status` (its answer headers and body).
    func answer(status: Int, stream: StreamSlot, request: PushRequest) -> ProviderAnswer

    /// What to do with the connection after `response`, an HTTP answer.
    func connectionAction(after response: PushResponse) -> ConnectionAction

    /// Connections one connection thread's multi handle may hold at once, over all hosts. 1 for
    /// a provider with one host (APNs, FCM): the thread is then one connection, every stream
    /// carries the token pinned for it, and a reconnect by libcurl, a lost connection or a
    /// condemning answer replace it. Above 1 (Web Push: many origins) none of these replace the
    /// handle, which would close every origin's connection for one origin's trouble: libcurl
    /// drops a dead connection itself and closes the oldest idle one when it needs room.
    var connectionsPerThread: Int { get }
    /// Connections one thread may hold to one host (`CURLMOPT_MAX_HOST_CONNECTIONS`): 1 unless
    /// ``connectionsPerThread`` is above 1.
    var connectionsPerHost: Int { get }

    /// Sets the provider's own options on a new stream, once (Web Push: https only, no proxy).
    ///
    /// - Throws: ``PushTransportError`` `.curlSetup` naming the option libcurl refused.
    func configure(stream: StreamSlot) throws

    /// The body to send for `request`, made on the connection's thread when a stream takes it:
    /// its payload as it is, or (Web Push) the payload encrypted for the subscription.
    ///
    /// - Returns: the bytes, or why the request cannot be sent (it is answered with that failure).
    func body(for request: PushRequest) -> Result<[UInt8], TransportFailure>
}

extension PushProvider {
    var connectionsPerThread: Int { 1 }
    var connectionsPerHost: Int { 1 }
    func configure(stream: StreamSlot) throws {}
    func body(for request: PushRequest) -> Result<[UInt8], TransportFailure> { .success(request.payload) }
}

/// One connection's authentication: provider tokens (APNs JWT), OAuth access tokens (FCM) or a
/// TLS client certificate. Used only on its connection's thread, so it keeps state without a lock.
protocol PushAuthorizer {
    /// How the next batch is authorized; asked once per batch, before its requests are loaded.
    /// May block the connection's thread (FCM waits for a token exchange when it has no usable token).
    ///
    /// - Parameter newConnection: nothing went out on the connection's current handle yet: the
    ///   batch opens a new TCP+TLS connection (take the newest token, check the certificate).
    mutating func authorize(newConnection: Bool) -> Authorization

    /// Records what a finished transfer says about its token, and whether to resend it at once
    /// (FCM: a 401 UNAUTHENTICATED with a token since replaced). Called for every finished
    /// transfer, answered or not, with the token the stream carried.
    ///
    /// - Parameters:
    ///   - tokenSerial: the serial of the bearer token the request carried, 0 for none.
    ///   - tokenIssuedAt: when that token was issued (UNIX seconds), 0 if unknown.
    /// - Returns: true to resend `response.request` at once instead of reporting `response`.
    mutating func answered(_ response: inout PushResponse, tokenSerial: Int, tokenIssuedAt: Int64) -> Bool

    /// The provider condemned the token with `serial` (``ConnectionAction/renewTokenAndReopen``):
    /// get a new one, once however many streams failed with it.
    func renew(afterSerial serial: Int)
}

/// How a batch is authorized (``PushAuthorizer/authorize(newConnection:)``).
enum Authorization {
    /// No authorization header (the TLS client certificate authenticates).
    case certificate
    /// This token in the authorization header.
    case bearer(BearerToken)
    /// Nothing can be sent now: every request of the batch is answered with this.
    case refused(Refusal)
}

/// What every request of a batch is answered with when its authorizer cannot authorize it.
enum Refusal {
    /// A failure without an answer (a provider token that cannot be signed, an unreachable
    /// token endpoint, an expired client certificate).
    case failure(TransportFailure)
    /// The provider's own verdict without an answer (FCM: a token exchange refused).
    case verdict(ProviderAnswer)
}

/// A token for the authorization header: an APNs provider token (a JWT) or an FCM access token.
struct BearerToken: Sendable {
    /// The token. Secret: never logged.
    let value: String
    /// Its serial number at its issuer (1 for the first...): a stream rewrites its header only
    /// when the serial changes.
    let serial: Int
    /// When it was issued, UNIX seconds; 0 if unknown.
    let issuedAt: Int64
}

extension StreamLayout {
    /// Whether `token` fits the authorization node.
    func fits(_ token: String) -> Bool {
        authorizationPrefix.utf8CodeUnitCount + token.utf8.count < authorizationCapacity
    }
}
