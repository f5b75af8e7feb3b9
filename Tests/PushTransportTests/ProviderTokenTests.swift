import COpenSSL
import PropertyBased
import PushCore
@testable import PushTransport
import Synchronization
import Testing

/// A clock tests move by hand.
final class FakeClock: Sendable {
    private let seconds: Mutex<Int64>
    init(_ start: Int64 = 1_800_000_000) { seconds = Mutex(start) }
    func now() -> Int64 { seconds.withLock { $0 } }
    func advance(_ s: Int64) { seconds.withLock { $0 += s } }
}

@Suite struct ES256SigningTests {
    @Test func signaturesVerifyWithTheMatchingPublicKey() throws {
        let pair = TestKeyPair.generate()
        let other = TestKeyPair.generate()
        let key = try ES256PrivateKey(pem: pair.privatePEM)
        for i in 0..<20 {
            let message = Array("message \(i)".utf8)
            let sig = try key.sign(message)
            #expect(sig.count == 64)
            #expect(verifyES256(message: message, rawSignature: sig, publicKeyPEM: pair.publicPEM))
            #expect(!verifyES256(message: message + [0], rawSignature: sig, publicKeyPEM: pair.publicPEM))
            #expect(!verifyES256(message: message, rawSignature: sig, publicKeyPEM: other.publicPEM))
        }
    }

    @Test func tokenIsAValidES256JWT() throws {
        let pair = TestKeyPair.generate()
        let clock = FakeClock()
        let manager = try ProviderTokenManager(teamID: "TEAM123456", keyID: "KEY1234567",
                                               key: ES256PrivateKey(pem: pair.privatePEM), clock: clock.now)
        let token = try manager.newest()
        let parts = token.value.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        #expect(parts.count == 3)
        #expect(Base64URL.decode(parts[0]).map { String(decoding: $0, as: UTF8.self) } == #"{"alg":"ES256","kid":"KEY1234567"}"#)
        #expect(Base64URL.decode(parts[1]).map { String(decoding: $0, as: UTF8.self) } == #"{"iss":"TEAM123456","iat":\#(clock.now())}"#)
        #expect(!token.value.contains("="))
        let signature = try #require(Base64URL.decode(parts[2]))
        #expect(verifyES256(message: Array((parts[0] + "." + parts[1]).utf8), rawSignature: signature, publicKeyPEM: pair.publicPEM))
    }

    @Test func rejectsBadKeysWithoutLeakingThem() throws {
        let garbage = Array("-----BEGIN PRIVATE KEY-----\nTUlJQ0VFSUtFWVNFQ1JFVA==\n-----END PRIVATE KEY-----\n".utf8)
        let error = try #require(throws: PushTransportError.self) { try ES256PrivateKey(pem: garbage) }
        #expect(error.code == .invalidKey)
        #expect(!error.description.contains("TUlJQ0VFSUtFWVNFQ1JFVA"))
        #expect(error.description.count > 40)  // carries OpenSSL's message
        let missing = try #require(throws: PushTransportError.self) { try ES256PrivateKey(file: "/nonexistent/AuthKey.p8") }
        #expect(missing.description.contains("/nonexistent/AuthKey.p8"))
    }

    @Test func rejectsOtherCurves() throws {
        // A P-384 key is a valid PKCS#8 EC key but not usable for ES256.
        let pkey = copenssl_ec_gen("P-384")!
        defer { EVP_PKEY_free(pkey) }
        let bio = BIO_new(BIO_s_mem())!
        defer { BIO_free(bio) }
        #expect(PEM_write_bio_PrivateKey(bio, pkey, nil, nil, 0, nil, nil) == 1)
        var pem = [UInt8](repeating: 0, count: 4096)
        let n = BIO_read(bio, &pem, 4096)
        let error = try #require(throws: PushTransportError.self) { try ES256PrivateKey(pem: Array(pem.prefix(Int(n)))) }
        #expect(error.description.contains("P-256"))
    }
}

@Suite struct TokenRotationTests {
    func makeManager(_ clock: FakeClock) throws -> ProviderTokenManager {
        try ProviderTokenManager(teamID: "TEAM123456", keyID: "KEY1234567",
                                 key: ES256PrivateKey(pem: TestKeyPair.generate().privatePEM), clock: clock.now)
    }

    @Test func mintsAtMostOncePer25Minutes() throws {
        let clock = FakeClock()
        let manager = try makeManager(clock)
        let first = try manager.newest()
        clock.advance(24 * 60 + 59)
        #expect(try manager.newest() == first)
        clock.advance(1)
        let second = try manager.newest()
        #expect(second != first && second.issuedAt == clock.now())
        #expect(manager.mintedCount == 2)
    }

