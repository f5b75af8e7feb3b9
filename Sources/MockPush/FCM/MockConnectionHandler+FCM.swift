import NIOCore
import NIOHPACK
import NIOHTTP2

/// The FCM HTTP v1 endpoints: `POST /token` (OAuth 2.0 JWT-bearer exchange) and
/// `POST /v1/projects/{id}/messages:send`, strict about what Google checks.
extension MockConnectionHandler {
    func isFCMPath(_ head: RequestHead) -> Bool {
        let path = head.pathOnly
        return path == core.configuration.fcm.tokenPath || path.hasPrefix("/v1/")
    }

    func handleFCM(context: ChannelHandlerContext, streamID: HTTP2StreamID, head: RequestHead, headers: HPACKHeaders, body: ByteBuffer?) {
        let bytes = body.map { Array($0.readableBytesView) } ?? []
        let method = head.method ?? ""
        let path = String(head.pathOnly)
        let contentType = headers.first(name: "content-type")?.lowercased() ?? ""
        let answer: FCMHTTPAnswer
        if path == core.configuration.fcm.tokenPath {
            let port = context.channel.localAddress?.port ?? 0
            answer = tokenEndpoint(method: method, path: path, contentType: contentType, body: bytes, port: port)
        } else {
            answer = sendEndpoint(method: method, path: path, contentType: contentType,
                                  authorization: head.authorization, body: bytes)
        }
        var responseHeaders = HPACKHeaders()
        responseHeaders.add(name: ":status", value: String(answer.status))
        responseHeaders.add(name: "content-type", value: "application/json; charset=UTF-8")
        responseHeaders.add(name: "content-length", value: String(answer.body.utf8.count))
        if let retryAfter = answer.retryAfter { responseHeaders.add(name: "retry-after", value: retryAfter) }
        if answer.status == 200, path != core.configuration.fcm.tokenPath, !fcmStreamsRaised {
            // An authenticated send succeeded: the connection gets FCM's stream limit.
            fcmStreamsRaised = true
            streamsLimited = false
            let raised = HTTP2Setting(parameter: .maxConcurrentStreams, value: core.configuration.fcm.maxConcurrentStreams)
            write(HTTP2Frame(streamID: .rootStream, payload: .settings(.settings([raised]))), context: context)
        }
        write(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: responseHeaders))), context: context)
        let buffer = context.channel.allocator.buffer(string: answer.body)
        write(HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(buffer), endStream: true))), context: context)
    }

    /// One answer of an FCM endpoint.
    struct FCMHTTPAnswer {
        var status: Int
        var body: String
        var retryAfter: String? = nil
    }
}
