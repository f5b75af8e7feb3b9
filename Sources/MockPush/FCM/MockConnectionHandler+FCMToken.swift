/// FCM's OAuth token endpoint (`POST /token`): the JWT-bearer exchange of a service account's
/// assertion (RFC 7523) for an access token, as Google's `oauth2.googleapis.com/token` does it.
extension MockConnectionHandler {
    func tokenEndpoint(method: String, path: String, contentType: String, body: [UInt8], port: Int) -> FCMHTTPAnswer {
        var record = MockFCMRecordedRequest(endpoint: "token", method: method, path: path, status: 0)
        func oauthError(_ status: Int, _ error: String, _ description: String) -> FCMHTTPAnswer {
            record.status = status
            record.error = error
            record.message = description
            return FCMHTTPAnswer(status: status, body: #"{"error":"# + MockJSON.quoted(error) + #","error_description":"# + MockJSON.quoted(description) + "}")
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
                    answer = FCMHTTPAnswer(status: 200, body: #"{"access_token":"# + MockJSON.quoted(granted.value)
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
}
