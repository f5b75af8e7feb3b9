import Foundation
import PushCore
import PushTransport

extension Settings {
    /// The Web Push `default` credential: the key of `PUSHQ_WEBPUSH_VAPID_KEY_FILE` with the
    /// subject of `PUSHQ_WEBPUSH_VAPID_SUBJECT`; nil when neither is given. The subject is checked
    /// before the key file is read.
    ///
    /// - Throws: ``SettingError`` for one without the other; ``CommandFailure`` naming the setting
    ///   for a subject push services refuse (`localhost`, `.local`, …) or a key that cannot be read.
    func defaultWebPushCredential() throws -> WebPushCredential? {
        let keyFile = given(.webPushVAPIDKeyFile), subject = given(.webPushVAPIDSubject)
        guard let keyFile else {
            guard let subject else { return nil }
            throw SettingError(setting: subject.name, value: subject.text,
                               expected: "\(SettingKey.webPushVAPIDKeyFile.variable) too: the subject is named by that key's tokens")
        }
        guard let subject else {
            throw SettingError(setting: keyFile.name, value: keyFile.text, expected: "\(SettingKey.webPushVAPIDSubject.variable) too "
                               + "(Web Push needs a contact: a mailto: or https: URI on a public domain, e.g. mailto:push@example.com)")
        }
        let checked: VAPIDSubject
        do {
            checked = try VAPIDSubject(subject.text)
        } catch {
            throw CommandFailure(error.message.replacingOccurrences(of: SettingKey.webPushVAPIDSubject.variable, with: subject.name))
        }
        do {
            return WebPushCredential(key: try VAPIDKey(file: keyFile.text), subject: checked)
        } catch {
            throw CommandFailure("\(keyFile.name): \(error)")
        }
    }

    /// How the Web Push senders connect: the extra CA (`PUSHQ_WEBPUSH_CA_FILE`, else
    /// `PUSHQ_CA_FILE`'s), the origins exempt from the address checks and the bound on connections.
    ///
    /// - Throws: ``SettingError`` naming the flag or variable whose value is not allowed;
    ///   ``CommandFailure`` naming the allowed origins' setting and the entry that is not an origin.
    func webPushConfiguration() throws -> WebPushConfiguration {
        var c = WebPushConfiguration()
        c.extraCAFile = try text(.webPushCAFile) ?? text(.caFile)
        if let given = given(.webPushAllowedOrigins) {
            do {
                c.allowedOrigins = try WebPushEndpointPolicy.parseAllowedOrigins(given.text)
            } catch {
                throw CommandFailure(error.message.replacingOccurrences(of: SettingKey.webPushAllowedOrigins.variable, with: given.name))
            }
        }
        if let n = try wholeNumber(.webPushMaxConnections) { c.maxConnections = n }
        return c
    }
}
