// libFuzzer entry for CredentialsFile (compiled with Sources/PushWorker/Configuration/CredentialsFile.swift by
// scripts/fuzz): any bytes are read or refused, and a refusal names the file.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCredentialsFile(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    do {
        _ = try CredentialsFile.parse(bytes, file: "fuzz.json")
    } catch {
        precondition(error.description.contains("fuzz.json"))
    }
    return 0
}
