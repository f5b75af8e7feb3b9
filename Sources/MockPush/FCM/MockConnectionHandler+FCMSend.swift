/// FCM's `POST /v1/projects/{id}/messages:send`: path, method, access token, project, content
/// type and message (``FCMMessageValidator``), then the token's rule or a message name.
extension MockConnectionHandler {
    /// One refused send: FCM's error body and status.
    struct FCMSendError: Error {
        var code: String
        var googleStatus: String
        var status: Int
        var message: String
        /// Whether the body carries the `FcmError` detail naming `code`.
        var detail: Bool
        var retryAfter: String? = nil

        /// FCM's error shape: `{"error":{"code":…,"message":…,"status":…,"details":[FcmError]}}`.
        var body: String {
            var body = #"{"error":{"code":"# + String(status) + #","message":"# + MockJSON.quoted(message)
                + #","status":"# + MockJSON.quoted(googleStatus)
            if detail {
                body += #","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"#
                    + MockJSON.quoted(code) + "}]"
            }
            return body + "}}"
        }
    }

    func sendEndpoint(method: String, path: String, contentType: String, authorization: String?, body: [UInt8]) -> FCMHTTPAnswer {
        var record = MockFCMRecordedRequest(endpoint: "send", method: method, path: path, status: 0)
        record.body = body
        let now = core.now()
        return core.state.withLock { s -> FCMHTTPAnswer in
            let answer: FCMHTTPAnswer
            switch Self.send(&s, &record, method: method, path: path, contentType: contentType,
                             authorization: authorization, body: body, now: now) {
            case .success(let name):
                record.status = 200
                answer = FCMHTTPAnswer(status: 200, body: #"{"name":"# + MockJSON.quoted(name) + "}")
            case .failure(let error):
                record.status = error.status
                record.error = error.code
                record.message = error.message
                answer = FCMHTTPAnswer(status: error.status, body: error.body, retryAfter: error.retryAfter)
            }
            s.recordFCM(record)
            return answer
        }
    }

    /// The checks in Google's order; the message name on success. Runs under the server's lock.
    private static func send(
        _ s: inout MockSharedState, _ record: inout MockFCMRecordedRequest, method: String, path: String,
        contentType: String, authorization: String?, body: [UInt8], now: Int64
    ) -> Result<String, FCMSendError> {
        // /v1/projects/{id}/messages:send
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[1] == "v1", parts[2] == "projects", !parts[3].isEmpty, parts[4] == "messages:send" else {
            return .failure(FCMSendError(.notFound, "The requested URL \(path) was not found on this server."))
        }
        let projectID = String(parts[3])
        record.projectID = projectID
        guard method == "POST" else {
            return .failure(FCMSendError(code: "METHOD_NOT_ALLOWED", googleStatus: "INTERNAL", status: 405,
                                         message: "Method \(method) is not allowed.", detail: false))
        }
        guard let authorization, authorization.lowercased().hasPrefix("bearer "),
              let token = s.fcm.accessToken(String(authorization.dropFirst(7)), now: now) else {
            return .failure(FCMSendError(.unauthenticated, "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project."))
        }
        record.clientEmail = token.clientEmail
        record.accessTokenSerial = token.serial
        guard token.projectID == projectID else {
            return .failure(FCMSendError(.permissionDenied, "Permission 'cloudmessaging.messages.create' denied on resource '//cloudmessaging.googleapis.com/projects/\(projectID)' (or it may not exist)."))
        }
        guard contentType.hasPrefix("application/json") else {
            return .failure(FCMSendError(.invalidArgument, "Invalid content-type \(contentType.isEmpty ? "(none)" : contentType): send application/json."))
        }
        let target: String?
        switch FCMMessageValidator.check(body) {
        case .failure(let problem): return .failure(FCMSendError(.invalidArgument, problem.message))
        case .success(let token): target = token
        }
        record.registrationToken = target
        let rule = target.map { s.fcm.answer(forRegistrationToken: $0) } ?? .normal
        if rule.kind == .error { return .failure(FCMSendError(rule: rule)) }
        s.fcm.messagesSent += 1
        return .success("projects/\(projectID)/messages/0:\(s.fcm.messagesSent)%mock")
    }
}

extension MockConnectionHandler.FCMSendError {
    /// FCM's answer for `code`: its status, its google.rpc status, and the FcmError detail
    /// unless it is a bare status.
    init(_ code: MockFCMErrorCode, _ message: String) {
        self.init(code: code.rawValue, googleStatus: code.googleStatus, status: code.status, message: message, detail: !code.isBareStatus)
    }

    /// What a rule's error answer sends: its code's status (or the one it names) and message.
    init(rule answer: MockFCMAnswer) {
        let known = answer.errorCode
        self.init(code: answer.code ?? "INTERNAL", googleStatus: known?.googleStatus ?? "INTERNAL", status: answer.httpStatus,
                  message: answer.message ?? known?.defaultMessage ?? "Internal error encountered.",
                  detail: !(known?.isBareStatus ?? false), retryAfter: answer.retryAfter)
    }
}
