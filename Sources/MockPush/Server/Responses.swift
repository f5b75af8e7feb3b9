import NIOCore
import NIOHPACK
import NIOHTTP2

/// Frames the mock answers with.
enum Responses {
    /// A 200: one HEADERS frame with END_STREAM and no DATA frame.
    /// `idHeader` names the id's header: `apns-id` for a push to a device, `apns-request-id`
    /// for a broadcast and channel management.
    static func success(streamID: HTTP2StreamID, apnsID: String, uniqueID: String?, idHeader: String = "apns-id") -> HTTP2Frame {
        var headers = HPACKHeaders()
        headers.reserveCapacity(3)
        headers.add(name: ":status", value: "200")
        headers.add(name: idHeader, value: apnsID)
        if let uniqueID { headers.add(name: "apns-unique-id", value: uniqueID) }
        return HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers, endStream: true)))
    }

    /// An error (or any status with a JSON body): HEADERS then DATA with END_STREAM.
    static func json(
        streamID: HTTP2StreamID,
        status: Int,
        body: String,
        apnsID: String?,
        uniqueID: String?,
        idHeader: String = "apns-id",
        allocator: ByteBufferAllocator
    ) -> (HTTP2Frame, HTTP2Frame) {
        var headers = HPACKHeaders()
        headers.add(name: ":status", value: String(status))
        if let apnsID { headers.add(name: idHeader, value: apnsID) }
        if let uniqueID { headers.add(name: "apns-unique-id", value: uniqueID) }
        headers.add(name: "content-type", value: "application/json")
        headers.add(name: "content-length", value: String(body.utf8.count))
        let buffer = allocator.buffer(string: body)
        return (
            HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers))),
            HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(buffer), endStream: true)))
        )
    }

    /// `{"reason":"X"}` or `{"reason":"X","timestamp":T}`.
    static func reasonBody(_ reason: String?, timestamp: Int64?) -> String {
        var body = "{"
        if let reason { body += "\"reason\":" + MockJSON.quoted(reason) }
        if let timestamp { body += (reason == nil ? "" : ",") + "\"timestamp\":" + String(timestamp) }
        return body + "}"
    }
}
