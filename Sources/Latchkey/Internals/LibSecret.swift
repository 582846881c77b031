internal import CSecret
import Dispatch
import Synchronization

// Every call into libsecret, GIO and GLib lives in this file. Nothing outside it
// sees a GLib type, a GError or an unsafe pointer that these libraries produced.
// Calls run one at a time in the process (libsecret and some providers have
// crashed under concurrent use), each operation under one deadline: see
// `withConnection(deadline:_:)`.

/// Thin, internal wrappers over libsecret and GIO, named after the C functions they call.
enum LibSecret {
    /// One item as found by a search: its attributes, label, whether it is
    /// locked, and its secret when it was loaded.
    struct Item: Sendable {
        let attributes: [String: String]
        let label: String
        let isLocked: Bool
        let secret: SecretBytes?
        fileprivate let handle: ItemHandle
    }

    /// Owns the `SecretItem` behind an ``Item``, for deleting it.
    fileprivate final class ItemHandle: @unchecked Sendable {
        // Sendable: the pointer is used only by the holder of the gate, one call at a time.
        let pointer: UnsafeMutablePointer<SecretItem>
        init(_ pointer: UnsafeMutablePointer<SecretItem>) {
            self.pointer = pointer
            g_object_ref(pointer)
        }
        deinit { g_object_unref(pointer) }
    }

    /// A one-byte buffer for the C parameters that must not be null when a secret is empty.
    private static let emptySecret: [CChar] = [0]

    /// A schema (`SecretSchema`) made with `secret_schema_newv`, whose attributes are all strings.
    ///
    /// Items stored with it carry the `xdg:schema` attribute, and searches with it
    /// match only items that carry it, so other programs' items never match.
    final class Schema: @unchecked Sendable {
        // Sendable: the schema is immutable after `init`; libsecret only reads it,
        // and its reference count is atomic.
        fileprivate let pointer: UnsafeMutablePointer<SecretSchema>
        fileprivate let name: String

        /// - Parameters:
        ///   - name: The schema name, such as `io.github.latchkey.Item`.
        ///   - attributes: The names of its attributes, all of string type.
        init(name: String, attributes: [String]) {
            let types = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, nil)
            for attribute in attributes {
                // The value is GINT_TO_POINTER(SECRET_SCHEMA_ATTRIBUTE_STRING), which is 0.
                g_hash_table_insert(types, g_strdup(attribute), nil)
            }
            pointer = secret_schema_newv(name, SECRET_SCHEMA_NONE, types)
            self.name = name
            g_hash_table_unref(types)
        }

