internal import CSecret

// The GIO calls that talk to the message bus itself rather than to libsecret:
// finding out, before libsecret is asked anything, whether a Secret Service can
// be reached at all. Errors go through `LibSecret.check`, the one conversion.

extension LibSecret {
    /// Whether the message bus at `address` has an owner for `name`, or can
    /// activate it: `g_dbus_connection_new_for_address_sync`, then the bus's
    /// `NameHasOwner` and `ListActivatableNames` through `g_dbus_connection_call_sync`.
    /// Uses a private connection of its own, closed before returning.
    /// - Parameters:
    ///   - name: A well-known bus name, such as `org.freedesktop.secrets`.
    ///   - address: A D-Bus address, such as `unix:path=/run/user/1000/bus`.
    ///   - timeout: How long connecting and asking may take.
    /// - Returns: true when the name is owned or activatable.
    /// - Throws: `LatchkeyError` `.unavailable` when libsecret (and with it GIO)
    ///   cannot be loaded or the bus cannot be reached, `.timedOut`.
    static func busOffers(_ name: String, address: String, timeout: Duration) throws -> Bool {
        try load()
        let cancellation = Cancellation(after: timeout)
        let flags = LK_G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT | LK_G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION
        let connection = try check("g_dbus_connection_new_for_address_sync", cancellation) {
            lk_g_dbus_connection_new_for_address_sync(address, flags, nil, cancellation.pointer, $0)
        }
        guard let connection else {
            throw LatchkeyError(.unavailable, "no D-Bus connection", cFunction: "g_dbus_connection_new_for_address_sync")
        }
        let bus = BusConnection(connection)
        var argument: OpaquePointer? = lk_g_variant_new_string(name)
        let owned = try withUnsafePointer(to: &argument) { arguments in
            try bus.call("NameHasOwner", lk_g_variant_new_tuple(arguments, 1), cancellation) { reply in
                lk_g_variant_get_boolean(reply) != 0
            }
        }
        if owned { return true }
        return try bus.call("ListActivatableNames", nil, cancellation) { reply in
            (0..<lk_g_variant_n_children(reply)).contains { index in
                let child = lk_g_variant_get_child_value(reply, index)
                defer { lk_g_variant_unref(child) }
                return String(cString: lk_g_variant_get_string(child, nil)) == name
            }
        }
    }

    /// A private bus connection, closed (`g_dbus_connection_close_sync`) and released by its owner.
    private final class BusConnection {
        let pointer: OpaquePointer
        init(_ pointer: OpaquePointer) { self.pointer = pointer }

        /// Calls a method of the bus itself and hands `read` the reply's first value.
        func call<Result>(_ method: String, _ parameters: OpaquePointer?, _ cancellation: Cancellation,
                          read: (OpaquePointer) -> Result) throws -> Result {
            let reply = try check("g_dbus_connection_call_sync", cancellation) {
                lk_g_dbus_connection_call_sync(pointer, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                               method, parameters, nil, LK_G_DBUS_CALL_FLAGS_NO_AUTO_START, -1, cancellation.pointer, $0)
            }
            guard let reply, lk_g_variant_n_children(reply) == 1 else {
                if let reply { lk_g_variant_unref(reply) }
                throw LatchkeyError(.unavailable, "unexpected reply from the D-Bus daemon to \(method)", cFunction: "g_dbus_connection_call_sync")
            }
            let value = lk_g_variant_get_child_value(reply, 0)
            let result = value.map(read)
            if let value { lk_g_variant_unref(value) }
            lk_g_variant_unref(reply)
            guard let result else {
                throw LatchkeyError(.unavailable, "unexpected reply from the D-Bus daemon to \(method)", cFunction: "g_variant_get_child_value")
            }
            return result
        }

        deinit {
            // Closing can only fail when the connection is already closed, which is the goal.
            _ = lk_g_dbus_connection_close_sync(pointer, nil, nil)
            lk_g_object_unref(UnsafeMutableRawPointer(pointer))
        }
    }

}
