/// pushq's version, written to `pushq.workers` and printed by `pushq --version`.
public enum PushqVersion {
    public static let current = "0.4.0"
}
