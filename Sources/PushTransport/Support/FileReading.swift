#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a whole (small) file with POSIX calls; throws the `errno` message.
func readWholeFile(_ path: String) throws -> [UInt8] {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw POSIXFileError(path: path, errno: errno) }
    defer { close(fd) }
    var result: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 {
            if errno == EINTR { continue }
            throw POSIXFileError(path: path, errno: errno)
        }
        if n == 0 { break }
        result.append(contentsOf: chunk.prefix(n))
        if result.count > 16 << 20 { throw POSIXFileError(path: path, errno: EFBIG) }
    }
    return result
}

/// A file that could not be read, with `strerror`'s text.
struct POSIXFileError: Error, Sendable, CustomStringConvertible {
    var path: String
    var errno: Int32
    var description: String { "\(path): \(String(cString: strerror(errno)))" }
}
