import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// A `curl_slist` of request headers whose nodes are reused for every request.
///
/// Each node's string is allocated once by `curl_slist_append` with room for
/// ``capacities``, then overwritten in place before each transfer: no allocation per
/// request. A node holding an empty string is ignored by libcurl (it has no colon), which
/// is how optional headers are left out. The list is freed in `deinit`; libcurl keeps a
/// pointer to it (`CURLOPT_HTTPHEADER`) for as long as the owning ``StreamSlot`` lives.
final class CurlHeaderList {
    private(set) var list: UnsafeMutablePointer<curl_slist>?
    private var nodes: [UnsafeMutablePointer<CChar>] = []
    private let capacities: [Int]

    /// - Parameter capacities: the byte capacity of each node, terminating NUL included.
    init(capacities: [Int]) throws {
        precondition(capacities.allSatisfy { $0 >= 2 }, "a header node needs room for one byte and its NUL")
        self.capacities = capacities
        for capacity in capacities {
            let placeholder = String(repeating: "x", count: capacity - 1)
            guard let appended = curl_slist_append(list, placeholder) else {
                // Every stored property is set: `deinit` runs and frees the nodes appended so far.
                throw PushTransportError(.curlSetup, "curl_slist_append failed (out of memory)")
            }
            list = appended
        }
        var node = list
        while let n = node {
            nodes.append(n.pointee.data)
            n.pointee.data[0] = 0
            node = n.pointee.next
        }
    }

    deinit { curl_slist_free_all(list) }

    /// Writes `prefix` then `value` into node `index`; false (and the node cleared) if it
    /// does not fit. The value is copied as it is: callers check it holds no CR, LF or NUL
    /// (``PushProvider/problem(with:)``).
    func set(_ index: Int, prefix: StaticString, value: String) -> Bool {
        var value = value
        return value.withUTF8 { v in
            let p = prefix.utf8CodeUnitCount
            guard p + v.count < capacities[index] else { nodes[index][0] = 0; return false }
            let dest = UnsafeMutableRawPointer(nodes[index])
            dest.copyMemory(from: prefix.utf8Start, byteCount: p)
            if let base = v.baseAddress { (dest + p).copyMemory(from: base, byteCount: v.count) }
            nodes[index][p + v.count] = 0
            return true
        }
    }

    /// Writes `prefix` then the decimal `value` into node `index`; false (and the node
    /// cleared) if it does not fit.
    func set(_ index: Int, prefix: StaticString, integer value: Int64) -> Bool {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes of scratch, on the stack
        return withUnsafeMutableBytes(of: &digits) { scratch in
            var n = value.magnitude
            var i = scratch.count
            repeat {
                i -= 1
                scratch[i] = UInt8(ascii: "0") + UInt8(n % 10)
                n /= 10
            } while n > 0
            if value < 0 { i -= 1; scratch[i] = UInt8(ascii: "-") }
            let p = prefix.utf8CodeUnitCount
            let length = scratch.count - i
            guard p + length < capacities[index] else { nodes[index][0] = 0; return false }
            let dest = UnsafeMutableRawPointer(nodes[index])
            dest.copyMemory(from: prefix.utf8Start, byteCount: p)
            (dest + p).copyMemory(from: scratch.baseAddress! + i, byteCount: length)
            nodes[index][p + length] = 0
            return true
        }
    }

    /// Leaves node `index` out of the request.
    func clear(_ index: Int) { nodes[index][0] = 0 }

    /// Sets node `index` to a fixed string (e.g. `"accept:"`, which removes curl's default).
    func setFixed(_ index: Int, _ text: StaticString) {
        precondition(text.utf8CodeUnitCount < capacities[index], "fixed header longer than its node")
        let dest = UnsafeMutableRawPointer(nodes[index])
        dest.copyMemory(from: text.utf8Start, byteCount: text.utf8CodeUnitCount)
        nodes[index][text.utf8CodeUnitCount] = 0
    }
}
