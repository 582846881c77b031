internal import CLatchkeySecret

// The GIO calls that talk to the message bus itself rather than to libsecret:
// finding out, before libsecret is asked anything, whether a Secret Service can
// be reached at all. Errors go through `LibSecret.check`, the one conversion.

extension LibSecret {
    /// Whether the message bus at `address` has an owner for `name`, or can
    /// activate it: the bus's `NameHasOwner` and `ListActivatableNames` through
    /// `g_dbus_connection_call_sync`. When `address` is the process's own session
    /// bus, asks on the process's shared connection (`g_bus_get_sync`), the one
    /// libsecret then uses too, so a process opens one bus connection; else on
    /// a private one (`g_dbus_connection_new_for_address_sync`), closed before returning.
    /// - Parameters:
    ///   - name: A well-known bus name, such as `org.freedesktop.secrets`.
    ///   - address: A D-Bus address, such as `unix:path=/run/user/1000/bus`.
    ///   - isProcessBus: Whether `address` is the process's own session bus.
    ///   - timeout: How long connecting and asking may take.
    /// - Returns: true when the name is owned or activatable.
    /// - Throws: `LatchkeyError` `.unavailable` when libsecret (and with it GIO)
    ///   cannot be loaded or the bus cannot be reached, `.timedOut`.
    static func busOffers(_ name: String, address: String, isProcessBus: Bool, timeout: Duration) throws -> Bool {
        try load()
        let cancellation = try Cancellation(after: timeout)
        let function = isProcessBus ? "g_bus_get_sync" : "g_dbus_connection_new_for_address_sync"
        let connection = try check(function, cancellation) { error in
            if isProcessBus { return lk_g_bus_get_sync(LK_G_BUS_TYPE_SESSION, cancellation.pointer, error) }
            let flags =
                LK_G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT | LK_G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION
            return lk_g_dbus_connection_new_for_address_sync(address, flags, nil, cancellation.pointer, error)
        }
        guard let connection else {
            throw LatchkeyError(.unavailable, "no D-Bus connection", cFunction: function)
        }
        let bus = BusConnection(connection, isShared: isProcessBus)
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

    /// The process id of `name`'s owner on the process's session bus (the bus's
    /// `GetConnectionUnixProcessID`), or nil when it has none or the bus does not say.
    /// - Parameters:
    ///   - name: A well-known bus name, such as `org.freedesktop.secrets`.
    ///   - timeout: How long asking may take.
    static func ownerProcessID(of name: String, timeout: Duration) -> UInt32? {
        guard (try? load()) != nil, let cancellation = try? Cancellation(after: timeout),
            let connection = try? check(
                "g_bus_get_sync", cancellation,
                {
                    lk_g_bus_get_sync(LK_G_BUS_TYPE_SESSION, cancellation.pointer, $0)
                })
        else { return nil }
        var argument: OpaquePointer? = lk_g_variant_new_string(name)
        return withUnsafePointer(to: &argument) { arguments in
            try? BusConnection(connection, isShared: true).call(
                "GetConnectionUnixProcessID", lk_g_variant_new_tuple(arguments, 1), cancellation
            ) { lk_g_variant_get_uint32($0) }
        }
    }

    /// A private bus connection, closed (`g_dbus_connection_close_sync`) and released by its owner.
    private final class BusConnection {
        let pointer: OpaquePointer
        /// Whether this is the process's shared session bus connection, which stays open.
        let isShared: Bool
        init(_ pointer: OpaquePointer, isShared: Bool) {
            self.pointer = pointer
            self.isShared = isShared
        }

        /// Calls a method of the bus itself and hands `read` the reply's first value.
        func call<Result>(
            _ method: String, _ parameters: OpaquePointer?, _ cancellation: Cancellation,
            read: (OpaquePointer) -> Result
        ) throws -> Result {
            let reply = try check("g_dbus_connection_call_sync", cancellation) {
                lk_g_dbus_connection_call_sync(
                    pointer, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                    method, parameters, nil, LK_G_DBUS_CALL_FLAGS_NO_AUTO_START, -1, cancellation.pointer, $0)
            }
            guard let reply, lk_g_variant_n_children(reply) == 1 else {
                if let reply { lk_g_variant_unref(reply) }
                throw LatchkeyError(
                    .unavailable, "unexpected reply from the D-Bus daemon to \(method)",
                    cFunction: "g_dbus_connection_call_sync")
            }
            let value = lk_g_variant_get_child_value(reply, 0)
            let result = value.map(read)
            if let value { lk_g_variant_unref(value) }
            lk_g_variant_unref(reply)
            guard let result else {
                throw LatchkeyError(
                    .unavailable, "unexpected reply from the D-Bus daemon to \(method)",
                    cFunction: "g_variant_get_child_value")
            }
            return result
        }

        deinit {
            // The shared connection keeps its reference: were it released, GIO would
            // close the connection and libsecret would have to open another.
            guard !isShared else { return }
            // Closing can only fail when the connection is already closed, which is the goal.
            _ = lk_g_dbus_connection_close_sync(pointer, nil, nil)
            lk_g_object_unref(UnsafeMutableRawPointer(pointer))
        }
    }

}
