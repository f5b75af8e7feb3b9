import NIOCore
import NIOHPACK
import NIOHTTP2

/// Building the record of one request (only called when recording is on).
extension MockConnectionHandler {
    static func record(
        connectionID: Int, streamID: HTTP2StreamID, head: RequestHead, headers: HPACKHeaders,
        body: ByteBuffer?, keepBody: Bool, verdict: Verdict, answer: MockAnswer, status: Int?,
        apnsID: String, receivedMonotonic: Int64
    ) -> MockRecordedRequest {
        var recorded: [[String]] = []
        recorded.reserveCapacity(headers.count)
        for (name, value, _) in headers {
            recorded.append([name, name == "authorization" ? "bearer <redacted>" : value])
        }
        let token: String? = {
            let path = head.pathOnly
            guard path.hasPrefix("/3/device/") else { return nil }
            let t = path.dropFirst("/3/device/".utf8.count)
            return t.isEmpty ? nil : String(t)
        }()
        return MockRecordedRequest(
            sequenceNumber: 0,
            connectionID: connectionID,
            streamID: Int(Int32(streamID)),
            method: head.method ?? "",
            path: head.path ?? "",
            deviceToken: token,
            headers: recorded,
            auth: verdict.auth,
            jwtKeyID: verdict.jwt?.keyID,
            jwtIssuer: verdict.jwt?.issuer,
            jwtIssuedAt: verdict.jwt?.issuedAt,
            body: keepBody ? (body.map { Array($0.readableBytesView) } ?? []) : nil,
            bodyLength: body?.readableBytes ?? 0,
            receivedMonotonicNanoseconds: receivedMonotonic,
            receivedWallNanoseconds: MockClock.wallNanoseconds(),
            status: status,
            reason: answer.reason,
            answerKind: verdict.reason == nil ? answer.kind.rawValue : "invalid",
            apnsID: apnsID
        )
    }
}
