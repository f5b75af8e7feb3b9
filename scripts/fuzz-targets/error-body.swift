// libFuzzer entry for APNsErrorBodyParser (compiled with Sources/PushTransport/APNs/APNsErrorBodyParser.swift
// by scripts/fuzz): any bytes must parse without trapping, and a timestamp is 0..<10^18.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzErrorBody(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let (_, timestamp) = APNsErrorBodyParser.parse(UnsafeRawBufferPointer(start: data, count: size))
    if let timestamp { precondition(timestamp >= 0 && timestamp < 1_000_000_000_000_000_000) }
    return 0
}
