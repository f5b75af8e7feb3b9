/// The UTC offsets of one time zone over time, read from its TZif file (RFC 8536, what the
/// system's tzdata and PostgreSQL's `--with-system-tzdata` read): the transitions it lists, then
/// the POSIX TZ rule of its footer for the instants after the last one (``PosixZoneRule``).
///
/// Pure: the caller reads the file (`/usr/share/zoneinfo/<name>`) and passes its bytes. Instants
/// are seconds since 1970-01-01 UTC; offsets are seconds east of UTC (Asia/Kolkata: 19 800).
public struct ZoneRules: Sendable, Equatable {
    /// The instants at which the offset may change, ascending.
    public private(set) var transitions: [Int64]
    /// The offset in force from each transition on (same count as ``transitions``).
    public private(set) var offsets: [Int32]
    /// The offset before the first transition (the file's time type 0).
    public private(set) var initialOffset: Int32
    /// The rule after the last transition, nil when the offset stays the last one's.
    public private(set) var rule: PosixZoneRule?

    /// A zone that is always `offset` seconds east of UTC (UTC: 0).
    public static func fixed(_ offset: Int32) -> ZoneRules {
        ZoneRules(transitions: [], offsets: [], initialOffset: offset, rule: nil)
    }

    /// UTC, the zone of a row and lane that have none.
    public static let utc = ZoneRules.fixed(0)

    init(transitions: [Int64], offsets: [Int32], initialOffset: Int32, rule: PosixZoneRule?) {
        self.transitions = transitions
        self.offsets = offsets
        self.initialOffset = initialOffset
        self.rule = rule
    }

    /// Reads a TZif file of version 1 to 4 (the 64-bit data block and footer of version 2 and
    /// later when present).
    ///
    /// - Throws: ``ZoneRulesError`` naming what is malformed.
    public init(tzif bytes: [UInt8]) throws(ZoneRulesError) {
        var reader = TZifReader(bytes: bytes)
        let first = try reader.header()
        guard first.version >= 2 else {
            let block = try reader.block(first, timeSize: 4)
            self.init(transitions: block.transitions, offsets: block.offsets, initialOffset: block.initialOffset, rule: nil)
            return
        }
        try reader.skip(first, timeSize: 4)
        let second = try reader.header()
        let block = try reader.block(second, timeSize: 8)
        let footer = try reader.footer()
        let rule = try footer.isEmpty ? nil : PosixZoneRule(footer)
        self.init(transitions: block.transitions, offsets: block.offsets, initialOffset: block.initialOffset, rule: rule)
    }

    /// The offset in force at `instant`: seconds east of UTC.
    public func offset(at instant: Int64) -> Int32 {
        guard let last = transitions.last else { return rule?.offset(at: instant) ?? initialOffset }
        if instant >= last, let rule { return rule.offset(at: instant) }
        guard let index = lastTransition(atOrBefore: instant) else { return initialOffset }
        return offsets[index]
    }

    /// The first instant after `instant` at which the offset may change, nil when it never does.
    public func nextTransition(after instant: Int64) -> Int64? {
        let next = (lastTransition(atOrBefore: instant).map { $0 + 1 }) ?? 0
        if next < transitions.count { return transitions[next] }
        return rule?.nextTransition(after: instant)
    }

    /// The index of the last transition at or before `instant`, nil when there is none.
    private func lastTransition(atOrBefore instant: Int64) -> Int? {
        var low = 0, high = transitions.count  // the first transition after `instant` is in low..<high+1
        while low < high {
            let mid = (low + high) / 2
            if transitions[mid] <= instant { low = mid + 1 } else { high = mid }
        }
        return low == 0 ? nil : low - 1
    }
}

/// Why TZif bytes or a POSIX TZ rule could not be read.
public struct ZoneRulesError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { "time zone data: \(message)" }
}

/// Reads a TZif file's parts in order.
struct TZifReader {
    struct Header {
        var version: Int
        var isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt: Int
    }

