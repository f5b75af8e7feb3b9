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
}
