import Foundation

/// Where every `PUSHQ_*` variable and every flag is read: the one reader of pushq's settings.
///
/// A flag overrides its variable; the environment itself is never written. An empty value, of
/// a flag or a variable, counts as unset: the next source, or the default, applies. Each value
/// is parsed by its key's ``SettingKey/Kind``; one that does not parse throws a
/// ``SettingError`` naming the flag or variable, the value and what is allowed.
/// The typed settings the libraries take are built per concern in `Settings+*.swift`.
struct Settings: Sendable {
    /// The variables, as the process got them (tests pass their own).
    let environment: [String: String]
    /// The flags given on the command line, by the variable they override.
    let flags: [String: String]

    /// - Parameters:
    ///   - environment: the process's variables.
    ///   - flags: the command's flag values for the settings they override (nil: not given).
    init(environment: [String: String] = ProcessInfo.processInfo.environment, flags: [SettingKey: String?] = [:]) {
        self.environment = environment
        var given: [String: String] = [:]
        for case let (key, value?) in flags { given[key.variable] = value }
        self.flags = given
    }

    /// A value as given, and the name it was given under (the flag, else the variable).
    struct Given: Equatable {
        var name: String
        var text: String
    }

    /// The flag's value when given and not empty, else the variable's when set and not empty,
    /// else that of the first of its old names (``SettingKey/aliases``) set and not empty.
    func given(_ key: SettingKey) -> Given? {
        if let flag = key.flag, let text = flags[key.variable], !text.isEmpty { return Given(name: flag, text: text) }
        for name in [key.variable] + key.aliases {
            if let text = environment[name], !text.isEmpty { return Given(name: name, text: text) }
        }
        return nil
    }

    /// The value of `key` parsed by its kind, nil when not given.
    ///
    /// - Throws: ``SettingError`` when the kind does not accept the value, or when the variable
    ///   and one of its old names are both set, to different values (whichever a flag says).
    func value(_ key: SettingKey) throws -> SettingKey.Value? {
        try requireOneValue(key)
        guard let given = given(key) else { return nil }
        guard let value = key.kind.parse(given.text) else {
            throw SettingError(setting: given.name, value: given.text, expected: key.accepts)
        }
        return value
    }

    /// Checks that the variable of `key` and its old names, those set and not empty, agree:
    /// a deployment that sets both to different values is told, not guessed at.
    ///
    /// - Throws: ``SettingError`` naming the old name, its value and the variable's.
    private func requireOneValue(_ key: SettingKey) throws {
        guard !key.aliases.isEmpty else { return }
        let set = ([key.variable] + key.aliases).compactMap { name in environment[name].flatMap { $0.isEmpty ? nil : Given(name: name, text: $0) } }
        guard let first = set.first, let other = set.dropFirst().first(where: { $0.text != first.text }) else { return }
        throw SettingError(setting: other.name, value: other.text,
                           expected: "\(first.name)'s value (\(first.text)) or no value: \(other.name) is the old name of \(key.variable)")
    }

    /// The text of a text, file, URL or choice setting; nil when not given.
    func text(_ key: SettingKey) throws -> String? {
        if case .text(let text)? = try value(key) { return text }
        return nil
    }

    /// The number of a whole-number setting; nil when not given.
    func wholeNumber(_ key: SettingKey) throws -> Int? {
        if case .wholeNumber(let n)? = try value(key) { return n }
        return nil
    }

    /// The seconds of a duration setting; nil when not given.
    func seconds(_ key: SettingKey) throws -> Double? {
        if case .seconds(let s)? = try value(key) { return s }
        return nil
    }

    /// Checks that `low` does not exceed `high` (a base and its cap), blaming the one given
    /// (`high` when both or neither were).
    ///
    /// - Throws: ``SettingError`` naming one of them and the other's value.
    func require(_ low: (key: SettingKey, value: Double), atMost high: (key: SettingKey, value: Double)) throws {
        guard low.value > high.value else { return }
        if given(high.key) == nil, let blamed = given(low.key) {
            throw SettingError(setting: blamed.name, value: blamed.text,
                               expected: "at most \(high.key.variable) (\(SettingKey.format(high.value)))")
        }
        let blamed = given(high.key) ?? Given(name: high.key.variable, text: SettingKey.format(high.value))
        throw SettingError(setting: blamed.name, value: blamed.text,
                           expected: "at least \(low.key.variable) (\(SettingKey.format(low.value)))")
    }
}
