internal import CLatchkeySecret
import Latchkey

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#endif

// Every GIO and GLib call of the provider: the bus connection, the subtrees it serves,
// the bus name, signals, replies, and the conversion between GVariant and `DBusValue`.
// Nothing outside this file sees a GLib type or a pointer; a GError becomes a
// `LatchkeyError` here (`check`), naming the call.

/// The provider's connection to the session bus, on the thread that made it: GDBus calls
/// the handlers on that thread's main context, which ``run()`` iterates.
final class BusConnection {
    private let context: OpaquePointer
    private let connection: OpaquePointer
    /// The handler of each registered subtree, kept while it is registered (GDBus holds a pointer to it).
    private var boxes: [UInt32: HandlerBox] = [:]
    /// What ``whenClientLeaves(_:)`` calls.
    private var clientLeft: ((String) -> Void)?

    /// Loads GIO (through libsecret's loader), makes a main context this thread's default,
    /// and opens a private connection to the session bus
    /// (`g_dbus_address_get_for_bus_sync`, `g_dbus_connection_new_for_address_sync`).
    /// - Throws: `LatchkeyError` `.unavailable` when GIO cannot be loaded or the bus cannot be reached.
    init() throws {
        var reason = [CChar](repeating: 0, count: 512)
        guard latchkey_secret_load(&reason, reason.count) == 0 else {
            let text = String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw LatchkeyError(.unavailable, "GIO cannot be loaded: \(text)", cFunction: "dlopen")
        }
        guard let context = lk_g_main_context_new() else {
            throw LatchkeyError(.unavailable, "no main context", cFunction: "g_main_context_new")
        }
        lk_g_main_context_push_thread_default(context)
        self.context = context
        do {
            connection = try Self.connect()
        } catch {
            lk_g_main_context_pop_thread_default(context)
            lk_g_main_context_unref(context)
            throw error
        }
        try Self.check("g_dbus_node_info_new_for_xml") { latchkey_provider_load_interfaces(Introspection.xml, $0) }
    }

    /// Closes the connection (`g_dbus_connection_close_sync`), which ends its registrations and
    /// name, and lets go of the main context; on the thread that made it (the provider's, when it does not serve).
    deinit {
        _ = lk_g_dbus_connection_close_sync(connection, nil, nil)
        lk_g_object_unref(UnsafeMutableRawPointer(connection))
        lk_g_main_context_pop_thread_default(context)
        lk_g_main_context_unref(context)
    }

    /// A private connection to the session bus.
    private static func connect() throws -> OpaquePointer {
        let address = try check("g_dbus_address_get_for_bus_sync") {
            lk_g_dbus_address_get_for_bus_sync(LK_G_BUS_TYPE_SESSION, nil, $0)
        }
        guard let address else { throw LatchkeyError(.unavailable, "no session bus address") }
        defer { lk_g_free(address) }
        let flags = LK_G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT | LK_G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION
        let connection = try check("g_dbus_connection_new_for_address_sync") {
            lk_g_dbus_connection_new_for_address_sync(address, flags, nil, nil, $0)
        }
        guard let connection else { throw LatchkeyError(.unavailable, "no session bus connection") }
        return connection
    }

    /// Whether `name` has an owner on the bus (the bus's `NameHasOwner`).
    /// - Throws: `LatchkeyError` `.unavailable` when the bus does not answer.
    func hasOwner(_ name: String) throws -> Bool {
        var argument: OpaquePointer? = lk_g_variant_new_string(name)
        let parameters = withUnsafePointer(to: &argument) { lk_g_variant_new_tuple($0, 1) }
        let reply = try Self.check("g_dbus_connection_call_sync") {
            lk_g_dbus_connection_call_sync(
                connection, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
                parameters, nil, LK_G_DBUS_CALL_FLAGS_NONE, 5000, nil, $0)
        }
        guard let reply else { throw LatchkeyError(.unavailable, "the bus did not answer NameHasOwner") }
        defer { lk_g_variant_unref(reply) }
        let value = lk_g_variant_get_child_value(reply, 0)
        defer { lk_g_variant_unref(value) }
        return lk_g_variant_get_boolean(value) != 0
    }

