import Latchkey
import LatchkeyCommands

/// The environment variables a command reads: the process's own, looked up one
/// at a time (`getenv`, never decoding the whole environment), or a given set (none, for a
/// command the agent runs: the client resolved what it needs).
struct Environment: Sendable {
    /// The variables the tool reads (``Tool/environment``), those that find the default store
    /// and the user's policy, and those that name the session bus and the graphical session:
    /// each must be valid UTF-8 (``requireUTF8()``).
    static let read =
        Tool.environment.map(\.name) + ["HOME", "DBUS_SESSION_BUS_ADDRESS"] + Environment.graphicalSession

    /// The variables that say a graphical session is present, which makes `prompt`
    /// the default Secret Service unlock mode.
    static let graphicalSession = ["DISPLAY", "WAYLAND_DISPLAY"]

    /// The variables, or nil for the process's own.
    private let values: [String: String]?

    /// The process's environment.
    static let process = Environment(values: nil)

    private init(values: [String: String]?) {
        self.values = values
    }

    /// An environment of exactly `values`.
    init(_ values: [String: String]) {
        self.values = values
    }

    /// The value of `name`, or nil when it is not set.
    subscript(name: String) -> String? {
        if let values { return values[name] }
        return POSIX.environmentValue(name)
    }

    /// Checks that the variables the tool reads (``read``) hold valid UTF-8:
    /// a store directory, an app id or a policy path whose bytes are not would
    /// otherwise name another one.
    /// - Throws: `LatchkeyError` `.usage` naming the first variable that does not.
    func requireUTF8() throws {
        guard values == nil, let name = Environment.read.first(where: { !POSIX.environmentValueIsUTF8($0) })
        else { return }
        throw Invocation.notUTF8("the environment variable \(name)")
    }

    /// The variables among `names` that are set.
    func subset(_ names: [String]) -> [String: String] {
        var result: [String: String] = [:]
        for name in names { result[name] = self[name] }
        return result
    }
}
