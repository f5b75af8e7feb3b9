import ChildProcess
import Foundation

/// `scripts/helm-chart-check`: Helm's own `lint --strict` and `template` (its Go SDK, PyPI package
/// `helm-python-sdk`), then every rendered object against the Kubernetes JSON schemas (PyPI
/// package `kubernetes-validate`), offline. Both are installed by scripts/install-deps for the
/// `python3` on the PATH, as promtool is (``Promtool``).
public struct HelmChartCheck {
    /// One object the templates rendered: the template's path in the chart and the object as JSON.
    public struct Rendered {
        public var template: String
        public var object: [String: Any]
    }

    /// helm lint's findings of severity warning or error, each "path: message".
    public var lintProblems: [String]
    /// Helm's error when the templates do not render with the values (nil when they do).
    public var renderError: String?
    /// The rendered objects, in template order (NOTES.txt aside).
    public var objects: [Rendered]
    /// The chart's default values (its values.yaml) as JSON.
    public var defaultValues: [String: Any]
    /// What the Kubernetes schemas refuse, one line an object and version.
    public var invalid: [String]

    /// Lints, renders and validates `chart` with `values` files applied in order, as release
    /// `release` in namespace `namespace`; relative paths are from the repository root.
    ///
    /// - Throws: when python3 or a package is missing (run scripts/install-deps) or the chart cannot be read.
    public init(chart: String, values: [String] = [], release: String = "demo", namespace: String = "pushq") async throws {
        let root = repositoryRoot.path
        func path(_ file: String) -> String { file.hasPrefix("/") ? file : root + "/" + file }
        var arguments = [root + "/scripts/helm-chart-check", path(chart), "--release", release, "--namespace", namespace]
        for file in values { arguments += ["--values", path(file)] }
        let (termination, out, err) = try await ChildProcess.run("/usr/bin/env", ["python3"] + arguments)
        guard termination == .exit(0),
              let report = try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any]
        else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "scripts/helm-chart-check \(termination): \(err)"])
        }
        let lint = report["lint"] as? [String: Any] ?? [:]
        lintProblems = (lint["messages"] as? [[String: Any]] ?? []).compactMap { message in
            guard (message["severity"] as? Int ?? 0) >= 2 else { return nil }
            return "\(message["path"] ?? ""): \(message["error"] ?? "")"
        }
        renderError = report["render"] as? String
        defaultValues = report["values"] as? [String: Any] ?? [:]
        objects = (report["objects"] as? [[String: Any]] ?? []).map {
            Rendered(template: $0["template"] as? String ?? "", object: $0["object"] as? [String: Any] ?? [:])
        }
        invalid = (report["invalid"] as? [[String: Any]] ?? []).map {
            "\($0["template"] ?? "") \($0["kind"] ?? "") \($0["name"] ?? "") (Kubernetes \($0["version"] ?? "")): \($0["error"] ?? "")"
        }
    }

    /// The rendered object of `kind` named `name`.
    public func object(_ kind: String, _ name: String) -> [String: Any]? {
        objects.first { $0.object["kind"] as? String == kind && ($0.object["metadata"] as? [String: Any])?["name"] as? String == name }?.object
    }
}