    /// Whether the bus can start a service for `name` (the bus's `ListActivatableNames`).
    /// - Throws: `LatchkeyError` `.unavailable` when the bus does not answer.
    func isActivatable(_ name: String) throws -> Bool {
        let reply = try call(
            "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "ListActivatableNames", [])
        guard reply.count == 1, case .array(_, let names)? = reply[0] else {
            throw LatchkeyError(.unavailable, "the bus gave an unexpected answer to ListActivatableNames")
        }
        return names.contains { $0.string == name }
    }

    /// The user id and process id of the client `sender` (a unique name), as the bus daemon
    /// saw them when it connected (the bus's `GetConnectionCredentials`: `UnixUserID`, `ProcessID`);
    /// nil for one the bus does not know or give.
    func credentials(of sender: String) -> (uid: UInt32, pid: UInt32)? {
        var argument: OpaquePointer? = lk_g_variant_new_string(sender)
        let parameters = withUnsafePointer(to: &argument) { lk_g_variant_new_tuple($0, 1) }
        guard
            let reply = try? Self.check(
                "g_dbus_connection_call_sync",
                { error in
                    lk_g_dbus_connection_call_sync(
                        connection, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                        "GetConnectionCredentials", parameters, nil, LK_G_DBUS_CALL_FLAGS_NONE, 5000, nil, error)
                })
        else { return nil }
        defer { lk_g_variant_unref(reply) }
        guard let dictionary = lk_g_variant_get_child_value(reply, 0) else { return nil }
        defer { lk_g_variant_unref(dictionary) }
        var numbers: [String: UInt32] = [:]
        for index in 0..<lk_g_variant_n_children(dictionary) {
            guard let entry = lk_g_variant_get_child_value(dictionary, index) else { continue }
            defer { lk_g_variant_unref(entry) }
            guard let key = lk_g_variant_get_child_value(entry, 0), let boxed = lk_g_variant_get_child_value(entry, 1)
            else { continue }
            defer {
                lk_g_variant_unref(key)
                lk_g_variant_unref(boxed)
            }
            guard let value = lk_g_variant_get_variant(boxed) else { continue }
            defer { lk_g_variant_unref(value) }
            if String(cString: lk_g_variant_get_type_string(value)) == "u" {
                numbers[String(cString: lk_g_variant_get_string(key, nil))] = UInt32(lk_g_variant_get_uint32(value))
            }
        }
        guard let uid = numbers["UnixUserID"], let pid = numbers["ProcessID"] else { return nil }
        return (uid, pid)
    }

    /// Calls `method` of `interface` at `path` of `destination` and waits for its reply
    /// (`g_dbus_connection_call_sync`, never starting a service).
    /// - Returns: The reply's values, decoded.
    /// - Throws: `LatchkeyError` `.unavailable` with the D-Bus error when the call fails.
    func call(
        _ destination: String, _ path: String, _ interface: String, _ method: String, _ arguments: [DBusValue]
    ) throws -> [DBusValue?] {
        let reply = try Self.check("g_dbus_connection_call_sync") {
            lk_g_dbus_connection_call_sync(
                connection, destination, path, interface, method, encodeTuple(arguments), nil,
                LK_G_DBUS_CALL_FLAGS_NO_AUTO_START, 30_000, nil, $0)
        }
        guard let reply else { throw LatchkeyError(.unavailable, "\(destination) did not answer \(method)") }
        defer { lk_g_variant_unref(reply) }
        return decodeArguments(reply)
    }

    /// Calls `action` on this connection's thread once `seconds` have passed: a thread of its
    /// own sleeps, then cancels a `GCancellable` whose source on this thread's main context
    /// (`latchkey_provider_attach_wake`) wakes ``run()``. Nothing cancels it: `action` checks
    /// whether it is still wanted.
    func schedule(after seconds: TimeInterval, _ action: @escaping () -> Void) {
        guard let cancellable = lk_g_cancellable_new() else { return }
        let box = Unmanaged.passRetained(Wake(action)).toOpaque()
        let attached = latchkey_provider_attach_wake(
            context, cancellable, { data in Unmanaged<Wake>.fromOpaque(data!).takeUnretainedValue().action() }, box,
            { data in Unmanaged<Wake>.fromOpaque(data!).release() })
        guard attached == 0 else {
            Unmanaged<Wake>.fromOpaque(box).release()
            lk_g_object_unref(UnsafeMutableRawPointer(cancellable))
            return
        }
        let pointer = CancellablePointer(value: cancellable)
        let wake: @Sendable () -> Void = {
            lk_g_cancellable_cancel(pointer.value)
            lk_g_object_unref(UnsafeMutableRawPointer(pointer.value))
        }
        do {
            try POSIX.startThread {
                POSIX.sleep(.seconds(seconds))
                wake()
            }
        } catch {
            // No thread to wait on: `action` runs now rather than never (a lock or a
            // dismissal that comes early, never one that does not come).
            wake()
        }
    }

    /// Asks the bus for `name` without replacing its owner (`g_bus_own_name_on_connection`
    /// with `G_BUS_NAME_OWNER_FLAGS_NONE`); `changed` is called with true when it is acquired and
    /// false when it is not (or lost).
    func ownName(_ name: String, changed: @escaping (Bool) -> Void) {
        let box = Unmanaged.passRetained(NameWatch(changed)).toOpaque()
        _ = lk_g_bus_own_name_on_connection(
            connection, name, LK_G_BUS_NAME_OWNER_FLAGS_NONE,
            { _, _, data in Unmanaged<NameWatch>.fromOpaque(data!).takeUnretainedValue().changed(true) },
            { _, _, data in Unmanaged<NameWatch>.fromOpaque(data!).takeUnretainedValue().changed(false) },
            box, { data in Unmanaged<NameWatch>.fromOpaque(data!).release() })
    }

    /// Calls `left` with the unique name of each client that leaves the bus (the bus's
    /// `NameOwnerChanged` with no new owner, `g_dbus_connection_signal_subscribe`).
    func whenClientLeaves(_ left: @escaping (String) -> Void) {
        clientLeft = left
        // The connection lives as long as the process (``run()`` never returns), so GDBus may hold it unretained.
        let context = Unmanaged.passUnretained(self).toOpaque()
        _ = lk_g_dbus_connection_signal_subscribe(
            connection, "org.freedesktop.DBus", "org.freedesktop.DBus", "NameOwnerChanged", "/org/freedesktop/DBus",
            nil,
            LK_G_DBUS_SIGNAL_FLAGS_NONE,
            { _, _, _, _, _, parameters, data in
                let bus = Unmanaged<BusConnection>.fromOpaque(data!).takeUnretainedValue()
                let names = decodeArguments(parameters).map { $0?.string }
                guard names.count == 3, let name = names[0], name.hasPrefix(":"), names[2] == "" else { return }
                bus.clientLeft?(name)
            }, context, nil)
    }

    /// Serves the subtree at `path` through `handler` (`latchkey_provider_register`).
    /// - Returns: The registration, for ``unregister(_:)``.
    /// - Throws: `LatchkeyError` `.unavailable` when GDBus refuses it.
    @discardableResult
    func register(_ path: String, _ handler: SubtreeHandler) throws -> UInt32 {
        var handlers = lk_provider_handlers(
            method_call: { context, sender, path, interface, method, parameters, invocation in
                let handler = Unmanaged<HandlerBox>.fromOpaque(context!).takeUnretainedValue().handler
                let reply = MethodReply(invocation!)
                let call = MethodCall(
                    sender: String(cString: sender!), path: String(cString: path!),
                    interface: String(cString: interface!), method: String(cString: method!),
                    arguments: decodeArguments(parameters), reply: reply)
                if let result = handler.call(call) {
                    reply.send(result)
                    handler.answered()
                }
            },
            get_property: { context, path, interface, name, error in
                let handler = Unmanaged<HandlerBox>.fromOpaque(context!).takeUnretainedValue().handler
                switch handler.property(String(cString: path!), String(cString: interface!), String(cString: name!)) {
                case .success(let value): return encode(value)
                case .failure(let failure):
                    error?.pointee = lk_g_dbus_error_new_for_dbus_error(failure.name, failure.message)
                    return nil
                }
            },
            set_property: { context, sender, path, interface, name, value, error in
                let handler = Unmanaged<HandlerBox>.fromOpaque(context!).takeUnretainedValue().handler
                let decoded = value.flatMap { decode($0) }
                let result = handler.setProperty(
                    String(cString: sender!), String(cString: path!), String(cString: interface!),
                    String(cString: name!), decoded)
                defer { handler.answered() }
                if case .failure(let failure) = result {
                    error?.pointee = lk_g_dbus_error_new_for_dbus_error(failure.name, failure.message)
                    return 0
                }
                return 1
            },
            interfaces: { context, path in
                let handler = Unmanaged<HandlerBox>.fromOpaque(context!).takeUnretainedValue().handler
                return handler.interfaces(String(cString: path!)).rawValue
            },
            children: { context, path in
                let handler = Unmanaged<HandlerBox>.fromOpaque(context!).takeUnretainedValue().handler
                let names = handler.children(String(cString: path!))
                return names.isEmpty ? nil : strdup(names.joined(separator: "\n"))
            })
        let box = HandlerBox(handler)
        let context = Unmanaged.passUnretained(box).toOpaque()
        let id = try Self.check("g_dbus_connection_register_subtree") {
            latchkey_provider_register(connection, path, &handlers, context, $0)
        }
        if id != 0 { boxes[id] = box }
        return id
    }

    /// Stops serving a subtree ``register(_:_:)`` registered.
    func unregister(_ registration: UInt32) {
        _ = lk_g_dbus_connection_unregister_subtree(connection, registration)
        boxes[registration] = nil
    }

    /// Emits a signal to every listener (`g_dbus_connection_emit_signal`); a signal that
    /// cannot be sent (the connection closed) is dropped, as no caller waits for it.
    func emit(_ path: String, _ interface: String, _ signal: String, _ values: [DBusValue]) {
        _ = try? Self.check("g_dbus_connection_emit_signal") {
            lk_g_dbus_connection_emit_signal(connection, nil, path, interface, signal, encodeTuple(values), $0)
        }
    }

    /// Serves calls on this thread until the process ends (`g_main_context_iteration`).
    func run() -> Never {
        while true { _ = lk_g_main_context_iteration(context, 1) }
    }

    /// Runs a call that reports failure through a GError, and turns that GError into a
    /// `LatchkeyError` `.unavailable` naming `function` (the one conversion).
    @discardableResult
    private static func check<Result>(
        _ function: String, _ body: (UnsafeMutablePointer<UnsafeMutablePointer<LKGError>?>) -> Result
    ) throws -> Result {
        var error: UnsafeMutablePointer<LKGError>?
        let result = body(&error)
        if let error {
            let message = error.pointee.message.map { String(cString: $0) } ?? "unknown error"
            lk_g_error_free(error)
            throw LatchkeyError(.unavailable, message, cFunction: function)
        }
        return result
    }
}

/// The answer to one method call, sent once (`g_dbus_method_invocation_return_value` or
/// `_return_dbus_error`, which take the invocation over): at once, or later on the provider's
/// thread for a call whose work runs elsewhere (an unlock's key derivation). A reply never
/// sent is answered `Failed` when it is released, so no client waits for ever.
final class MethodReply {
    private var invocation: OpaquePointer?