    struct Block {
        var transitions: [Int64]
        var offsets: [Int32]
        var initialOffset: Int32
    }

    let bytes: [UInt8]
    var at = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func take(_ n: Int) throws(ZoneRulesError) -> ArraySlice<UInt8> {
        guard n >= 0, at + n <= bytes.count else { throw ZoneRulesError("the file ends early (\(bytes.count) bytes)") }
        defer { at += n }
        return bytes[at..<(at + n)]
    }

    mutating func integer(_ size: Int) throws(ZoneRulesError) -> Int64 {
        var value: UInt64 = 0
        for b in try take(size) { value = value << 8 | UInt64(b) }
        if size == 4 { return Int64(Int32(bitPattern: UInt32(truncatingIfNeeded: value))) }
        return Int64(bitPattern: value)
    }

    mutating func header() throws(ZoneRulesError) -> Header {
        guard Array(try take(4)) == Array("TZif".utf8) else { throw ZoneRulesError("not a TZif file (no TZif magic)") }
        let v = try take(1).first ?? 0
        let version = v == 0 ? 1 : Int(v) - 48
        guard (1...9).contains(version) else { throw ZoneRulesError("unknown TZif version byte \(v)") }
        _ = try take(15)
        var counts: [Int] = []
        for _ in 0..<6 {
            let n = try integer(4)
            guard (0...1_000_000).contains(n) else { throw ZoneRulesError("a count out of range (\(n))") }
            counts.append(Int(n))
        }
        let header = Header(version: version, isutcnt: counts[0], isstdcnt: counts[1], leapcnt: counts[2], timecnt: counts[3],
                            typecnt: counts[4], charcnt: counts[5])
        guard header.typecnt >= 1 else { throw ZoneRulesError("no local time type") }
        return header
    }

    mutating func skip(_ h: Header, timeSize: Int) throws(ZoneRulesError) {
        _ = try take(h.timecnt * timeSize + h.timecnt + h.typecnt * 6 + h.charcnt + h.leapcnt * (timeSize + 4) + h.isstdcnt + h.isutcnt)
    }

    mutating func block(_ h: Header, timeSize: Int) throws(ZoneRulesError) -> Block {
        var times: [Int64] = []
        times.reserveCapacity(h.timecnt)
        for _ in 0..<h.timecnt { times.append(try integer(timeSize)) }
        let indices = Array(try take(h.timecnt))
        var types: [Int32] = []
        for _ in 0..<h.typecnt {
            let utoff = try integer(4)
            _ = try take(2)  // isdst, desigidx
            guard abs(utoff) < 26 * 3600 else { throw ZoneRulesError("a UTC offset out of range (\(utoff) s)") }
            types.append(Int32(utoff))
        }
        _ = try take(h.charcnt + h.leapcnt * (timeSize + 4) + h.isstdcnt + h.isutcnt)
        var offsets: [Int32] = []
        offsets.reserveCapacity(h.timecnt)
        for (i, index) in indices.enumerated() {
            guard Int(index) < types.count else { throw ZoneRulesError("transition \(i) names time type \(index) of \(types.count)") }
            guard i == 0 || times[i] > times[i - 1] else { throw ZoneRulesError("transition \(i) is not after the one before") }
            offsets.append(types[Int(index)])
        }
        return Block(transitions: times, offsets: offsets, initialOffset: types[0])
    }

    /// The footer of version 2 and later: the TZ string between two newlines ("" for none).
    mutating func footer() throws(ZoneRulesError) -> String {
        guard try take(1).first == 0x0A else { throw ZoneRulesError("no footer after the 64-bit data") }
        let start = at
        while at < bytes.count, bytes[at] != 0x0A { at += 1 }
        guard at < bytes.count else { throw ZoneRulesError("the footer has no closing newline") }
        return String(decoding: bytes[start..<at], as: UTF8.self)
    }
}
