/// A credential's name within its provider. Names are per provider: the APNs credential
/// `default` and the FCM credential `default` are two credentials, with two keys.
///
/// The key of the worker's credentials (`WorkerConfiguration.credentials`); a row's is its
/// `provider` and `credential` (`"default"` when NULL), an endpoint's ``Endpoint/credentialKey``.
public struct CredentialKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var provider: Provider
    public var name: String

    public init(_ provider: Provider, _ name: String) {
        self.provider = provider
        self.name = name
    }

    /// Provider by provider (in ``Provider/allCases`` order), then by name.
    public static func < (a: CredentialKey, b: CredentialKey) -> Bool {
        a.provider == b.provider ? a.name < b.name : a.provider.order < b.provider.order
    }

    /// `apns:default`, `fcm:android`.
    public var description: String { "\(provider.rawValue):\(name)" }
}

extension Provider {
    /// The provider's place in ``allCases``.
    var order: Int { Self.allCases.firstIndex(of: self) ?? 0 }
}

extension Endpoint {
    /// The credential the endpoint sends with.
    public var credentialKey: CredentialKey { CredentialKey(provider, credential) }
}

extension Dictionary where Key == CredentialKey {
    /// The names of `provider`'s credentials, sorted.
    public func names(of provider: Provider) -> [String] {
        keys.filter { $0.provider == provider }.map(\.name).sorted()
    }

    /// Every provider's credential names, sorted; a provider without credentials has none (no entry).
    public var namesByProvider: [Provider: [String]] {
        var names: [Provider: [String]] = [:]
        for key in keys.sorted() { names[key.provider, default: []].append(key.name) }
        return names
    }
}
