/// Web Push's settings (issue 47): the `default` credential (a VAPID key and its subject), the
/// extra CA, the origins exempt from the address checks, and the bound on connections.
extension SettingKey {
    static let webPushVAPIDKeyFile = SettingKey(
        variable: "PUSHQ_WEBPUSH_VAPID_KEY_FILE", flag: "--webpush-vapid-key-file", defaultValue: "none", kind: .file,
        summary: "The Web Push default credential's VAPID key: a P-256 private key, PEM (PKCS#8 or SEC1).")
    static let webPushVAPIDSubject = SettingKey(
        variable: "PUSHQ_WEBPUSH_VAPID_SUBJECT", flag: "--webpush-vapid-subject", defaultValue: "none", kind: .text,
        summary: "The contact the VAPID tokens name, a mailto: or https: URI on a public domain; required with the key.")
    static let webPushCAFile = SettingKey(
        variable: "PUSHQ_WEBPUSH_CA_FILE", flag: "--webpush-ca-file", defaultValue: "none", kind: .file,
        summary: "Extra trusted CA certificate (PEM) for Web Push's push services, added to the system's roots; when unset, PUSHQ_CA_FILE's.")
    static let webPushAllowedOrigins = SettingKey(
        variable: "PUSHQ_WEBPUSH_ALLOWED_ORIGINS", flag: "--webpush-allowed-origins", defaultValue: "none", kind: .text,
        summary: "Comma-separated https://host[:port] origins Web Push may send to whatever address they resolve to (private ones included).")
    static let webPushMaxConnections = SettingKey(
        variable: "PUSHQ_WEBPUSH_MAX_CONNECTIONS", flag: "--webpush-max-connections", defaultValue: "64", kind: .wholeNumber(1...10_000),
        summary: "Web Push connections one worker holds open, over all origins; idle ones close first.")
}
