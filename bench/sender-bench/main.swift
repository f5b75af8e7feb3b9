// sender-bench: notifications/s of PushSender alone (APNs, FCM with --fcm, Web Push with --webpush), against a running mock.
//
// usage: sender-bench URL KEY_FILE KEY_ID TEAM_ID CONNECTIONS STREAMS TOTAL CAFILE [TOPIC]
//        sender-bench --fcm URL RSA_KEY_PEM PROJECT_ID CLIENT_EMAIL KEY_ID CONNECTIONS STREAMS TOTAL CAFILE
//        sender-bench --webpush URL CONNECTIONS STREAMS TOTAL CAFILE [SUBSCRIPTIONS]
// --webpush: a WebPushSender (fresh VAPID key) posting TOTAL messages round-robin to SUBSCRIPTIONS
//        (100) subscriptions the mock at URL makes (its origin allowlisted: 127.0.0.1), each
//        encrypted with a fresh key pair; the mock decrypts one message in 100 (POST
//        /_mock/webpush/decrypt-sample), so that its own ECDH does not decide the figure, and is set
//        back to every message after. Adds crypto_us_per_req (the same encryption timed alone after
//        the run, one thread, process CPU) and crypto_share (crypto_us_per_req / cpu_us_per_req).
//        sender-bench --print-jwt KEY_FILE KEY_ID TEAM_ID
//        sender-bench --webpush-crypto N
// --webpush-crypto: the encryption alone, as a Web Push sender does it for each message (fresh key
//        pair and salt, the subscription's point imported, ECDH, HKDF, AES-128-GCM) of the same
//        198-byte payload, N times after 200 of warm-up, one thread, no mock: prints
//        "crypto_us_per_req=C" (process CPU per message). scripts/bench's webpush part divides it by
//        the worker's CPU per Web Push notification, measured in the same run.
// APNs: APNS_PAYLOAD_BYTES=N pads the payload to N bytes (4 096 at most).
// --fcm: the same workload sent to FCM's messages:send at URL (the mock's), as a service account
//        whose token_uri is URL/token; the access token is fetched before the clock starts.
// prints: "requests=N ok=N failed=N seconds=S rate=R cpu_us_per_req=C" (same line as bench/curl-floor.c;
//         C is process CPU, user+sys, from start() to the last result, per request)
//
// Requests are built before the clock starts; the timed part is submit → last result,
// with the whole workload handed over in batches of 1000, as the worker does.
import Dispatch
import Foundation
import Logging
import PushCore
import PushTransport
import Synchronization

let args = CommandLine.arguments
if args.count == 5, args[1] == "--print-jwt" {
    let manager = try ProviderTokenManager(teamID: args[4], keyID: args[3], keyFile: args[2])
    print(try manager.newest().value)
    exit(0)
}
let webPushPayload = Array(#"{"web_push":8030,"notification":{"title":"Hello","body":"A message of about two hundred bytes, as a typical notification carries, with a navigate URL.","navigate":"https://example.com/inbox/12345"}}"#.utf8)
func cpuMicroseconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
}
/// CPU microseconds per encryption of `webPushPayload` for `keys`, over `n` after 200 of warm-up.
func encryptionMicroseconds(_ n: Int, for keys: WebPushKeys) throws -> Double {
    let encryptor = try WebPushEncryptor()
    for _ in 0..<200 { _ = try encryptor.encrypt(webPushPayload, for: keys) }
    let c0 = cpuMicroseconds()
    for _ in 0..<n { _ = try encryptor.encrypt(webPushPayload, for: keys) }
    return (cpuMicroseconds() - c0) / Double(n)
}
if args.count == 3, args[1] == "--webpush-crypto", let n = Int(args[2]), n > 0 {
    // A subscription's keys as a browser makes them: a P-256 point and a 16-byte auth secret.
    let keys = try WebPushKeys(p256dh: try WebPushKeyPair.generate().publicKey, auth: (0..<16).map { _ in UInt8.random(in: 0...255) })
    print("crypto_us_per_req=\(String(format: "%.1f", try encryptionMicroseconds(n, for: keys)))")
    exit(0)
}
let fcm = args.count == 11 && args[1] == "--fcm"
let webPush = (args.count == 7 || args.count == 8) && args[1] == "--webpush"
let shape = fcm ? Array(args[7...9]) : webPush ? Array(args[3...5]) : (args.count >= 9 ? Array(args[5...7]) : [])
guard shape.count == 3, let connections = Int(shape[0]), let streams = Int(shape[1]), let total = Int(shape[2]) else {
    FileHandle.standardError.write(Data("usage: sender-bench URL KEY_FILE KEY_ID TEAM_ID CONNECTIONS STREAMS TOTAL CAFILE [TOPIC]\n       sender-bench --fcm URL RSA_KEY_PEM PROJECT_ID CLIENT_EMAIL KEY_ID CONNECTIONS STREAMS TOTAL CAFILE\n       sender-bench --webpush URL CONNECTIONS STREAMS TOTAL CAFILE [SUBSCRIPTIONS]\n       sender-bench --webpush-crypto N\n".utf8))
    exit(2)
}
let topic = !fcm && args.count > 9 ? args[9] : "com.example.pushq.test"
var logger = Logger(label: "sender-bench")
logger.logLevel = .warning

