import Foundation

/// Reading the rendered Kubernetes objects (JSON) the way the checks need them.
extension HelmChartTests {
    static func metadata(_ object: [String: Any]) -> [String: Any] {
        object["metadata"] as? [String: Any] ?? [:]
    }

    static func annotations(_ object: [String: Any]) -> [String: String] {
        metadata(object)["annotations"] as? [String: String] ?? [:]
    }

    /// The pod template of a Deployment or Job.
    static func podTemplate(_ workload: [String: Any]) -> [String: Any] {
        (workload["spec"] as? [String: Any])?["template"] as? [String: Any] ?? [:]
    }

    static func podSpec(_ workload: [String: Any]) -> [String: Any] {
        podTemplate(workload)["spec"] as? [String: Any] ?? [:]
    }

    static func podAnnotations(_ workload: [String: Any]) -> [String: String] {
        annotations(podTemplate(workload))
    }

    static func podLabels(_ workload: [String: Any]) -> [String: String] {
        metadata(podTemplate(workload))["labels"] as? [String: String] ?? [:]
    }

    static func containers(_ workload: [String: Any]) -> [[String: Any]] {
        podSpec(workload)["containers"] as? [[String: Any]] ?? []
    }

    /// The container's variables that have a plain value.
    static func plainEnv(_ container: [String: Any]) -> [String: String] {
        var env: [String: String] = [:]
        for entry in container["env"] as? [[String: Any]] ?? [] {
            if let name = entry["name"] as? String, let value = entry["value"] as? String { env[name] = value }
        }
        return env
    }

    /// "secret/key" of the variable `name` taken from a Secret; nil when it is not.
    static func secretRef(_ container: [String: Any], _ name: String) -> String? {
        let entry = (container["env"] as? [[String: Any]])?.first { $0["name"] as? String == name }
        guard let ref = (entry?["valueFrom"] as? [String: Any])?["secretKeyRef"] as? [String: Any] else { return nil }
        return "\(ref["name"] ?? "")/\(ref["key"] ?? "")"
    }

    /// Port name → container port.
    static func ports(_ container: [String: Any]) -> [String: Int] {
        var ports: [String: Int] = [:]
        for port in container["ports"] as? [[String: Any]] ?? [] {
            if let name = port["name"] as? String, let number = port["containerPort"] as? Int { ports[name] = number }
        }
        return ports
    }

    /// "SCHEME port/path" of an HTTP probe (`livenessProbe`, `readinessProbe`); nil when there is none.
    static func probe(_ container: [String: Any], _ kind: String) -> String? {
        guard let get = (container[kind] as? [String: Any])?["httpGet"] as? [String: Any] else { return nil }
        return "\(get["scheme"] as? String ?? "HTTP") \(get["port"] ?? "")\(get["path"] ?? "")"
    }
}
