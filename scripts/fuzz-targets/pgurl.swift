// libFuzzer entry for PGURL (compiled with Sources/PushStore/PGURL.swift by scripts/fuzz):
// any text must take a database name without trapping, and the name must come out in it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPGURL(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let url = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let out = PGURL.withDatabase(url, "fuzzdb")
    precondition(out.contains("fuzzdb"))
    return 0
}
