internal import CLatchkeySecret
import Synchronization

// The GIO calls that talk to the message bus itself rather than to libsecret:
// finding out, before libsecret is asked anything, whether a Secret Service can
// be reached at all. Errors go through `LibSecret.check`, the one conversion.

extension LibSecret {
    /// Whether the message bus at `address` has an owner for `name`, or can
    /// activate it: the bus's `GetConnectionUnixProcessID` (which fails for a name nobody
    /// owns) and `ListActivatableNames` through
    /// `g_dbus_connection_call_sync`. When `address` is the process's own session
    /// bus, asks on the process's shared connection (`g_bus_get_sync`), the one
    /// libsecret then uses too, so a process opens one bus connection; else on
    /// a private one (`g_dbus_connection_new_for_address_sync`), closed before returning.
    /// - Parameters:
    ///   - name: A well-known bus name, such as `org.freedesktop.secrets`.
    ///   - address: A D-Bus address, such as `unix:path=/run/user/1000/bus`.
    ///   - isProcessBus: Whether `address` is the process's own session bus.
    ///   - timeout: How long connecting and asking may take.
    /// - Returns: The owner's process id when the name is owned (`0` when the bus does not
    ///   say), `.some(nil)` when it is only activatable, nil when neither.
    /// - Throws: `LatchkeyError` `.unavailable` when libsecret (and with it GIO)
    ///   cannot be loaded or the bus cannot be reached, `.timedOut`.
    static func busOffers(_ name: String, address: String, isProcessBus: Bool, timeout: Duration) throws -> UInt32?? {
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
        do {
            // One call says both whether it is owned and by whom (Latchkey's own provider is used directly).
            let owner = try withUnsafePointer(to: &argument) { arguments in
                try bus.call("GetConnectionUnixProcessID", lk_g_variant_new_tuple(arguments, 1), cancellation) {
                    lk_g_variant_get_uint32($0)
                }
            }
            return .some(owner)
        } catch let error as LatchkeyError where error.code == .unavailable {
            // Nobody owns it (NameHasNoOwner), or the bus cannot tell the owner's process (a
            // connection from another pid namespace, or over TCP): asked as before.
            var again: OpaquePointer? = lk_g_variant_new_string(name)
            let owned = try withUnsafePointer(to: &again) { arguments in
                try bus.call("NameHasOwner", lk_g_variant_new_tuple(arguments, 1), cancellation) { reply in
                    lk_g_variant_get_boolean(reply) != 0
                }
            }
            if owned { return .some(0) }
        }
        let activatable = try bus.call("ListActivatableNames", nil, cancellation) { reply in
            (0..<lk_g_variant_n_children(reply)).contains { index in
                let child = lk_g_variant_get_child_value(reply, index)
                defer { lk_g_variant_unref(child) }
                return String(cString: lk_g_variant_get_string(child, nil)) == name
            }
        }
        return activatable ? .some(nil) : nil
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

    /// Who owns `name` on the process's session bus and whether the bus can activate it: the
    /// bus's `GetConnectionUnixProcessID` (else `NameHasOwner`: nobody owns it, or the bus cannot
    /// tell the owner's process, whose id is then nil) and `ListActivatableNames`,
    /// on the shared connection, never starting a service (`NO_AUTO_START`).
    /// - Parameters:
    ///   - name: A well-known bus name, such as `org.freedesktop.secrets`.
    ///   - timeout: How long connecting and asking may take, altogether.
    /// - Throws: `LatchkeyError` `.unavailable` when GIO cannot be loaded or the bus cannot be
    ///   reached, `.timedOut`.
    static func nameState(of name: String, timeout: Duration) throws -> (
        owned: Bool, ownerPID: UInt32?, activatable: Bool
    ) {
        try load()
        let cancellation = try Cancellation(after: timeout)
        let connection = try check("g_bus_get_sync", cancellation) {
            lk_g_bus_get_sync(LK_G_BUS_TYPE_SESSION, cancellation.pointer, $0)
        }
        guard let connection else {
            throw LatchkeyError(.unavailable, "no D-Bus connection", cFunction: "g_bus_get_sync")
        }
        let bus = BusConnection(connection, isShared: true)
        var argument: OpaquePointer? = lk_g_variant_new_string(name)
        let owner: UInt32?
        let owned: Bool
        do {
            owner = try withUnsafePointer(to: &argument) { arguments in
                try bus.call("GetConnectionUnixProcessID", lk_g_variant_new_tuple(arguments, 1), cancellation) {
                    lk_g_variant_get_uint32($0)
                }
            }
            owned = true
        } catch let error as LatchkeyError where error.code == .unavailable {
            // Nobody owns it, or the bus cannot tell the owner's process.
            owner = nil
            var again: OpaquePointer? = lk_g_variant_new_string(name)
            owned = try withUnsafePointer(to: &again) { arguments in
                try bus.call("NameHasOwner", lk_g_variant_new_tuple(arguments, 1), cancellation) { reply in
                    lk_g_variant_get_boolean(reply) != 0
                }
            }
        }
        let activatable = try bus.call("ListActivatableNames", nil, cancellation) { reply in
            (0..<lk_g_variant_n_children(reply)).contains { index in
                let child = lk_g_variant_get_child_value(reply, index)
                defer { lk_g_variant_unref(child) }
                return String(cString: lk_g_variant_get_string(child, nil)) == name
            }
        }
        return (owned, owner, activatable)
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

// MARK: Following the bus

extension LibSecret {
    /// How many signals that may change what a kept backend learnt about the Secret
    /// Service this process has received, plus one per watch started: a value a
    /// backend sampled still being current says no such signal arrived since.
    /// Moved only by ``busFilter`` (on GDBus's worker thread) and ``Connection/watchBus()``.
    private static let busGeneration = Atomic<UInt64>(0)
    /// The `GDBusConnection` (its address) whose messages ``busFilter`` sees, once a watch
    /// started; the watch holds a reference to it, so the address is never reused meanwhile.
    private static let watchedConnection = Mutex<UInt?>(nil)

    /// The signals a watch asks the bus for (`AddMatch`): the Secret Service's owner
    /// changing, and every signal of the service, its collections and items (created,
    /// deleted, changed; `PropertiesChanged`, which carries `Locked`).
    private static let watchedSignals = [
        "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(SecretServiceAvailability.busName)'",
        "type='signal',interface='org.freedesktop.Secret.Service'",
        "type='signal',interface='org.freedesktop.Secret.Collection'",
        "type='signal',interface='org.freedesktop.Secret.Item'",
        "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',arg0namespace='org.freedesktop.Secret'",
    ]

    /// The generation of the watch on the process's Secret Service connection, or nil
    /// when none was started. A value sampled before a call and found again after its
    /// reply means no watched signal arrived in between, nor before the service answered:
    /// GDBus runs ``busFilter`` on every incoming message, in order, before a reply
    /// reaches its caller, and a service emits a change's signals before it answers a later call.
    static var watchGeneration: UInt64? {
        guard watchedConnection.withLock({ $0 }) != nil else { return nil }
        return busGeneration.load(ordering: .sequentiallyConsistent)
    }

    /// Whether `message` is a signal that may change where things are in the Secret
    /// Service, or whether it is there, reachable or unlocked
    /// (`g_dbus_message_get_message_type`, `_get_interface`, `_get_member`, `_get_arg0`).
    fileprivate static func isWatched(_ message: OpaquePointer) -> Bool {
        guard lk_g_dbus_message_get_message_type(message) == LK_G_DBUS_MESSAGE_TYPE_SIGNAL,
            let interface = lk_g_dbus_message_get_interface(message).map({ String(cString: $0) })
        else { return false }
        let member = lk_g_dbus_message_get_member(message).map { String(cString: $0) }
        let arg0 = lk_g_dbus_message_get_arg0(message).map { String(cString: $0) }
        switch interface {
        case "org.freedesktop.Secret.Service", "org.freedesktop.Secret.Collection", "org.freedesktop.Secret.Item":
            return true
        case "org.freedesktop.DBus.Properties":
            return member == "PropertiesChanged" && arg0?.hasPrefix("org.freedesktop.Secret.") == true
        case "org.freedesktop.DBus":
            return member == "NameOwnerChanged" && arg0 == SecretServiceAvailability.busName
        case "org.freedesktop.DBus.Local":
            return true // Disconnected
        default:
            return false
        }
    }

    /// The message filter (`g_dbus_connection_add_filter`): moves ``busGeneration`` on a
    /// watched incoming signal and passes every message on unchanged.
    private static let busFilter:
        @convention(c) (OpaquePointer?, OpaquePointer?, Int32, UnsafeMutableRawPointer?) -> OpaquePointer? = {
            _, message, incoming, _ in
            if incoming != 0, let message, LibSecret.isWatched(message) {
                LibSecret.busGeneration.add(1, ordering: .sequentiallyConsistent)
            }
            return message
        }

    /// Starts following the bus on `connection` (a `GDBusConnection`) unless it is
    /// followed already: a message filter (`g_dbus_connection_add_filter`), then the
    /// bus's `AddMatch` for each of ``watchedSignals`` (answered once the rule applies).
    /// A watch lasts as long as the process; a new connection gets a new one, and
    /// starting one moves the generation, so nothing learnt before it counts.
    /// - Throws: What the `AddMatch` calls throw (`.timedOut`, `.unavailable`).
    fileprivate static func watch(_ connection: OpaquePointer, _ cancellation: Cancellation) throws {
        let address = UInt(bitPattern: connection)
        guard watchedConnection.withLock({ $0 }) != address else { return }
        for rule in watchedSignals {
            var argument: OpaquePointer? = lk_g_variant_new_string(rule)
            let reply = try withUnsafePointer(to: &argument) { arguments in
                try check("g_dbus_connection_call_sync", cancellation) {
                    lk_g_dbus_connection_call_sync(
                        connection, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                        "AddMatch", lk_g_variant_new_tuple(arguments, 1), nil, LK_G_DBUS_CALL_FLAGS_NONE, -1,
                        cancellation.pointer, $0)
                }
            }
            if let reply { lk_g_variant_unref(reply) }
        }
        lk_g_object_ref(UnsafeMutableRawPointer(connection))
        _ = lk_g_dbus_connection_add_filter(connection, busFilter, nil, nil)
        busGeneration.add(1, ordering: .sequentiallyConsistent)
        watchedConnection.withLock { $0 = address }
    }
}

extension LibSecret.Connection {
    /// Follows the bus on this connection's `GDBusConnection` (the one libsecret's
    /// service proxy uses), starting the watch the first time (``LibSecret/watchGeneration``).
    /// - Throws: `.timedOut`, `.unavailable` when the bus does not take the match rules.
    func watchBus() throws {
        guard let connection = lk_g_dbus_proxy_get_connection(service.pointer) else { return }
        try LibSecret.watch(connection, cancellation)
    }
}
