#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The quick check that a Secret Service can be reached, before libsecret is asked.
///
/// There is none when there is no session bus (no `DBUS_SESSION_BUS_ADDRESS` and
/// no `$XDG_RUNTIME_DIR/bus`), when the bus cannot be connected to, or when nobody
/// owns `org.freedesktop.secrets` and the bus cannot activate it. Checking this
/// first also keeps GIO from trying to autolaunch a bus.
enum SecretServiceAvailability {
    /// The Secret Service's well-known bus name.
    static let busName = "org.freedesktop.secrets"
    /// The environment variables that locate the session bus: all the check reads.
    static let busVariables = ["DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR"]
    /// The session bus address the environment names, the way GIO finds it.
    /// - Parameter environment: The process environment.
    /// - Returns: A D-Bus address, or nil when there is no session bus.
    static func sessionBusAddress(in environment: [String: String]) -> String? {
        if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty {
            return address
        }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            let socket = runtime + "/bus"
            if FileManager.default.fileExists(atPath: socket) { return "unix:path=" + escaped(socket) }
        }
        return nil
    }

    /// Checks that a Secret Service can be reached.
    /// - Parameters:
    ///   - environment: The environment that names the session bus.
    ///   - timeout: The time left: the policy's deadline, never a fixed one of its own.
    /// - Throws: `LatchkeyError` `.unavailable` naming what is missing, or `.timedOut`.
    ///   - isProcessEnvironment: Whether `environment` is the process's own, so
    ///     the check can use the process's shared bus connection.
    /// - Returns: The process id of the name's owner; nil when it is not owned but activatable
    ///   (or the bus does not say).
    @discardableResult
    static func check(environment: [String: String], isProcessEnvironment: Bool = false, timeout: Duration) throws
        -> UInt32?
    {
        guard let address = sessionBusAddress(in: environment) else {
            throw LatchkeyError(
                .unavailable,
                "there is no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is unset and $XDG_RUNTIME_DIR/bus does not exist)"
            )
        }
        guard
            let owner = try LibSecret.busOffers(
                busName, address: address, isProcessBus: isProcessEnvironment, timeout: timeout)
        else {
            throw LatchkeyError(
                .unavailable,
                "no Secret Service runs on the session bus: nobody owns \(busName) and the bus cannot activate it")
        }
        return owner == 0 ? nil : owner
    }

    /// Escapes a value for a D-Bus address: bytes other than `[-0-9A-Za-z_/.\*]` become `%XX`.
    private static func escaped(_ value: String) -> String {
        var result = ""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "/"), UInt8(ascii: "."), UInt8(ascii: "\\"),
                UInt8(ascii: "*"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                result += "%" + Hex.encode([byte])
            }
        }
        return result
    }
}
