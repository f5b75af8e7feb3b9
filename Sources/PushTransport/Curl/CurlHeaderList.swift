import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// A `curl_slist` of request headers, built and owned here node by node, reused for every request.
///
/// libcurl only reads the list (`CURLOPT_HTTPHEADER` takes no ownership): the nodes and their
/// strings are this object's own allocations, freed in `deinit`, never by `curl_slist_free_all`.
/// Each node has a limit fixed at init (the most bytes it may hold, NUL included) but holds an
/// allocation sized to the longest value written so far, grown (rarely: once per slot for a
/// credential's token, a topic, a collapse id) when a longer one comes. A window keeps thousands
/// of slots, so sizing every node for its limit held ~2 MB at full rate (docs/performance.md,
/// "Linked differently"). Values are overwritten in place between transfers, never while libcurl sends
/// one. A node holding an empty string is ignored by libcurl (it has no colon), which is how
/// optional headers are left out.
final class CurlHeaderList {
    /// The first node, what `CURLOPT_HTTPHEADER` is given.
    var list: UnsafeMutablePointer<curl_slist> { nodes.baseAddress! }
    private let nodes: UnsafeMutableBufferPointer<curl_slist>
    private let limits: [Int]
    /// Bytes allocated for each node's string.
    private var sizes: [Int]

    /// - Parameter limits: the most bytes each node may hold, terminating NUL included.
    init(limits: [Int]) {
        precondition(!limits.isEmpty && limits.allSatisfy { $0 >= 2 }, "a header node needs room for one byte and its NUL")
        self.limits = limits
        sizes = Array(repeating: 1, count: limits.count)
        nodes = .allocate(capacity: limits.count)
        let base = nodes.baseAddress!
        for i in limits.indices {
            let data = UnsafeMutablePointer<CChar>.allocate(capacity: 1)
            data[0] = 0
            (base + i).initialize(to: curl_slist(data: data, next: i + 1 < limits.count ? base + i + 1 : nil))
        }
    }

    deinit {
        for node in nodes { node.data.deallocate() }
        nodes.deallocate()
    }

    /// Room for `bytes` (NUL included) in node `index`, grown if needed; nil (and the node
    /// cleared) past its limit.
    private func room(_ index: Int, _ bytes: Int) -> UnsafeMutableRawPointer? {
        guard bytes <= limits[index] else { clear(index); return nil }
        if bytes > sizes[index] {
            let size = min(limits[index], (bytes + 31) & ~31)
            nodes[index].data.deallocate()
            nodes[index].data = .allocate(capacity: size)
            sizes[index] = size
        }
        return UnsafeMutableRawPointer(nodes[index].data)
    }

    /// Writes `prefix` then `value` into node `index`; false (and the node cleared) if it
    /// does not fit. The value is copied as it is: callers check it holds no CR, LF or NUL
    /// (``PushProvider/problem(with:)``).
    func set(_ index: Int, prefix: StaticString, value: String) -> Bool {
        var value = value
        return value.withUTF8 { write(index, prefix, UnsafeRawBufferPointer($0)) }
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
            return write(index, prefix, UnsafeRawBufferPointer(rebasing: scratch[i...]))
        }
    }

    /// Leaves node `index` out of the request.
    func clear(_ index: Int) { nodes[index].data[0] = 0 }

    /// Sets node `index` to a fixed string (e.g. `"accept:"`, which removes curl's default).
    func setFixed(_ index: Int, _ text: StaticString) {
        guard write(index, text, UnsafeRawBufferPointer(start: nil, count: 0)) else { preconditionFailure("fixed header longer than its node") }
    }

    /// Writes `prefix`, `bytes` and a NUL into node `index`; false (and the node cleared) if
    /// they do not fit.
    private func write(_ index: Int, _ prefix: StaticString, _ bytes: UnsafeRawBufferPointer) -> Bool {
        let p = prefix.utf8CodeUnitCount
        guard let dest = room(index, p + bytes.count + 1) else { return false }
        dest.copyMemory(from: prefix.utf8Start, byteCount: p)
        if let base = bytes.baseAddress { (dest + p).copyMemory(from: base, byteCount: bytes.count) }
        dest.storeBytes(of: 0, toByteOffset: p + bytes.count, as: UInt8.self)
        return true
    }
}