    @Test func connectionKeepsItsTokenUntil50Minutes() throws {
        let clock = FakeClock()
        let manager = try makeManager(clock)
        let held = try manager.newest()
        clock.advance(30 * 60)
        _ = try manager.newest()  // another connection opening mints a newer one
        #expect(try manager.refresh(held) == held)
        clock.advance(20 * 60 - 1)
        #expect(try manager.refresh(held) == held)
        clock.advance(1)
        let switched = try manager.refresh(held)
        #expect(switched != held)
    }

    /// Simulates connections opening at random times over 6 hours, each checking its
    /// token every minute: no token is ever used at 60 minutes or older, and no
    /// connection switches twice within 20 minutes.
    @Test func rotationRuleHoldsForEveryConnection() throws {
        let clock = FakeClock()
        let manager = try makeManager(clock)
        var rng = Xoshiro(seed: (42, 0x9E37_79B9_7F4A_7C15, 0xBF58_476D_1CE4_E5B9, 0x94D0_49BB_1331_11EB))
        struct Conn { var token: ProviderTokenManager.Token; var lastSwitch: Int64 }
        var connections: [Conn] = []
        for minute in 0..<(6 * 60) {
            if minute % 7 == 0 || rng.next() % 5 == 0 {
                connections.append(Conn(token: try manager.newest(), lastSwitch: clock.now()))
            }
            for i in connections.indices {
                let next = try manager.refresh(connections[i].token)
                if next != connections[i].token {
                    #expect(clock.now() - connections[i].lastSwitch >= 20 * 60)
                    connections[i] = Conn(token: next, lastSwitch: clock.now())
                }
                #expect(clock.now() - connections[i].token.issuedAt < 60 * 60)
            }
            clock.advance(60)
        }
        #expect(manager.mintedCount >= 6 * 60 / 25 - 1 && manager.mintedCount <= 6 * 60 / 25 + 1)
    }

    @Test func expiredTokenRenewsOnceForManyConcurrentFailures() async throws {
        let clock = FakeClock()
        let manager = try makeManager(clock)
        let failed = try manager.newest()
        let renewed = await withTaskGroup(of: ProviderTokenManager.Token.self) { group in
            for _ in 0..<64 { group.addTask { try! manager.renew(after: failed) } }
            var all = Set<ProviderTokenManager.Token>()
            for await t in group { all.insert(t) }
            return all
        }
        #expect(renewed.count == 1)
        #expect(renewed.first != failed)
        #expect(manager.mintedCount == 2)
        // A late failure reported with the old token does not mint again.
        #expect(try manager.renew(after: failed) == renewed.first)
        #expect(manager.mintedCount == 2)
    }

    @Test func rejectsBadIDsAndIntervals() throws {
        let key = try ES256PrivateKey(pem: TestKeyPair.generate().privatePEM)
        #expect(throws: PushTransportError.self) { try ProviderTokenManager(teamID: "TE\"AM", keyID: "KEY1234567", key: key) }
        #expect(throws: PushTransportError.self) { try ProviderTokenManager(teamID: "TEAM123456", keyID: "KEY1234567", key: key, mintInterval: 2000, switchAge: 3000) }
    }
}

/// The host's clock stepped back (NTP, a VM restored) after tokens were signed.
@Suite struct TokenClockJumpTests {
    /// after a 2 h backward jump, newest() signs a new token at once (one, however many callers) and
    /// refresh() moves a connection to it
    @Test("after a 2 h backward jump newest() signs one new token at once, and refresh() moves a connection to it")
    func backwardJumpResigns() throws {
        let clock = FakeClock()
        let manager = try ProviderTokenManager(teamID: "TEAM123456", keyID: "KEY1234567",
                                               key: ES256PrivateKey(pem: TestKeyPair.generate().privatePEM), clock: clock.now)
        let before = try manager.newest()
        clock.advance(-2 * 3600)
        let after = try manager.newest()
        #expect(after.serial == before.serial + 1 && after.issuedAt == clock.now())
        #expect(try manager.newest() == after)
        #expect(try manager.refresh(before) == after)
        #expect(try manager.refresh(after) == after)
        #expect(manager.mintedCount == 2)
        // A later step back within the token's life (1 s) re-signs too: its iat is in the future again.
        clock.advance(-1)
        #expect(try manager.refresh(after).serial == 3)
    }
}
