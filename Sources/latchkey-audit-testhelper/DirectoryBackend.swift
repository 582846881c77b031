import Foundation
import Latchkey

/// A `CredentialBackend` that keeps each item in a plain 0600 file of one
/// directory, so that several test processes share the audit key and anchor.
/// For the audit trail's multi-process test only: values are not encrypted.
final class DirectoryBackend: CredentialBackend {
    let root: String

    init(root: String) throws {
        self.root = root
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    var kind: BackendKind { BackendKind(rawValue: "test-directory") }

    private func path(for key: ItemKey) -> String {
        let name = "\(key.kind.rawValue)\u{0}\(key.account)\u{0}\(key.name)"
        return root + "/" + name.utf8.map { String(format: "%02x", $0) }.joined()
    }

    func read(_ key: ItemKey) throws -> StoredItem? {
        guard let data = FileManager.default.contents(atPath: path(for: key)) else { return nil }
        return StoredItem(value: SecretBytes(data))
    }

    func write(_ item: StoredItem, for key: ItemKey) throws {
        let url = URL(fileURLWithPath: path(for: key))
        try Data(item.value.copyBytes()).write(to: url, options: .atomic)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
    }

    func delete(_ key: ItemKey) throws {
        if FileManager.default.fileExists(atPath: path(for: key)) { try FileManager.default.removeItem(atPath: path(for: key)) }
    }

    func list(kind: ItemKey.Kind?) throws -> [ItemKey] {
        throw LatchkeyError(.internal, "listing is not needed by the audit test helper")
    }

    func deleteAll() throws {
        try FileManager.default.removeItem(atPath: root)
    }
}
