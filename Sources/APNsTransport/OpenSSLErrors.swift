import COpenSSL

/// Drains OpenSSL's thread-local error queue into one message (`ERR_error_string_n`).
///
/// Returns `fallback` when the queue is empty. Always leaves the queue empty, so a
/// later failure does not report this one's errors.
func openSSLErrorMessage(fallback: String) -> String {
    var messages: [String] = []
    while true {
        let code = ERR_get_error()
        if code == 0 { break }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
    return messages.isEmpty ? fallback : messages.joined(separator: "; ")
}