let configuration = PushSenderConfiguration(extraCAFile: fcm ? args[10] : webPush ? args[6] : args[8], connections: connections, connectionStagger: 0)

final class Counter: Sendable {
    let state = Mutex((ok: 0, failed: 0))
    let done = DispatchSemaphore(value: 0)
    let reported = Atomic(0)
    let total: Int
    init(total: Int) { self.total = total }
    func add(_ batch: [PushResponse]) {
        var ok = 0
        for r in batch {
            if r.status == 200 || r.status == 201 { ok += 1; continue }
            // The first few failures, to see what they were (never a token: outcomes carry none).
            if reported.add(1, ordering: .relaxed).oldValue < 5 {
                FileHandle.standardError.write(Data("sender-bench: request \(r.tag) failed: \(r.outcome)\n".utf8))
            }
        }
        let finished = state.withLock { s -> Bool in
            s.ok += ok
            s.failed += batch.count - ok
            return s.ok + s.failed == total
        }
        if finished { done.signal() }
    }
}
let counter = Counter(total: total)
/// What the bench starts, submits to and stops: a PushSender, or a WebPushSender.
protocol BenchSender: Sendable {
    func start() throws
    func submit(_ batch: [PushRequest]) throws
    func shutdown(deadline: Duration) async -> [PushRequest]
    func stats() -> PushSender.Stats
}
extension PushSender: BenchSender {}
extension WebPushSender: BenchSender {}

/// POSTs `body` to the mock's control endpoint `path` with /usr/bin/curl; its answer.
func mockControl(_ path: String, _ body: String, url: String, caFile: String) throws -> [UInt8] {
    let curl = Process()
    curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    curl.arguments = ["-sS", "--fail", "--cacert", caFile, "-H", "content-type: application/json", "--data-binary", body, url + path]
    let out = Pipe()
    curl.standardOutput = out
    try curl.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    curl.waitUntilExit()
    guard curl.terminationStatus == 0 else { throw PushTransportError(.configuration, "curl \(path) failed (\(curl.terminationStatus))") }
    return Array(data)
}

