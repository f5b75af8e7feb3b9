import PushCore
import Testing

@Suite struct FCMVerdictTests {
    static func body(_ code: String, status: String, message: String = "m", detail: Bool = true) -> [UInt8] {
        var json = #"{"error":{"code":400,"message":"\#(message)","status":"\#(status)""#
        if detail {
            json += #","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[]},{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#(code)"}]"#
        }
        return Array((json + "}}").utf8)
    }

    /// The issue's table, row by row: (HTTP status, body, Retry-After) → verdict.
    static let table: [(String, Int, [UInt8], Int64?, FCMVerdict)] = [
        ("200", 200, Array(#"{"name":"projects/p/messages/1"}"#.utf8), nil, .sent),
        ("UNREGISTERED", 404, body("UNREGISTERED", status: "NOT_FOUND"), nil, .invalidateToken(.unregistered)),
        ("INVALID_ARGUMENT bad token", 400,
         body("INVALID_ARGUMENT", status: "INVALID_ARGUMENT", message: "The registration token is not a valid FCM registration token"),
         nil, .invalidateToken(.invalidArgument)),
        ("INVALID_ARGUMENT payload", 400,
         body("INVALID_ARGUMENT", status: "INVALID_ARGUMENT", message: "Invalid value at 'message.data[0].value' (TYPE_STRING), 1"),
         nil, .fail(.invalidArgument)),
        ("SENDER_ID_MISMATCH", 403, body("SENDER_ID_MISMATCH", status: "PERMISSION_DENIED"), nil, .fail(.senderIDMismatch)),
        // QUOTA_EXCEEDED not saying whose quota: this token only (the Decider holds the credential when many tokens get it).
        ("QUOTA_EXCEEDED with Retry-After", 429, body("QUOTA_EXCEEDED", status: "RESOURCE_EXHAUSTED"), 42, .throttleToken(seconds: 42)),
        ("QUOTA_EXCEEDED without", 429, body("QUOTA_EXCEEDED", status: "RESOURCE_EXHAUSTED"), nil, .throttleToken(seconds: 60)),
        ("QUOTA_EXCEEDED for a device", 429, body("QUOTA_EXCEEDED", status: "RESOURCE_EXHAUSTED", message: "Device message rate exceeded."),
         nil, .throttleToken(seconds: 60)),
        ("QuotaFailure naming a device", 429, Array(#"{"error":{"code":429,"message":"Quota exceeded.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"subject":"device","description":"Per-device message rate exceeded"}]}]}}"#.utf8),
         9, .throttleToken(seconds: 9)),
        // The project's quota: a Cloud quota metric (the message, or an ErrorInfo naming it), or the project.
        ("QUOTA_EXCEEDED quota metric", 429, body("QUOTA_EXCEEDED", status: "RESOURCE_EXHAUSTED",
                                                  message: "Quota exceeded for quota metric 'Send requests' of service 'fcm.googleapis.com'."),
         nil, .backOffCredential(seconds: 60)),
        ("project quota, ErrorInfo (firebase-admin-go#719)", 429, Array(#"{"error":{"code":429,"message":"Quota exceeded.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","domain":"googleapis.com","metadata":{"quota_metric":"fcm.googleapis.com/send_requests","quota_unit":"1/min/{project}","quota_limit":"SendsPerMinutePerProject"}}]}}"#.utf8),
         30, .backOffCredential(seconds: 30)),
        ("RESOURCE_EXHAUSTED naming the project", 429, body("", status: "RESOURCE_EXHAUSTED", message: "Project send quota exhausted", detail: false),
         nil, .backOffCredential(seconds: 60)),
        ("UNAVAILABLE", 503, body("UNAVAILABLE", status: "UNAVAILABLE"), 7, .retry(.serverError(.unavailable), retryAfter: 7)),
        ("INTERNAL", 500, body("INTERNAL", status: "INTERNAL"), nil, .retry(.serverError(.internalError), retryAfter: nil)),
        ("UNSPECIFIED_ERROR", 500, body("UNSPECIFIED_ERROR", status: "INTERNAL"), nil, .retry(.serverError(.unspecifiedError), retryAfter: nil)),
        ("UNAUTHENTICATED", 401, body("", status: "UNAUTHENTICATED", detail: false), nil, .refreshAccessToken),
        ("NOT_FOUND bare", 404, body("", status: "NOT_FOUND", detail: false), nil, FCMVerdictTests.notFoundPause),
        ("unknown 4xx", 400, body("NEW_THING", status: "FAILED_PRECONDITION"), nil, .retry(.unknown("NEW_THING"), retryAfter: nil)),
        ("unknown 5xx", 502, body("NEW_THING", status: "INTERNAL"), nil, .retry(.serverError(.unknown("NEW_THING")), retryAfter: nil)),
        ("no body 401", 401, [], nil, .refreshAccessToken),
        ("no body 404", 404, Array("<html>".utf8), nil, FCMVerdictTests.notFoundPause),
        ("no body 429", 429, [], 5, .throttleToken(seconds: 5)),
        ("no body 502", 502, [], nil, .retry(.serverError(nil), retryAfter: nil)),
        ("no body 418", 418, [], nil, .retry(.unknown("HTTP418"), retryAfter: nil)),
    ]

    static let notFoundPause = FCMVerdict.pauseCredential(.notFound, message: "FCM answered 404 NOT_FOUND without naming the registration token: check project_id in the service account file and that the Firebase Cloud Messaging API is enabled for the project")

    @Test(arguments: table.indices)
    func classifiesRow(_ i: Int) {
        let (name, status, body, retryAfter, expected) = Self.table[i]
        let error = status == 200 ? nil : FCMErrorBody.parse(body)
        #expect(FCMVerdict.classify(status: status, error: error, retryAfter: retryAfter) == expected, "\(name)")
    }

    @Test func credentialProblemsPauseWithAdvice() {
        for (code, status, words) in [("THIRD_PARTY_AUTH_ERROR", "UNAUTHENTICATED", "APNs authentication key"),
                                      ("PERMISSION_DENIED", "PERMISSION_DENIED", "Firebase Cloud Messaging API Admin")] {
            let detail = code != "PERMISSION_DENIED"
            let verdict = FCMVerdict.classify(status: code == "PERMISSION_DENIED" ? 403 : 401,
                                              error: FCMErrorBody.parse(Self.body(code, status: status, detail: detail)), retryAfter: nil)
            guard case .pauseCredential(let c, let message) = verdict else {
                Issue.record("\(code): \(verdict)")
                continue
            }
            #expect(c == FCMErrorCode(code))
            #expect(message.contains(words))
            #expect(Self.refunds(verdict))
        }
        let refusal = FCMTokenRefusal(status: 400, error: "invalid_grant", kind: .keyRejected)
        guard case .pauseCredential(_, let message) = FCMVerdict.tokenRefused(refusal) else {
            Issue.record("refused exchange does not pause")
            return
        }
        #expect(message.contains("deleted or disabled"))
    }

    /// Whether the worker gives the attempt back after `verdict` on a first attempt of ten
    /// (``Disposition/refundsAttempt``, what it writes back).
    static func refunds(_ verdict: FCMVerdict) -> Bool {
        Disposition.decide(outcome: .fcm(verdict), reason: nil, attempts: 1, maxAttempts: 10, lastReason: nil,
                           policy: RetryPolicy(baseSeconds: 1, capSeconds: 600, throttleDelaySeconds: 300), unitRandom: { 0.5 }).refundsAttempt
    }

    @Test func attemptsBurstsAndHealth() {
        #expect(Self.refunds(.backOffCredential(seconds: 1)))
        #expect(Self.refunds(.refreshAccessToken))
        #expect(!Self.refunds(.retry(.serverError(.unavailable), retryAfter: nil)))
        #expect(!Self.refunds(.fail(.invalidArgument)))
        #expect(FCMVerdict.fail(.senderIDMismatch).isBurstSuspect)
        #expect(!FCMVerdict.fail(.invalidArgument).isBurstSuspect)
        #expect(!FCMVerdict.invalidateToken(.unregistered).isBurstSuspect)
        #expect(FCMVerdict.retry(.serverError(.internalError), retryAfter: nil).healthSignal == .serverFailure)
        #expect(FCMVerdict.retry(.serverError(.unavailable), retryAfter: 3).healthSignal == .serverFailure)
        #expect(FCMVerdict.backOffCredential(seconds: 60).healthSignal == .reachable)
        #expect(FCMVerdict.retry(.unknown("X"), retryAfter: nil).healthSignal == .reachable)
        #expect(FCMVerdict.RetryKind.unknown("X").attemptLimit == 3)
        #expect(FCMVerdict.RetryKind.serverError(nil).attemptLimit == nil)
    }

    @Test func errorBodyPrefersTheFcmErrorDetail() {
        let parsed = FCMErrorBody.parse(Self.body("UNREGISTERED", status: "NOT_FOUND", message: "Requested entity was not found."))
        #expect(parsed == FCMErrorBody(code: .unregistered, message: "Requested entity was not found."))
        #expect(FCMErrorBody.parse(Self.body("", status: "UNAVAILABLE", detail: false))?.code == .unavailable)
        #expect(FCMErrorBody.parse(Array(#"{"error":{"message":"x"}}"#.utf8)) == FCMErrorBody(code: nil, message: "x"))
        #expect(FCMErrorBody.parse(Array("not json".utf8)) == nil)
        #expect(FCMErrorBody.parse(Array(#"{"error":"invalid_grant"}"#.utf8)) == nil)
        for code in FCMErrorCode.known { #expect(FCMErrorCode(code.rawValue) == code) }
        #expect(FCMErrorCode("SOMETHING_NEW") == .unknown("SOMETHING_NEW"))
    }

    @Test func successNames() {
        #expect(FCMSendSuccess.messageName(Array(#"{"name":"projects/p/messages/0:123%abc"}"#.utf8)) == "projects/p/messages/0:123%abc")
        #expect(FCMSendSuccess.messageName(Array(#"{"name":"nope"}"#.utf8)) == nil)
        #expect(FCMSendSuccess.messageName(Array("{}".utf8)) == nil)
    }

    @Test func retryAfterHeader() {
        let now: Int64 = 1_445_412_480  // Wed, 21 Oct 2015 07:28:00 GMT
        #expect(FCMVerdict.retryAfterSeconds("120", now: now) == 120)
        #expect(FCMVerdict.retryAfterSeconds(" 0 ", now: now) == 0)
        #expect(FCMVerdict.retryAfterSeconds("99999999", now: now) == 86_400)
        #expect(FCMVerdict.retryAfterSeconds("Wed, 21 Oct 2015 07:29:30 GMT", now: now) == 90)
        #expect(FCMVerdict.retryAfterSeconds("Wed, 21 Oct 2015 07:00:00 GMT", now: now) == 0)
        #expect(FCMVerdict.retryAfterSeconds("-5", now: now) == nil)
        #expect(FCMVerdict.retryAfterSeconds("soon", now: now) == nil)
        #expect(FCMVerdict.retryAfterSeconds(nil, now: now) == nil)
        #expect(FCMVerdict.retryAfterSeconds("", now: now) == nil)
        // A year whose seconds do not fit an Int64 is no date (it used to trap on overflow).
        #expect(FCMVerdict.retryAfterSeconds("Wed, 21 Oct 9223372036854775807 07:29:30 GMT", now: now) == nil)
        #expect(FCMVerdict.retryAfterSeconds("Fri, 31 Dec 9999 23:59:59 GMT", now: now) == 86_400)
    }
}
