import ArgumentParser

/// APNs, FCM and Web Push credential flags, shared by `pushq worker` (and `make run`); read by
/// ``Settings/credentials()``.
struct CredentialOptions: ParsableArguments {
    @Option(help: SettingKey.teamID.help())
    var teamID: String?
    @Option(help: SettingKey.keyID.help())
    var keyID: String?
    @Option(help: SettingKey.keyFile.help())
    var keyFile: String?
    @Option(help: SettingKey.certFile.help())
    var certFile: String?
    @Option(help: SettingKey.certPassword.help())
    var certPassword: String?
    @Option(help: SettingKey.credentialsFile.help("""
        Form: {"NAME": {"team_id": "...", "key_id": "...", "key_file": "...", "topic": "..."}, \
        "OTHER": {"cert_file": "...", "cert_password": "...", "topic": "..."}, \
        "ANDROID": {"type": "fcm", "service_account_file": "..."}, \
        "WEB": {"type": "webpush", "vapid_key_file": "...", "vapid_subject": "mailto:..."}}. "topic" (optional, APNs) is the bundle id for that \
        credential's rows whose topic is NULL (else --topic). A credential named "default" there replaces the one from the \
        flags above (of its provider). Every credential is loaded and checked at start.
        """))
    var credentialsFile: String?
    @Option(help: SettingKey.fcmServiceAccountFile.help("Rows with provider 'fcm' and no credential use it."))
    var fcmServiceAccountFile: String?
    @Option(name: .customLong("webpush-vapid-key-file"), help: SettingKey.webPushVAPIDKeyFile.help(
        "Rows with provider 'webpush' and no credential use it. `pushq webpush-key FILE` prints its applicationServerKey."))
    var webPushVAPIDKeyFile: String?
    @Option(name: .customLong("webpush-vapid-subject"), help: SettingKey.webPushVAPIDSubject.help(
        "E.g. mailto:push@example.com; localhost, .local, .test and IP addresses are refused (Apple answers 403 BadJwtToken)."))
    var webPushVAPIDSubject: String?

    /// The flags given, for ``Settings``.
    var flags: [SettingKey: String?] {
        [.teamID: teamID, .keyID: keyID, .keyFile: keyFile, .certFile: certFile, .certPassword: certPassword,
         .credentialsFile: credentialsFile, .fcmServiceAccountFile: fcmServiceAccountFile,
         .webPushVAPIDKeyFile: webPushVAPIDKeyFile, .webPushVAPIDSubject: webPushVAPIDSubject]
    }
}