let sender: any BenchSender
let requests: [PushRequest]
var webPushKeys: WebPushKeys?
if webPush {
    let url = args[2], caFile = args[6]
    let count = args.count == 8 ? Int(args[7]) ?? 100 : 100
    var subscriptions: [(endpoint: WebPushEndpoint, keys: WebPushKeys)] = []
    for _ in 0..<count {
        let json = JSONValue.parse(try mockControl("/_mock/webpush/subscriptions", "{}", url: url, caFile: caFile))
        guard let endpoint = json?["endpoint"]?.stringValue, let keys = json?["keys"],
              let p256dh = keys["p256dh"]?.stringValue, let auth = keys["auth"]?.stringValue else {
            throw PushTransportError(.configuration, "the mock at \(url) made no Web Push subscription")
        }
        subscriptions.append((try WebPushEndpoint.parse(endpoint).get(), try WebPushKeys(p256dh: p256dh, auth: auth)))
    }
    webPushKeys = subscriptions.first?.keys
    _ = try mockControl("/_mock/webpush/decrypt-sample", #"{"oneIn":100}"#, url: url, caFile: caFile)
    let credential = WebPushCredential(key: try VAPIDKey(pem: try VAPIDKey.generatePEM()), subject: try VAPIDSubject("mailto:bench@example.com"))
    // WEBPUSH_MAX_CONNECTIONS: PUSHQ_WEBPUSH_MAX_CONNECTIONS's value for the run (64, its default, when unset).
    let maxConnections = ProcessInfo.processInfo.environment["WEBPUSH_MAX_CONNECTIONS"].flatMap { Int($0) } ?? 64
    var webConfiguration = WebPushConfiguration(allowedOrigins: try WebPushEndpointPolicy.parseAllowedOrigins(url), maxConnections: maxConnections)
    webConfiguration.streamsPerThread = streams
    sender = try WebPushSender(configuration: configuration, webPush: webConfiguration, credential: credential, logger: logger,
                               onResults: { counter.add($0) })
    requests = (0..<total).map { i in
        let s = subscriptions[i % subscriptions.count]
        return PushRequest(tag: Int64(i), deviceToken: s.endpoint.text, payload: webPushPayload,
                           fields: .webPush(WebPushFields(endpoint: s.endpoint, keys: s.keys, urgency: .normal)))
    }
} else if fcm {
    let pem = String(decoding: FileManager.default.contents(atPath: args[3]) ?? Data(), as: UTF8.self)
    let fields = [("type", "service_account"), ("project_id", args[4]), ("private_key_id", args[6]), ("private_key", pem),
                  ("client_email", args[5]), ("token_uri", args[2] + "/token")]
    let json = "{" + fields.map { JSONValue.quoted($0.0) + ":" + JSONValue.quoted($0.1) }.joined(separator: ",") + "}"
    let account = try FCMServiceAccount(json: Array(json.utf8), file: args[3])
    let tokens = try FCMAccessTokenProvider(account: account, configuration: FCMTokenExchangeConfiguration(extraCAFile: args[10]), logger: logger)
    let granted = DispatchSemaphore(value: 0)
    Task.detached {  // not the main actor: the main thread waits below
        _ = try? await tokens.accessToken()
        granted.signal()
    }
    granted.wait()
    sender = try PushSender(configuration: configuration, fcm: FCMConfiguration(baseURL: args[2], streamsPerConnection: streams), tokens: tokens,
                            logger: logger, onResults: { counter.add($0) })
    let payload = Array(#"{"notification":{"title":"bench"}}"#.utf8)
    requests = (0..<total).map { i in
        let token = "bench:" + String(i, radix: 16) + String(repeating: "x", count: 140)
        return PushRequest(tag: Int64(i), deviceToken: token, payload: try! FCMMessageBody.build(payload: payload, token: token).get(),
                           fields: .fcm)
    }
} else {
    let manager = try ProviderTokenManager(teamID: args[4], keyID: args[3], keyFile: args[2])
    sender = try PushSender(configuration: configuration, apns: APNsConfiguration(baseURL: args[1], streamsPerConnection: streams),
                            credential: .token(manager), logger: logger,
                            onResults: { counter.add($0) })
    // APNS_PAYLOAD_BYTES=N: the payload padded to N bytes (at most APNs' 4 096), to see large bodies
    // against HTTP/2's flow-control window as Web Push's encrypted ones are.
    var payload = Array(#"{"aps":{"alert":"bench"}}"#.utf8)
    if let size = ProcessInfo.processInfo.environment["APNS_PAYLOAD_BYTES"].flatMap({ Int($0) }), size > payload.count + 8 {
        payload = Array((#"{"aps":{"alert":"bench"},"p":""# + String(repeating: "x", count: min(size, 4096) - payload.count - 7) + "\"}").utf8)
    }
    requests = (0..<total).map { i in
        let hex = String(i, radix: 16)
        let headers = APNsHeaders(pushType: .alert, topic: topic, priority: 10,
                                  apnsID: "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - hex.count) + hex)
        return PushRequest(tag: Int64(i), deviceToken: String(repeating: "0", count: 64 - hex.count) + hex, payload: payload,
                           fields: .apns(headers))
    }
}
let cpuStart = cpuMicroseconds()
try sender.start()
let start = DispatchTime.now()
for chunk in stride(from: 0, to: total, by: 1000) {
    try sender.submit(Array(requests[chunk..<min(chunk + 1000, total)]))
}
while counter.done.wait(timeout: .now() + 60) == .timedOut {
    let (ok, failed) = counter.state.withLock { ($0.ok, $0.failed) }
    FileHandle.standardError.write(Data("sender-bench: still waiting after 60 s: ok=\(ok) failed=\(failed) of \(total); \(sender.stats())\n".utf8))
}
let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
let cpuPerRequest = (cpuMicroseconds() - cpuStart) / Double(total)
let (ok, failed) = counter.state.withLock { ($0.ok, $0.failed) }
FileHandle.standardOutput.write(Data(("requests=\(ok + failed) ok=\(ok) failed=\(failed) seconds=\(String(format: "%.3f", seconds)) rate=\(Int((Double(ok + failed) / seconds).rounded())) cpu_us_per_req=\(String(format: "%.1f", cpuPerRequest))\n").utf8))
let shutdown = DispatchSemaphore(value: 0)
Task.detached {  // not the main actor: the main thread is blocked below
    _ = await sender.shutdown(deadline: .seconds(5))
    shutdown.signal()
}
shutdown.wait()
if webPush, let keys = webPushKeys {
    _ = try? mockControl("/_mock/webpush/decrypt-sample", #"{"oneIn":1}"#, url: args[2], caFile: args[6])
    // The encryption alone, as the sender's threads do it for each message (fresh key pair, ECDH,
    // HKDF, AES-128-GCM), one thread, process CPU.
    let crypto = try encryptionMicroseconds(min(total, 5000), for: keys)
    FileHandle.standardOutput.write(Data("crypto_us_per_req=\(String(format: "%.1f", crypto)) crypto_share=\(String(format: "%.2f", crypto / cpuPerRequest))\n".utf8))
}
exit(failed == 0 ? 0 : 1)
