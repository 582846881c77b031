import Foundation
import Latchkey
import LatchkeyLoginFlow

/// The command line, resolved against the environment as the `latchkey` CLI
/// resolves its global options.
struct Options {
    /// Where to sign in (`--server URL`).
    var server: URL?
    /// The app namespace: `--app`, else `LATCHKEY_APP`, else `io.github.latchkey.LoginWindow`.
    var app: String?
    /// `--policy FILE` or `--policy built-in:NAME`.
    var policy: String?
    /// `--backend auto|secret-service|file`.
    var backend: Policy.BackendChoice?
    /// `--store-dir DIR`, else `LATCHKEY_HOME`, else the library's default.
    var storeDirectory: String?
    /// `--passphrase-fd N`: where a passphrase-protected file vault's passphrase comes from.
    var passphraseDescriptor: Int32?
    /// `--timeout SECONDS`: how long to wait for the server (default 10).
    var timeout: Duration = .seconds(10)
    /// `--print-texts`: print the texts of the language `LANG` picks as JSON and exit.
    var printTexts = false

    static let usage = """
        Usage: login-window --server URL [--app ID] [--policy FILE|built-in:NAME]
                            [--backend auto|secret-service|file] [--store-dir DIR]
                            [--passphrase-fd N] [--timeout SECONDS]
               login-window --print-texts
        The language follows LC_ALL, LC_MESSAGES or LANG (English, German, Simplified Chinese).
        """

    /// Parses `arguments` (without the program name).
    /// - Throws: ``UsageError`` naming the option.
    init(arguments: [String], environment: [String: String]) throws {
        var rest = arguments[...]
        func value(_ option: String) throws -> String {
            guard let value = rest.popFirst() else { throw UsageError("\(option) needs a value") }
            return value
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--server":
                let text = try value(argument)
                guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil else {
                    throw UsageError("--server must be an http or https URL")
                }
                server = url
            case "--app": app = try value(argument)
            case "--policy": policy = try value(argument)
            case "--backend":
                let text = try value(argument)
                guard let choice = Policy.BackendChoice(rawValue: text) else {
                    throw UsageError("--backend must be auto, secret-service or file, not '\(text)'")
                }
                backend = choice
            case "--store-dir": storeDirectory = try value(argument)
            case "--passphrase-fd":
                guard let descriptor = Int32(try value(argument)), descriptor >= 0 else {
                    throw UsageError("--passphrase-fd must be a file descriptor number")
                }
                passphraseDescriptor = descriptor
            case "--timeout":
                guard let seconds = Double(try value(argument)), seconds > 0 else {
                    throw UsageError("--timeout must be a positive number of seconds")
                }
                timeout = .milliseconds(Int64(seconds * 1000))
            case "--print-texts": printTexts = true
            default: throw UsageError("unknown option '\(argument)'")
            }
        }
        if app == nil { app = environment["LATCHKEY_APP"] }
        if storeDirectory == nil, let home = environment["LATCHKEY_HOME"], !home.isEmpty { storeDirectory = home }
        if server == nil && !printTexts { throw UsageError("--server URL is required") }
    }

    /// The app id, as the CLI resolves it.
    func appID() throws -> AppID {
        try AppID(app ?? "io.github.latchkey.LoginWindow")
    }

    /// The policy in force: `--policy`, else `$XDG_CONFIG_HOME/latchkey/policy.json`
    /// when present, else the built-in default (as the CLI does).
    func resolvedPolicy(environment: [String: String]) throws -> Policy {
        if let policy {
            if policy.hasPrefix("built-in:") {
                let name = String(policy.dropFirst("built-in:".count))
                guard let builtIn = Policy.builtIn(named: name) else {
                    throw UsageError("there is no built-in policy '\(name)' (default, strict, shared-device)")
                }
                return builtIn
            }
            do {
                return try Policy(contentsOfFile: policy)
            } catch let error as LatchkeyError where error.code == .notFound {
                throw UsageError("--policy: \(error.message)")
            }
        }
        let config =
            environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? environment["HOME"].map { $0 + "/.config" }
        guard let path = config.map({ $0 + "/latchkey/policy.json" }), FileManager.default.fileExists(atPath: path)
        else {
            return .default
        }
        return try Policy(contentsOfFile: path)
    }

    /// Opens the vault the options name.
    func openVault(environment: [String: String]) throws -> Vault {
        let policy = try resolvedPolicy(environment: environment)
        let passphrase = passphraseDescriptor.map(Self.readPassphrase(from:))
        return try Vault.open(
            appID: try appID(), policy: policy, storeDirectory: storeDirectory, backend: backend, passphrase: passphrase
        )
    }

    /// The language of the texts: the first of `LC_ALL`, `LC_MESSAGES`, `LANG`
    /// that is set (POSIX's order), without its encoding or modifier.
    static func language(environment: [String: String]) -> LoginLanguage {
        let locale = ["LC_ALL", "LC_MESSAGES", "LANG"].lazy.compactMap { environment[$0] }.first { !$0.isEmpty } ?? ""
        let tag = locale.split(separator: ".").first.map(String.init) ?? ""
        return LoginLanguage.preferred(from: [tag.split(separator: "@").first.map(String.init) ?? tag])
    }
}

/// A mistake on the command line.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension Options {
    /// Reads a passphrase from an open descriptor to its end, without one
    /// trailing newline, and zeroes the read buffer before it is released.
    fileprivate static func readPassphrase(from descriptor: Int32) -> SecretBytes {
        var data = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false).readDataToEndOfFile()
        defer { data.resetBytes(in: 0..<data.count) }
        let length = data.last == UInt8(ascii: "\n") ? data.count - 1 : data.count
        return SecretBytes(data.prefix(length))
    }
}