    init(_ invocation: OpaquePointer) { self.invocation = invocation }

    deinit { send(.failure(.failed("the call was not answered"))) }

    /// Sends `result`; a second answer is ignored.
    func send(_ result: Result<[DBusValue], ProviderError>) {
        guard let invocation else { return }
        self.invocation = nil
        switch result {
        case .success(let values):
            lk_g_dbus_method_invocation_return_value(invocation, encodeTuple(values))
        case .failure(let error):
            lk_g_dbus_method_invocation_return_dbus_error(invocation, error.name, error.message)
        }
    }
}

/// A subtree's handler, as the context pointer GDBus hands back.
private final class HandlerBox {
    let handler: any SubtreeHandler
    init(_ handler: any SubtreeHandler) { self.handler = handler }
}

/// What ``BusConnection/schedule(after:_:)`` calls, kept alive by its source.
private final class Wake {
    let action: () -> Void
    init(_ action: @escaping () -> Void) { self.action = action }
}

/// A `GCancellable`, which GLib lets any thread cancel, handed to the timer's thread.
private struct CancellablePointer: @unchecked Sendable {
    let value: OpaquePointer
}

/// The closure ``BusConnection/ownName(_:changed:)`` calls, kept alive by GDBus.
private final class NameWatch {
    let changed: (Bool) -> Void
    init(_ changed: @escaping (Bool) -> Void) { self.changed = changed }
}

/// The arguments of a call, decoded (nil for a type the provider does not read).
private func decodeArguments(_ parameters: OpaquePointer?) -> [DBusValue?] {
    guard let parameters else { return [] }
    return (0..<lk_g_variant_n_children(parameters)).map { index in
        let child = lk_g_variant_get_child_value(parameters, index)
        defer { lk_g_variant_unref(child) }
        return child.flatMap { decode($0) }
    }
}

/// `value` as a `DBusValue` (``DBusValue/other(_:)`` for a type the provider does not read).
private func decode(_ value: OpaquePointer) -> DBusValue? {
    let type = String(cString: lk_g_variant_get_type_string(value))
    switch type.first {
    case "s": return .string(String(cString: lk_g_variant_get_string(value, nil)))
    case "o": return .objectPath(String(cString: lk_g_variant_get_string(value, nil)))
    case "b": return .boolean(lk_g_variant_get_boolean(value) != 0)
    case "v":
        guard let inner = lk_g_variant_get_variant(value) else { return nil }
        defer { lk_g_variant_unref(inner) }
        return decode(inner).map { .variant($0) }
    case "a" where type == "ay":
        var count = 0
        guard let bytes = lk_g_variant_get_fixed_array(value, &count, 1) else { return .bytes(SecretBytes()) }
        let source = UnsafeRawBufferPointer(start: bytes, count: count)
        return .bytes(SecretBytes(source))
    case "a", "(", "{":
        var children: [DBusValue] = []
        for index in 0..<lk_g_variant_n_children(value) {
            guard let child = lk_g_variant_get_child_value(value, index) else { return nil }
            defer { lk_g_variant_unref(child) }
            guard let decoded = decode(child) else { return nil }
            children.append(decoded)
        }
        switch type.first {
        case "a": return .array(String(type.dropFirst()), children)
        case "{": return children.count == 2 ? .dictEntry(children[0], children[1]) : nil
        default: return .tuple(children)
        }
    default: return .other(type)
    }
}

/// `values` as one floating tuple, the parameters of a reply or a signal.
private func encodeTuple(_ values: [DBusValue]) -> OpaquePointer? {
    var children = values.map { encode($0) }
    return children.withUnsafeMutableBufferPointer { buffer in
        buffer.withMemoryRebound(to: OpaquePointer?.self) { lk_g_variant_new_tuple($0.baseAddress, $0.count) }
    }
}

/// `value` as a floating GVariant.
private func encode(_ value: DBusValue) -> OpaquePointer? {
    switch value {
    case .string(let text): return lk_g_variant_new_string(text)
    case .objectPath(let path): return lk_g_variant_new_object_path(path)
    case .boolean(let flag): return lk_g_variant_new_boolean(flag ? 1 : 0)
    case .uint64(let number): return lk_g_variant_new_uint64(number)
    case .bytes(let bytes):
        let type = lk_g_variant_type_new("y")
        defer { lk_g_variant_type_free(type) }
        return bytes.withUnsafeBytes { lk_g_variant_new_fixed_array(type, $0.baseAddress, $0.count, 1) }
    case .variant(let inner): return lk_g_variant_new_variant(encode(inner))
    case .other: preconditionFailure("the provider never sends a value it does not read")
    case .dictEntry(let key, let entry): return lk_g_variant_new_dict_entry(encode(key), encode(entry))
    case .tuple(let values): return encodeTuple(values)
    case .array(let elementType, let elements):
        let type = lk_g_variant_type_new("a" + elementType)
        defer { lk_g_variant_type_free(type) }
        let builder = lk_g_variant_builder_new(type)
        defer { lk_g_variant_builder_unref(builder) }
        for element in elements { lk_g_variant_builder_add_value(builder, encode(element)) }
        return lk_g_variant_builder_end(builder)
    }
}
