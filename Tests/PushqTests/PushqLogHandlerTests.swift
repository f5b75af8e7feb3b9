import Foundation
import Logging
@testable import pushq
import Synchronization
import Testing

/// Lines a ``PushqLogHandler`` wrote.
private final class Lines: Sendable {
    let value = Mutex<[String]>([])
    var all: [String] { value.withLock { $0 } }
    func append(_ line: String) { value.withLock { $0.append(line) } }
}

@Suite("PushqLogHandler")
struct PushqLogHandlerTests {
    @Test("the log handler masks secrets in both formats: in the message, in values, and whole values under secret keys")
    func handlerMasksSecrets() throws {
        for format in PushqLogHandler.Format.allCases {
            let lines = Lines()
            var logger = Logger(label: "pushq.test") { PushqLogHandler(label: $0, format: format, write: { lines.append($0) }) }
            logger.logLevel = .debug
            logger[metadataKey: "worker.id"] = "w1"
            logger.error("cannot connect to postgresql://pushq:hunter2@db.example/pushq", metadata: [
                "error": "host=db password=hunter2 sslmode=require",
                "certificate.password": "hunter2",
                "nested": .dictionary(["apns.jwt": "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJUIn0.aHVudGVyMg", "count": "3"]),
                "list": .array(["bearer hunter2", "plain"]),
            ])
            logger.trace("not logged below debug")
            #expect(lines.all.count == 1, "\(format)")
            let line = try #require(lines.all.first)
            #expect(line.hasSuffix("\n"))
            #expect(!line.contains("hunter2") && !line.contains("aHVudGVyMg"), "\(format): \(line)")
            if format == .json {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                #expect(object["level"] as? String == "error")
                #expect(object["label"] as? String == "pushq.test")
                #expect(object["message"] as? String == "cannot connect to postgresql://pushq:[redacted]@db.example/pushq")
                let metadata = try #require(object["metadata"] as? [String: Any])
                #expect(metadata["worker.id"] as? String == "w1")
                #expect(metadata["certificate.password"] as? String == "[redacted]")
                #expect(metadata["error"] as? String == "host=db password=[redacted] sslmode=require")
                #expect(metadata["nested"] as? [String: String] == ["apns.jwt": "[redacted]", "count": "3"])
                #expect(metadata["list"] as? [String] == ["bearer [redacted]", "plain"])
            } else {
                #expect(line.contains(" error pushq.test :"), "\(line)")
                #expect(line.contains("worker.id=w1"))
            }
        }
    }
}