        deinit { secret_schema_unref(pointer) }
    }

    // MARK: Errors

    /// Converts a GError into a `LatchkeyError` and frees it. The one place where
    /// GLib error domains and codes are interpreted.
    private static func convert(_ error: UnsafeMutablePointer<GError>, _ function: String, cancellation: Cancellation?) -> LatchkeyError {
        let domain = error.pointee.domain
        let code = error.pointee.code
        let detail = error.pointee.message.map { String(cString: $0) } ?? "no details"
        g_error_free(error)

        func isCode<Enum: RawRepresentable>(_ values: Enum...) -> Bool where Enum.RawValue: BinaryInteger {
            values.contains { Int64(code) == Int64($0.rawValue) }
        }
        let io = domain == g_io_error_quark(), dbus = domain == g_dbus_error_quark()
        if cancellation?.isCancelled == true || (io && isCode(G_IO_ERROR_CANCELLED)) {
            return LatchkeyError(.timedOut, "the Secret Service did not answer within the deadline", cFunction: function)
        }
        if (io && isCode(G_IO_ERROR_TIMED_OUT)) || (dbus && isCode(G_DBUS_ERROR_NO_REPLY, G_DBUS_ERROR_TIMEOUT, G_DBUS_ERROR_TIMED_OUT)) {
            return LatchkeyError(.timedOut, "the Secret Service did not answer: \(detail)", cFunction: function)
        }
        if domain == secret_error_get_quark() {
            if isCode(SECRET_ERROR_IS_LOCKED) {
                return LatchkeyError(.locked, "the Secret Service collection is locked (\(detail))", cFunction: function)
            }
            if isCode(SECRET_ERROR_NO_SUCH_OBJECT) {
                return LatchkeyError(.notFound, "the Secret Service item no longer exists (\(detail))", cFunction: function)
            }
            return LatchkeyError(.io, "the Secret Service failed: \(detail)", cFunction: function)
        }
        // Everything else from D-Bus or GIO (no bus, no owner, connection closed,
        // a session or object the daemon no longer knows) means the service cannot be used now.
        return LatchkeyError(.unavailable, "the Secret Service cannot be reached: \(detail)", cFunction: function)
    }

    /// Runs `body` with a GError out-parameter and throws the converted error when one was set.
    static func check<Result>(_ function: String, _ cancellation: Cancellation?,
                                      _ body: (UnsafeMutablePointer<UnsafeMutablePointer<GError>?>) -> Result) throws -> Result {
        var error: UnsafeMutablePointer<GError>?
        let result = body(&error)
        if let error { throw convert(error, function, cancellation: cancellation) }
        return result
    }

    // MARK: Deadlines

    /// The dispatch time `duration` from now; a negative duration means now.
    fileprivate static func dispatchTime(after duration: Duration) -> DispatchTime {
        let (seconds, attoseconds) = duration.components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !nanoseconds.overflow else { return .distantFuture }
        return .now() + .nanoseconds(Int(clamping: max(0, nanoseconds.partialValue + attoseconds / 1_000_000_000)))
    }

    /// A `GCancellable` that a timer on another thread cancels at the deadline.
    /// Owns both; releasing it stops the timer and unrefs the cancellable.
    final class Cancellation: @unchecked Sendable {
        // Sendable: the timer's handler calls only g_cancellable_cancel, which GLib
        // documents as safe to call from any thread; everything else is immutable.
        let pointer: UnsafeMutablePointer<GCancellable>
        private let timer: DispatchSourceTimer

        init(after timeout: Duration) {
            pointer = g_cancellable_new()
            timer = DispatchSource.makeTimerSource(queue: .global())
            timer.schedule(deadline: LibSecret.dispatchTime(after: timeout))
            let target = pointer
            timer.setEventHandler { g_cancellable_cancel(target) }
            timer.resume()
        }

        var isCancelled: Bool { g_cancellable_is_cancelled(pointer) != 0 }

        deinit {
            timer.setEventHandler {}
            timer.cancel()
            g_object_unref(pointer)
        }
    }

    // MARK: The process-wide connection

    /// The process's own `SecretService` proxy with an open session, made with
    /// `secret_service_open_sync` (not libsecret's shared default, so dropping it
    /// after a failure cannot disturb anyone else).
    fileprivate final class Service: @unchecked Sendable {
        // Sendable: used only by the holder of the gate, one call at a time.
        let pointer: UnsafeMutablePointer<SecretService>
        init(_ pointer: UnsafeMutablePointer<SecretService>) { self.pointer = pointer }
        deinit { g_object_unref(pointer) }
    }

    /// Serialises every libsecret call in the process. A semaphore rather than a
    /// `Mutex` because waiting for it must end at the caller's deadline.
    private static let gate = DispatchSemaphore(value: 1)
    /// The open service, or nil before the first call and after a failure that may
    /// have left it stale (a killed or restarted daemon).
    private static let service = Mutex<Service?>(nil)

    /// Drops the process's service proxy so the next call opens a fresh one.
    static func disconnect() {
        service.withLock { $0 = nil }
    }

    /// Runs `body` with the Secret Service while holding the process-wide gate.
    ///
    /// The gate is waited for with the deadline, so queueing counts too; then one
    /// `GCancellable`, cancelled by a timer on another thread at the deadline,
    /// stops every call `body` makes, which then fails with `.timedOut`.
    ///
    /// When the kept connection turns out stale (`.unavailable`: the daemon it
    /// talked to was restarted or killed, and D-Bus addresses the old instance),
    /// a fresh one is opened and `body` runs once more, within the same deadline;
    /// `body` must therefore be safe to repeat.
    /// - Parameters:
    ///   - deadline: How long the whole operation, waiting included, may take.
    ///   - body: The operation.
    /// - Returns: What `body` returns.
    /// - Throws: `LatchkeyError`: `.timedOut` when the deadline passes, `.unavailable`,
    ///   `.locked`, or what `body` throws. After an error that may mean a stale
    ///   connection, the connection is dropped so the next call reconnects.
    static func withConnection<Result>(deadline: Duration, _ body: (Connection) throws -> Result) throws -> Result {
        let clock = ContinuousClock()
        let start = clock.now
        guard gate.wait(timeout: dispatchTime(after: deadline)) == .success else {
            throw LatchkeyError(.timedOut, "other Secret Service calls did not finish within the deadline")
        }
        defer { gate.signal() }
        let cancellation = Cancellation(after: deadline - (clock.now - start))
        do {
            if let kept = service.withLock({ $0 }) {
                do {
                    return try body(Connection(service: kept, cancellation: cancellation))
                } catch let error as LatchkeyError where error.code == .unavailable {
                    disconnect()
                }
            }
            let fresh = try open(cancellation)
            service.withLock { $0 = fresh }
            return try body(Connection(service: fresh, cancellation: cancellation))
        } catch let error as LatchkeyError where [.unavailable, .timedOut, .io, .internal].contains(error.code) {
            disconnect()
            throw error
        }
    }

    /// Opens a service proxy of the process's own with `secret_service_open_sync`.
    private static func open(_ cancellation: Cancellation) throws -> Service {
        let pointer = try check("secret_service_open_sync", cancellation) {
            secret_service_open_sync(secret_service_get_type(), nil, SECRET_SERVICE_OPEN_SESSION, cancellation.pointer, $0)
        }
        guard let pointer else {
            throw LatchkeyError(.unavailable, "the Secret Service could not be opened", cFunction: "secret_service_open_sync")
        }
        return Service(pointer)
    }

    /// The Secret Service while the gate is held; valid only inside `withConnection`.
    struct Connection {
        fileprivate let service: Service
        fileprivate let cancellation: Cancellation

        /// Searches with `secret_service_search_sync`, loading the secrets of unlocked
        /// items when asked, never unlocking anything: locked items come back with
        /// `isLocked` set and no secret.
        func search(_ schema: Schema, _ attributes: [String: String], loadSecrets: Bool) throws -> [Item] {
            let table = AttributeTable(attributes)
            var flags = SECRET_SEARCH_ALL.rawValue
            if loadSecrets { flags |= SECRET_SEARCH_LOAD_SECRETS.rawValue }
            let list = try check("secret_service_search_sync", cancellation) {
                secret_service_search_sync(service.pointer, schema.pointer, table.pointer, SecretSearchFlags(flags), cancellation.pointer, $0)
            }
            var items: [Item] = []
            var node = list
            while let current = node {
                if let data = current.pointee.data {
                    items.append(LibSecret.item(UnsafeMutablePointer<SecretItem>(OpaquePointer(data))))
                }
                node = current.pointee.next
            }
            g_list_free_full(list, g_object_unref)
            return items
        }

        /// The secrets of the items matching `attributes`, without making an item
        /// proxy for each: `secret_service_search_for_dbus_paths_sync`, then one
        /// `secret_service_get_secrets_for_dbus_paths_sync` for the unlocked ones.
        /// Never unlocks anything.
        /// - Returns: The unlocked items' secrets, and how many matching items are locked.
        func secrets(_ schema: Schema, _ attributes: [String: String]) throws -> (secrets: [SecretBytes], locked: Int) {
            let table = AttributeTable(attributes)
            var unlocked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
            var locked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
            defer {
                g_strfreev(unlocked)
                g_strfreev(locked)
            }
            _ = try check("secret_service_search_for_dbus_paths_sync", cancellation) {
                secret_service_search_for_dbus_paths_sync(service.pointer, schema.pointer, table.pointer, cancellation.pointer, &unlocked, &locked, $0)
            }
            let lockedCount = locked.map { Int(g_strv_length($0)) } ?? 0
            guard let unlocked, unlocked.pointee != nil else { return ([], lockedCount) }
            let paths = UnsafeMutableRawPointer(unlocked).assumingMemoryBound(to: UnsafePointer<gchar>?.self)
            guard let values = try check("secret_service_get_secrets_for_dbus_paths_sync", cancellation, {
                secret_service_get_secrets_for_dbus_paths_sync(service.pointer, paths, cancellation.pointer, $0)
            }) else { return ([], lockedCount) }
            defer { g_hash_table_unref(values) }
            var secrets: [SecretBytes] = []
            var iterator = GHashTableIter()
            g_hash_table_iter_init(&iterator, values)
            var value: gpointer?
            while g_hash_table_iter_next(&iterator, nil, &value) != 0 {
                guard let value else { continue }
                var length = 0
                let bytes = secret_value_get(OpaquePointer(value), &length)
                secrets.append(SecretBytes(count: length) { out in
                    if let bytes, length > 0 { out.copyMemory(from: UnsafeRawBufferPointer(start: bytes, count: length)) }
                })
            }
            return (secrets, lockedCount)
        }

        /// Stores an item in the default collection with `secret_service_create_item_dbus_path_sync`,
        /// replacing an item with the same attributes when `replace` is set.
        ///
        /// The collection is checked first: when it is locked this throws `.locked`
        /// at once instead of letting libsecret ask the daemon for an unlock prompt,
        /// which waits for a person (or, with no display, fails).
        func store(_ schema: Schema, _ attributes: [String: String], label: String, secret: SecretBytes, replace: Bool) throws {
            guard let collection = try defaultCollection() else {
                throw LatchkeyError(.unavailable, "the Secret Service has no default collection", cFunction: "secret_service_read_alias_dbus_path_sync")
            }
            guard !collection.locked else {
                throw LatchkeyError(.locked, "the Secret Service's default collection is locked", cFunction: "org.freedesktop.DBus.Properties.Get")
            }
            let properties = PropertyTable(label: label, attributes: attributes.merging(["xdg:schema": schema.name]) { $1 })
            let value = Value(secret)
            let flags = replace ? SECRET_ITEM_CREATE_REPLACE : SECRET_ITEM_CREATE_NONE
            let path = try check("secret_service_create_item_dbus_path_sync", cancellation) {
                secret_service_create_item_dbus_path_sync(service.pointer, collection.path, properties.pointer, value.pointer, flags, cancellation.pointer, $0)
            }
            g_free(path)
        }

        /// Whether the default collection is locked; false when there is none.
        ///
        /// Searches alone cannot tell "absent" from "locked": gnome-keyring, having
        /// loaded a keyring while locked, knows only hashed attributes and does not
        /// match `xdg:schema` against them, so a search with a schema finds nothing.
        func isDefaultCollectionLocked() throws -> Bool {
            try defaultCollection()?.locked ?? false
        }

        /// The D-Bus path of the collection behind the `default` alias
        /// (`secret_service_read_alias_dbus_path_sync`) and its `Locked` property,
        /// read fresh from the daemon (`org.freedesktop.DBus.Properties.Get` through
        /// `g_dbus_connection_call_sync`), without building a collection proxy;
        /// nil when there is no default collection.
        private func defaultCollection() throws -> (path: String, locked: Bool)? {
            let alias = try check("secret_service_read_alias_dbus_path_sync", cancellation) {
                secret_service_read_alias_dbus_path_sync(service.pointer, "default", cancellation.pointer, $0)
            }
            guard let alias else { return nil }
            let path = String(cString: alias)
            g_free(alias)
            guard path != "/" else { return nil }
            var arguments: [OpaquePointer?] = [g_variant_new_string("org.freedesktop.Secret.Collection"), g_variant_new_string("Locked")]
            let connection = g_dbus_proxy_get_connection(UnsafeMutableRawPointer(service.pointer).assumingMemoryBound(to: GDBusProxy.self))
            let reply = try check("g_dbus_connection_call_sync", cancellation) {
                g_dbus_connection_call_sync(connection, "org.freedesktop.secrets", path, "org.freedesktop.DBus.Properties", "Get",
                                            g_variant_new_tuple(&arguments, 2), nil, G_DBUS_CALL_FLAGS_NONE, -1, cancellation.pointer, $0)
            }
            guard let reply else {
                throw LatchkeyError(.io, "no reply to reading the collection's Locked property", cFunction: "g_dbus_connection_call_sync")
            }
            defer { g_variant_unref(reply) }
            guard g_variant_n_children(reply) == 1, let boxed = g_variant_get_child_value(reply, 0) else {
                throw LatchkeyError(.io, "unexpected reply to reading the collection's Locked property", cFunction: "g_variant_get_child_value")
            }
            defer { g_variant_unref(boxed) }
            guard let locked = g_variant_get_variant(boxed) else {
                throw LatchkeyError(.io, "unexpected reply to reading the collection's Locked property", cFunction: "g_variant_get_variant")
            }
            defer { g_variant_unref(locked) }
            return (path, g_variant_get_boolean(locked) != 0)
        }

        /// Deletes one item found by ``search(_:_:loadSecrets:)`` with `secret_item_delete_sync`.
        /// An item that no longer exists counts as deleted.
        /// - Parameter item: The item.
        func delete(_ item: Item) throws {
            do {
                _ = try check("secret_item_delete_sync", cancellation) {
                    secret_item_delete_sync(item.handle.pointer, cancellation.pointer, $0)
                }
            } catch let error as LatchkeyError where error.code == .notFound {
                return
            }
        }
    }

    /// Reads an item's state into Swift values (`secret_item_get_locked`,
    /// `secret_item_get_attributes`, `secret_item_get_label`, `secret_item_get_secret`).
    private static func item(_ pointer: UnsafeMutablePointer<SecretItem>) -> Item {
        var attributes: [String: String] = [:]
        if let table = secret_item_get_attributes(pointer) {
            var iterator = GHashTableIter()
            g_hash_table_iter_init(&iterator, table)
            var key: gpointer?
            var value: gpointer?
            while g_hash_table_iter_next(&iterator, &key, &value) != 0 {
                if let key, let value {
                    attributes[String(cString: key.assumingMemoryBound(to: CChar.self))] = String(cString: value.assumingMemoryBound(to: CChar.self))
                }
            }
            g_hash_table_unref(table)
        }
        var label = ""
        if let text = secret_item_get_label(pointer) {
            label = String(cString: text)
            g_free(text)
        }
        var secret: SecretBytes?
        if let value = secret_item_get_secret(pointer) {
            var length = 0
            let bytes = secret_value_get(value, &length)
            secret = SecretBytes(count: length) { out in
                if let bytes, length > 0 { out.copyMemory(from: UnsafeRawBufferPointer(start: bytes, count: length)) }
            }
            secret_value_unref(UnsafeMutableRawPointer(value))
        }
        return Item(attributes: attributes, label: label, isLocked: secret_item_get_locked(pointer) != 0,
                    secret: secret, handle: ItemHandle(pointer))
    }

    /// A bare lookup by one attribute with no schema (`secret_password_lookupv_sync`),
    /// for the benchmarks' comparison; a found secret is freed (`secret_password_free`) at once.
    static func bareLookup(attribute: String, value: String) throws -> Bool {
        let table = AttributeTable([attribute: value])
        let secret = try check("secret_password_lookupv_sync", nil) { secret_password_lookupv_sync(nil, table.pointer, nil, $0) }
        guard let secret else { return false }
        secret_password_free(secret)
        return true
    }

    /// A `GHashTable` of string attributes (`g_hash_table_new_full`), freed by its owner.
    private final class AttributeTable {
        let pointer: OpaquePointer
        init(_ attributes: [String: String]) {
            pointer = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)
            for (key, value) in attributes {
                g_hash_table_insert(pointer, g_strdup(key), g_strdup(value))
            }
        }
        deinit { g_hash_table_unref(pointer) }
    }

    /// A `GHashTable` of an item's D-Bus properties (its label and its attributes
    /// as `a{ss}`), as `secret_service_create_item_dbus_path_sync` takes them; freed by its owner.
    private final class PropertyTable {
        let pointer: OpaquePointer
        init(label: String, attributes: [String: String]) {
            pointer = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, { g_variant_unref(OpaquePointer($0)) })
            let type = g_variant_type_new("a{ss}")
            let builder = g_variant_builder_new(type)
            g_variant_type_free(type)
            for (key, value) in attributes {
                g_variant_builder_add_value(builder, g_variant_new_dict_entry(g_variant_new_string(key), g_variant_new_string(value)))
            }
            g_hash_table_insert(pointer, g_strdup("org.freedesktop.Secret.Item.Attributes"),
                                UnsafeMutableRawPointer(g_variant_ref_sink(g_variant_builder_end(builder))))
            g_variant_builder_unref(builder)
            g_hash_table_insert(pointer, g_strdup("org.freedesktop.Secret.Item.Label"),
                                UnsafeMutableRawPointer(g_variant_ref_sink(g_variant_new_string(label))))
        }
        deinit { g_hash_table_unref(pointer) }
    }

    /// A `SecretValue` holding a copy of a secret (`secret_value_new` copies into
    /// libsecret's own memory, which it zeroes when freed), released by its owner.
    private final class Value {
        let pointer: OpaquePointer
        init(_ secret: SecretBytes) {
            pointer = secret.withUnsafeBytes { bytes in
                emptySecret.withUnsafeBufferPointer { empty in
                    secret_value_new(bytes.baseAddress?.assumingMemoryBound(to: CChar.self) ?? empty.baseAddress!,
                                     bytes.count, "application/octet-stream")
                }
            }
        }
        deinit { secret_value_unref(UnsafeMutableRawPointer(pointer)) }
    }
}
