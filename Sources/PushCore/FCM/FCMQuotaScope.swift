/// Whose sending rate an FCM 429 (`QUOTA_EXCEEDED`, `RESOURCE_EXHAUSTED`) is about.
///
/// FCM uses the same code for the project's quota (a Cloud quota: `"Quota exceeded for quota
/// metric 'Send requests' … for consumer 'project_number:…'"`, with a `google.rpc.ErrorInfo`
/// detail naming `quota_metric` and a `quota_limit` such as `SendsPerMinutePerProject`) and
/// for one device's message rate ("Device message rate exceeded"). Read from the error body
/// by ``FCMErrorBody/parse(_:)``:
/// - **device** when the message, a `google.rpc.QuotaFailure` violation or the ErrorInfo's
///   quota names a device;
/// - else **project** when they name a project or a Cloud quota metric (`quota_metric`,
///   `quota_limit`, "quota metric", "project");
/// - else nil: the answer does not say (a bare 429). Such answers are treated like the
///   device's, and the ``Decider`` holds the credential only when several different tokens get
///   them (``Decider/quotaTokensToHold``).
public enum FCMQuotaScope: String, Sendable, Hashable {
    case device, project

    static let errorInfoType = "type.googleapis.com/google.rpc.ErrorInfo"
    static let quotaFailureType = "type.googleapis.com/google.rpc.QuotaFailure"

    /// The scope an error object (`{"message":…, "details":[…]}`) names, if any.
    static func read(_ error: JSONValue) -> FCMQuotaScope? {
        var texts: [String] = [error["message"]?.stringValue ?? ""]
        var namesCloudQuota = false
        for detail in error["details"]?.arrayValue ?? [] {
            switch detail["@type"]?.stringValue {
            case errorInfoType?:
                for key in ["quota_metric", "quota_limit", "quota_unit"] {
                    guard let value = detail["metadata"]?[key]?.stringValue else { continue }
                    namesCloudQuota = true
                    texts.append(value)
                }
            case quotaFailureType?:
                for violation in detail["violations"]?.arrayValue ?? [] {
                    texts.append(violation["subject"]?.stringValue ?? "")
                    texts.append(violation["description"]?.stringValue ?? "")
                }
            default:
                break
            }
        }
        let text = texts.joined(separator: " ").lowercased()
        if text.contains("device") { return .device }
        if namesCloudQuota || text.contains("project") || text.contains("quota metric") { return .project }
        return nil
    }
}
