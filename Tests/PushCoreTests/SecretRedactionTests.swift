import PropertyBased
import PushCore
import Testing

@Suite("SecretRedaction")
struct SecretRedactionTests {
    @Test("secrets inside text are replaced; the rest is kept", arguments: [
        ("postgresql://pushq:s3cret@db.example:5432/pushq", "postgresql://pushq:[redacted]@db.example:5432/pushq"),
        ("cannot connect to postgres://u:p%40ss@h/db: refused", "cannot connect to postgres://u:[redacted]@h/db: refused"),
        ("host=db user=pushq password=s3cret dbname=pushq", "host=db user=pushq password=[redacted] dbname=pushq"),
        ("host=db password='s3 cret' dbname=pushq", "host=db password=[redacted] dbname=pushq"),
        ("authorization: bearer eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJUIn0.c2ln", "authorization: bearer [redacted]"),
        ("token eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJUIn0.c2ln sent", "token [redacted] sent"),
        ("key -----BEGIN PRIVATE KEY-----\nMIGH\n-----END PRIVATE KEY----- end", "key [redacted] end"),
        ("PUSHQ_APNS_CERT_PASSWORD=hunter2", "PUSHQ_APNS_CERT_PASSWORD=[redacted]"),
        ("postgresql://pushq@db.example/pushq", "postgresql://pushq@db.example/pushq"),
        ("https://api.push.apple.com:443/3/device/abc", "https://api.push.apple.com:443/3/device/abc"),
        ("worker started", "worker started"),
    ])
    func redact(text: String, expected: String) {
        #expect(SecretRedaction.redact(text) == expected)
    }

    @Test("fields named as secrets are masked whole", arguments: [
        ("certificate.password", true), ("apns.jwt", true), ("pg.password", true), ("http.authorization", true),
        ("apns.reason", false), ("notification.id", false), ("worker.id", false), ("error", false),
    ])
    func keys(key: String, secret: Bool) {
        #expect(SecretRedaction.isSecretKey(key) == secret)
    }

    /// The five regular expressions `SecretRedaction` implements by hand (in its order), kept
    /// here as the reference: the worker does not load the regex engine, the test does.
    static func reference(_ text: String) -> String {
        let mask = SecretRedaction.mask
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

    /// Text made of the pieces the patterns look for, in any order: most strings hold a near
    /// miss of some pattern (a name without a value, a quote never closed, a key never ended).
    static let pieces = Gen<String?>.element(of: [
        "password", "PassWD", "pwd", "secret", "sslpassword", "=", ":", " ", "\t", "\n", "'", "\"", "\\", ",", ";", "&",
        "bearer", "Bearer ", "eyJ", "abc", "Z9", ".", "-", "_", "~", "+", "/", "@", "postgresql://", "https://", "u",
        "-----BEGIN ", "RSA ", "PRIVATE KEY-----", "-----END ", "EC ", "x", "é",
    ]).map { $0! }.array(of: 0...14).map { $0.joined() }

    @Test("the scanners agree with the regular expressions they replace, on generated text")
    func agreesWithReference() async {
        await propertyCheck(count: 5000, input: Self.pieces) { text in
            #expect(SecretRedaction.redact(text) == Self.reference(text), "\(text.debugDescription)")
        }
    }
}

