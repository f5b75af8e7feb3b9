/// Removes secrets from text about to be logged: the password of a connection URL or
/// conninfo string, bearer tokens and JWTs, PEM private keys; and the whole value of a field
/// whose name says it is a secret.
///
/// A second line of defence: pushq never puts secrets in its log messages on purpose; this
/// catches one that arrives inside an error text or a URL. Pure.
public enum SecretRedaction {
    /// What replaces a secret.
    public static let mask = "[redacted]"

    /// `text` with every secret it recognises replaced by ``mask``.
    public static func redact(_ text: String) -> String {
        guard mayHoldSecret(text) else { return text }
        var s = text
        s = s.replacing(#/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/#) { _ in mask }
        s = s.replacing(#/(?<head>[A-Za-z][A-Za-z0-9+.\-]*://[^:/@\s]*):[^@\s]*@/#) { "\($0.head):\(mask)@" }
        s = s.replacing(#/(?i)(?<key>password|passwd|pwd|secret|sslpassword)(?<eq>\s*[=:]\s*)(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^\s,;&]+)/#) {
            "\($0.key)\($0.eq)\(mask)"
        }
        s = s.replacing(#/(?i)(?<b>bearer\s+)[A-Za-z0-9._~+\/=\-]+/#) { "\($0.b)\(mask)" }
        s = s.replacing(#/eyJ[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]*/#) { _ in mask }
        return s
    }

    /// Whether a field of this name holds a secret (its whole value is replaced).
    public static func isSecretKey(_ key: String) -> Bool {
        let k = key.lowercased()
        return ["password", "passwd", "secret", "authorization", "private_key", "privatekey", "jwt", "bearer"].contains { k.contains($0) }
            || k.hasSuffix("token.value")
    }

    /// A cheap test that skips the patterns for ordinary text.
    private static func mayHoldSecret(_ text: String) -> Bool {
        let lower = text.lowercased()
        return ["://", "pass", "pwd", "secret", "bearer", "eyj", "private key"].contains { lower.contains($0) }
    }
}
