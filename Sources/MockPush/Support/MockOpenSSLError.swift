import COpenSSL

/// OpenSSL's error queue as one string (and cleared).
///
/// pushq's transport has the same function (PushTransport/Support/OpenSSLErrors.swift); the mock keeps its
/// own because it depends on nothing of pushq's (a user's tests link it without the transport),
/// and six lines do not justify a module both would share.
func openSSLErrorMessage() -> String {
    var messages: [String] = []
    while true {
        let code = ERR_get_error()
        if code == 0 { break }
        var buf = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buf, buf.count)
        messages.append(String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
    return messages.isEmpty ? "no OpenSSL error" : messages.joined(separator: "; ")
}
