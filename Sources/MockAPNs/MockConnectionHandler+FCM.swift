import NIOCore
import NIOHPACK
import NIOHTTP2
import PushCore

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

    // MARK: - Token endpoint

    private func tokenEndpoint(method: String, path: String, contentType: String, body: [UInt8], port: Int) -> FCMHTTPAnswer {
        var record = MockFCMRecordedRequest(endpoint: "token", method: method, path: path, status: 0)
        func oauthError(_ status: Int, _ error: String, _ description: String) -> FCMHTTPAnswer {
            record.status = status
            record.error = error
            record.message = description
            return FCMHTTPAnswer(status: status, body: #"{"error":"# + JSONValue.quoted(error) + #","error_description":"# + JSONValue.quoted(description) + "}")
        }
        let now = core.now()
        let answer: FCMHTTPAnswer
        if method != "POST" {
            answer = oauthError(405, "invalid_request", "The token endpoint accepts POST only.")
        } else if !contentType.hasPrefix("application/x-www-form-urlencoded") {
            answer = oauthError(400, "invalid_request", "The request must be application/x-www-form-urlencoded.")
        } else {
            let form = Self.formFields(body)
            if form["grant_type"] != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
                answer = oauthError(400, "unsupported_grant_type", "Invalid grant_type: \(form["grant_type"] ?? "")")
            } else if let assertion = form["assertion"], !assertion.isEmpty {
                let audiences = ["https://127.0.0.1:\(port)\(path)", "https://localhost:\(port)\(path)"]
                    + core.configuration.fcm.extraAudiences
                switch core.fcmVerifier.verify(assertion, now: now, audiences: audiences) {
                case .failure(let refusal):
                    record.clientEmail = refusal.issuer
                    answer = oauthError(refusal.status, refusal.error, refusal.description)
                case .success(let account):
                    record.clientEmail = account.clientEmail
                    record.status = 200
                    let random = rng.next()
                    let granted = core.updateStats { s -> (value: String, expiresIn: Int64) in
                        s.fcm.issue(for: account, now: now, random: random)
                    }
                    answer = FCMHTTPAnswer(status: 200, body: #"{"access_token":"# + JSONValue.quoted(granted.value)
                        + #","expires_in":"# + String(granted.expiresIn) + #","token_type":"Bearer"}"#)
                }
            } else {
                answer = oauthError(400, "invalid_request", "Missing required parameter: assertion")
            }
        }
        core.updateStats { s in s.recordFCM(record) }
        return answer
    }

    /// `application/x-www-form-urlencoded` fields, percent- and `+`-decoded.
    static func formFields(_ body: [UInt8]) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: UInt8(ascii: "&")) {
            let kv = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let key = percentDecoded(kv[0]) else { continue }
            fields[key] = kv.count > 1 ? percentDecoded(kv[1]) : ""
        }
        return fields
    }

    private static func percentDecoded(_ bytes: ArraySlice<UInt8>) -> String? {
        var out: [UInt8] = []
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let c = bytes[i]
            if c == UInt8(ascii: "+") {
                out.append(0x20)
            } else if c == UInt8(ascii: "%") {
                guard i + 2 < bytes.endIndex, let v = UInt8(String(decoding: bytes[(i + 1)...(i + 2)], as: UTF8.self), radix: 16) else { return nil }
                out.append(v)
                i += 2
            } else {
                out.append(c)
            }
            i += 1
        }
        return String(validating: out, as: UTF8.self)
    }

    // MARK: - messages:send

    private func sendEndpoint(method: String, path: String, contentType: String, authorization: String?, body: [UInt8]) -> FCMHTTPAnswer {
        var record = MockFCMRecordedRequest(endpoint: "send", method: method, path: path, status: 0)
        record.body = body
        func error(_ code: FCMErrorCode, _ message: String, status: Int? = nil, detail: Bool = true, retryAfter: String? = nil) -> FCMHTTPAnswer {
            let status = status ?? code.httpStatus
            record.status = status
            record.error = code.rawValue
            record.message = message
            return FCMHTTPAnswer(status: status, body: Self.errorBody(code: code, status: status, message: message, detail: detail), retryAfter: retryAfter)
        }
        let now = core.now()
        let answer: FCMHTTPAnswer = core.state.withLock { s -> FCMHTTPAnswer in
            defer { s.recordFCM(record) }
            // /v1/projects/{id}/messages:send
            let parts = path.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 5, parts[1] == "v1", parts[2] == "projects", !parts[3].isEmpty, parts[4] == "messages:send" else {
                return error(.notFound, "The requested URL \(path) was not found on this server.", detail: false)
            }
            let projectID = String(parts[3])
            record.projectID = projectID
            guard method == "POST" else {
                return error(.unknown("METHOD_NOT_ALLOWED"), "Method \(method) is not allowed.", status: 405, detail: false)
            }
            guard let authorization, authorization.lowercased().hasPrefix("bearer "),
                  let token = s.fcm.accessToken(String(authorization.dropFirst(7)), now: now) else {
                return error(.unauthenticated, "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.", detail: false)
            }
            record.clientEmail = token.clientEmail
            record.accessTokenSerial = token.serial
            guard token.projectID == projectID else {
                return error(.permissionDenied, "Permission 'cloudmessaging.messages.create' denied on resource '//cloudmessaging.googleapis.com/projects/\(projectID)' (or it may not exist).", detail: false)
            }
            guard contentType.hasPrefix("application/json") else {
                return error(.invalidArgument, "Invalid content-type \(contentType.isEmpty ? "(none)" : contentType): send application/json.")
            }
            switch Self.checkMessage(body) {
            case .failure(let problem):
                return error(.invalidArgument, problem.message)
            case .success(let target):
                record.registrationToken = target
                let rule = target.map { s.fcm.answer(forRegistrationToken: $0) } ?? .normal
                if rule.kind == .error {
                    let code = FCMErrorCode(rule.code ?? "INTERNAL")
                    let bare = code == .unauthenticated || code == .permissionDenied || code == .notFound
                    return error(code, rule.message ?? Self.defaultMessage(code), status: rule.status, detail: !bare, retryAfter: rule.retryAfter)
                }
                s.fcm.messagesSent += 1
                record.status = 200
                return FCMHTTPAnswer(status: 200, body: #"{"name":"projects/\#(projectID)/messages/0:\#(s.fcm.messagesSent)%mock"}"#)
            }
        }
        return answer
    }

    /// Checks `{"message":{...}}`: exactly one of token/topic/condition, `data` values all
    /// strings, a well-formed token. Returns the registration token (nil for topic/condition)
    /// or FCM-like words for what is wrong.
    static func checkMessage(_ body: [UInt8]) -> Result<String?, FCMMessageError> {
        guard let json = JSONValue.parse(body) else {
            return .failure(FCMMessageError("Invalid JSON payload received. Unexpected token."))
        }
        guard let top = json.objectValue else { return .failure(FCMMessageError("Invalid JSON payload received. Expected an object.")) }
        for member in top where member.key != "message" && member.key != "validate_only" {
            return .failure(FCMMessageError("Invalid JSON payload received. Unknown name \"\(member.key)\": Cannot find field."))
        }
        guard let message = json["message"], let members = message.objectValue else {
            return .failure(FCMMessageError("Request contains an invalid argument: message is required."))
        }
        let targets = members.filter { ["token", "topic", "condition"].contains($0.key) }
        guard targets.count == 1 else {
            return .failure(FCMMessageError("Request contains an invalid argument: exactly one of token, topic or condition must be set (found \(targets.count))."))
        }
        if let data = message["data"] {
            guard let fields = data.objectValue else {
                return .failure(FCMMessageError("Invalid value at 'message.data' (type.googleapis.com/google.firebase.fcm.v1.Message.DataEntry): data must be an object."))
            }
            for (index, field) in fields.enumerated() where field.value.stringValue == nil {
                return .failure(FCMMessageError("Invalid value at 'message.data[\(index)].value' (TYPE_STRING): values of data must be strings."))
            }
        }
        guard targets[0].key == "token" else { return .success(nil) }
        guard let token = targets[0].value.stringValue, FCMMessageBody.isValidToken(token) else {
            return .failure(FCMMessageError("The registration token is not a valid FCM registration token"))
        }
        return .success(token)
    }

    struct FCMMessageError: Error {
        var message: String
        init(_ message: String) { self.message = message }
    }

    static func defaultMessage(_ code: FCMErrorCode) -> String {
        switch code {
        case .unregistered: return "Requested entity was not found."
        case .invalidArgument: return "Request contains an invalid argument."
        case .senderIDMismatch: return "SenderId mismatch"
        case .quotaExceeded: return "Quota exceeded for quota metric 'Send requests' of service 'fcm.googleapis.com'."
        case .unavailable: return "The service is currently unavailable."
        case .internalError, .unspecifiedError: return "Internal error encountered."
        case .thirdPartyAuthError: return "Auth error from APNS or Web Push Service"
        case .permissionDenied: return "The caller does not have permission"
        case .unauthenticated: return "Request had invalid authentication credentials."
        case .notFound: return "Requested entity was not found."
        case .unknown(let s): return s
        }
    }

    /// FCM's error shape; `detail` adds the FcmError detail naming `code`.
    static func errorBody(code: FCMErrorCode, status: Int, message: String, detail: Bool) -> String {
        var body = #"{"error":{"code":"# + String(status) + #","message":"# + JSONValue.quoted(message)
            + #","status":"# + JSONValue.quoted(code.googleStatus)
        if detail {
            body += #","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"#
                + JSONValue.quoted(code.rawValue) + "}]"
        }
        return body + "}}"
    }
}
