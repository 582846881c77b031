internal import CLatchkeySecret

// The calls one Secret Service connection makes (see `LibSecret.swift`).

extension LibSecret {
    struct Connection {
        let service: Service
        let cancellation: Cancellation

        /// Searches with `secret_service_search_sync`, loading the secrets of unlocked
        /// items when asked, never unlocking anything: locked items come back with
        /// `isLocked` set and no secret.
        func search(_ schema: Schema, _ attributes: [String: String], loadSecrets: Bool) throws -> [Item] {
            let table = AttributeTable(attributes)
            let flags = LK_SECRET_SEARCH_ALL | (loadSecrets ? LK_SECRET_SEARCH_LOAD_SECRETS : LK_SECRET_SEARCH_NONE)
            let list = try check("secret_service_search_sync", cancellation) {
                lk_secret_service_search_sync(
                    service.pointer, schema.pointer, table.pointer, flags, cancellation.pointer, $0)
            }
            var items: [Item] = []
            var node = list
            while let current = node {
                if let data = current.pointee.data {
                    items.append(LibSecret.item(OpaquePointer(data)))
                }
                node = current.pointee.next
            }
            lk_g_list_free_full(list, lk_g_object_unref)
            return items
        }

        /// The secrets of the items matching `attributes`, without making an item
        /// proxy for each: `secret_service_search_for_dbus_paths_sync`, then one
        /// `secret_service_get_secrets_for_dbus_paths_sync` for the unlocked ones.
        /// Never unlocks anything.
        /// - Returns: The unlocked items' D-Bus paths and secrets, and how many matching items are locked.
        /// - Throws: `.io` when the answer lacks the secret of an unlocked item: libsecret
        ///   drops a secret its session cannot decrypt (KWallet 5.103's session set-up
        ///   fails now and then), which ``LibSecret/withConnection(deadline:_:)`` retries
        ///   once on a fresh session rather than reading it as an absent item.
        func secrets(_ schema: Schema, _ attributes: [String: String]) throws -> (
            secrets: [(path: String, secret: SecretBytes)], locked: Int
        ) {
            let (paths, locked) = try self.paths(schema, attributes)
            guard !paths.isEmpty else { return ([], locked) }
            let found = try secrets(atPaths: paths)
            guard found.count == paths.count else {
                throw LibSecret.withoutSecret(
                    "\(paths.count - found.count) of \(paths.count)", "secret_service_get_secrets_for_dbus_paths_sync")
            }
            return (found, locked)
        }

        /// The D-Bus paths of the items matching `attributes`
        /// (`secret_service_search_for_dbus_paths_sync` alone: one call, no secret
        /// read, nothing unlocked).
        /// - Returns: The unlocked items' paths, and how many matching items are locked.
        func paths(_ schema: Schema, _ attributes: [String: String]) throws -> (unlocked: [String], locked: Int) {
            let table = AttributeTable(attributes)
            var unlocked: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
            var locked: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
            defer {
                lk_g_strfreev(unlocked)
                lk_g_strfreev(locked)
            }
            _ = try check("secret_service_search_for_dbus_paths_sync", cancellation) {
                lk_secret_service_search_for_dbus_paths_sync(
                    service.pointer, schema.pointer, table.pointer, cancellation.pointer, &unlocked, &locked, $0)
            }
            var found: [String] = []
            if let unlocked {
                var index = 0
                while let path = unlocked[index] {
                    found.append(String(cString: path))
                    index += 1
                }
            }
            return (found, locked.map { Int(lk_g_strv_length($0)) } ?? 0)
        }

        /// The secret of the unlocked item at `path` (`secret_service_get_secrets_for_dbus_paths_sync`);
        /// an item that is gone or locked is missing from the answer or makes the call fail.
        func secrets(atPath path: String) throws -> [(path: String, secret: SecretBytes)] {
            try secrets(atPaths: [path])
        }

        /// The secrets of the unlocked items at `paths`, in one
        /// `secret_service_get_secrets_for_dbus_paths_sync` call.
        private func secrets(atPaths paths: [String]) throws -> [(path: String, secret: SecretBytes)] {
            let strings = paths.map(\.utf8CString)
            return try strings.flatMap { $0 }.withUnsafeBufferPointer { joined in
                var offset = 0
                var list: [UnsafePointer<CChar>?] = strings.map { string in
                    defer { offset += string.count }
                    return joined.baseAddress! + offset
                }
                list.append(nil)
                return try list.withUnsafeMutableBufferPointer { try secrets(atPaths: $0.baseAddress!) }
            }
        }

        private func secrets(atPaths paths: UnsafeMutablePointer<UnsafePointer<CChar>?>) throws -> [(
            path: String, secret: SecretBytes
        )] {
            guard
                let values = try check(
                    "secret_service_get_secrets_for_dbus_paths_sync", cancellation,
                    {
                        lk_secret_service_get_secrets_for_dbus_paths_sync(
                            service.pointer, paths, cancellation.pointer, $0)
                    })
            else { return [] }
            defer { lk_g_hash_table_unref(values) }
            var secrets: [(path: String, secret: SecretBytes)] = []
            var iterator = LKGHashTableIter()
            lk_g_hash_table_iter_init(&iterator, values)
            var key: UnsafeMutableRawPointer?
            var value: UnsafeMutableRawPointer?
            while lk_g_hash_table_iter_next(&iterator, &key, &value) != 0 {
                guard let key, let value else { continue }
                var length = 0
                let bytes = lk_secret_value_get(OpaquePointer(value), &length)
                secrets.append(
                    (
                        String(cString: key.assumingMemoryBound(to: CChar.self)),
                        SecretBytes(count: length) { out in
                            if let bytes, length > 0 {
                                out.copyMemory(from: UnsafeRawBufferPointer(start: bytes, count: length))
                            }
                        }
                    ))
            }
            return secrets
        }

        /// Stores an item in the default collection. With `replace`, when exactly one unlocked
        /// item has these attributes, only its secret is set (`secret_item_set_secret_sync`,
        /// the spec's `Item.SetSecret`): KeePassXC 2.7 answers a `CreateItem` that would
        /// replace an item another client wrote with an "Access Request" dialog, even with
        /// `ConfirmAccessItem=false`, and `SetSecret` without one. Otherwise (no such item,
        /// several, or the item went meanwhile) the item is created with
        /// `secret_service_create_item_dbus_path_sync`, replacing one with the same
        /// attributes when `replace` is set.
        ///
        /// The collection is checked first: when it is locked this throws `.locked`
        /// at once instead of letting libsecret ask the daemon for an unlock prompt,
        /// which waits for a person (or, with no display, fails).
        func store(_ schema: Schema, _ attributes: [String: String], label: String, secret: SecretBytes, replace: Bool)
            throws
        {
            guard let collection = try defaultCollection() else {
                throw LatchkeyError(
                    .unavailable, "the Secret Service has no default collection",
                    cFunction: "secret_service_read_alias_dbus_path_sync")
            }
            guard !collection.locked else {
                throw LatchkeyError(
                    .locked, "the Secret Service's default collection is locked",
                    cFunction: "org.freedesktop.DBus.Properties.Get")
            }
            let properties = PropertyTable(
                label: label, attributes: attributes.merging(["xdg:schema": schema.name]) { $1 })
            let value = Value(secret)
            if replace {
                let existing = try search(schema, attributes, loadSecrets: false)
                if existing.count == 1, let item = existing.first, !item.isLocked {
                    do {
                        _ = try check("secret_item_set_secret_sync", cancellation) {
                            lk_secret_item_set_secret_sync(item.handle.pointer, value.pointer, cancellation.pointer, $0)
                        }
                        return
                    } catch let error as LatchkeyError where error.code == .notFound {
                        // Deleted since the search: created below.
                    }
                }
            }
            let flags = replace ? LK_SECRET_ITEM_CREATE_REPLACE : LK_SECRET_ITEM_CREATE_NONE
            let path = try check("secret_service_create_item_dbus_path_sync", cancellation) {
                lk_secret_service_create_item_dbus_path_sync(
                    service.pointer, collection.path, properties.pointer, value.pointer, flags, cancellation.pointer, $0
                )
            }
            // A prompt the provider dismissed (KeePassXC's access request denied) gives no path, or "/", and no error.
            let stored = path.map { String(cString: $0) != "/" } ?? false
            lk_g_free(path)
            guard stored else {
                throw LatchkeyError(
                    .locked, "the Secret Service did not store the item: its prompt was dismissed",
                    cFunction: "secret_service_create_item_dbus_path_sync")
            }
        }

        /// Whether the default collection is locked; false when there is none.
        ///
        /// Searches alone cannot tell "absent" from "locked": gnome-keyring, having
        /// loaded a keyring while locked, knows only hashed attributes and does not
        /// match `xdg:schema` against them, so a search with a schema finds nothing.
        func isDefaultCollectionLocked() throws -> Bool {
            try defaultCollection()?.locked ?? false
        }

        /// Whether the Secret Service has a default collection: the `default` alias
        /// names one (`secret_service_read_alias_dbus_path_sync`, one call).
        func hasDefaultCollection() throws -> Bool {
            try defaultCollectionPath() != nil
        }

        /// Creates the default collection through the provider's own prompt, as the Secret
        /// Service API runs one: the service's `CreateCollection` (libsecret's own label,
        /// "Default keyring", and the alias `default`), then, when it answers with a prompt,
        /// the prompt's `Prompt` and its `Completed` signal, waited for until the cancellation
        /// (as ``unlockCollection(at:)`` does, through `g_dbus_connection_call_sync` and
        /// `g_dbus_connection_signal_subscribe`). gnome-keyring asks for the new keyring's
        /// password, KWallet for a new wallet's.
        ///
        /// At the deadline the prompt is left to the person, never dismissed. libsecret's
        /// `secret_service_create_collection_dbus_path_sync` sends the prompt's `Dismiss` when it
        /// is cancelled, and gnome-keyring 42.1 then closes the "new keyring password" dialog
        /// (logging `gkd_secret_prompt_dismiss: assertion '!self->pv->completed' failed`), so
        /// nobody could answer it any more. Left open, answering it later creates the keyring
        /// for the next command.
        /// - Throws: `.locked` when the prompt was dismissed or could not be shown;
        ///   `.timedOut` (C function ``unansweredPromptFunction``) when nobody answered it before the deadline.
        func createDefaultCollection() throws {
            let connection = lk_g_dbus_proxy_get_connection(service.pointer) // a SecretService is a GDBusProxy
            let type = lk_g_variant_type_new("a{sv}")
            let builder = lk_g_variant_builder_new(type)
            lk_g_variant_type_free(type)
            lk_g_variant_builder_add_value(
                builder,
                lk_g_variant_new_dict_entry(
                    lk_g_variant_new_string("org.freedesktop.Secret.Collection.Label"),
                    lk_g_variant_new_variant(lk_g_variant_new_string("Default keyring"))))
            var arguments: [OpaquePointer?] = [lk_g_variant_builder_end(builder), lk_g_variant_new_string("default")]
            lk_g_variant_builder_unref(builder)
            let reply: OpaquePointer
            do {
                reply = try call(
                    connection, "/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "CreateCollection",
                    lk_g_variant_new_tuple(&arguments, 2))
            } catch let error as LatchkeyError where error.code != .timedOut {
                // A provider that cannot create one (or show its prompt) answers with an error.
                throw LatchkeyError(.locked, Self.notCreated.message + ": " + error.message, cFunction: error.cFunction)
            }
            defer { lk_g_variant_unref(reply) }
            guard lk_g_variant_n_children(reply) == 2, let collection = lk_g_variant_get_child_value(reply, 0),
                let promptPath = lk_g_variant_get_child_value(reply, 1)
            else {
                throw LatchkeyError(
                    .io, "unexpected reply to the Secret Service's CreateCollection",
                    cFunction: "g_variant_get_child_value")
            }
            let created = String(cString: lk_g_variant_get_string(collection, nil)) != "/"
            let prompt = String(cString: lk_g_variant_get_string(promptPath, nil))
            lk_g_variant_unref(collection)
            lk_g_variant_unref(promptPath)
            if !created {
                guard prompt != "/" else { throw Self.notCreated }
                guard try answer(prompt, connection) else { throw Self.notCreated }
            }
            // Only the alias itself says that the new collection is the default one.
            guard try hasDefaultCollection() else { throw Self.notCreated }
        }

        /// The error of a prompt to create the default collection that was dismissed (or that
        /// the provider could not show): the provider's answer, not a failing C call.
        private static let notCreated = LatchkeyError(
            .locked,
            "the Secret Service has no default collection, and the provider's prompt to create one was dismissed (or the provider could not show one)"
        )

        /// What an unlock prompt would have to do: `.missing` when there is no default
        /// collection, the D-Bus path of the default collection when it is locked, nil
        /// when it is there and unlocked. Asked under the call deadline, before a prompt's
        /// longer one, so a hung service fails here as every other call does.
        func defaultCollectionNeedingPrompt() throws -> CollectionPrompt? {
            guard let collection = try defaultCollection() else { return .missing }
            return collection.locked ? .locked(path: collection.path) : nil
        }

        /// What the provider's prompt is asked for (``defaultCollectionNeedingPrompt()``).
        enum CollectionPrompt {
            /// Creating the default collection: there is none.
            case missing
            /// Unlocking the default collection, at this D-Bus path.
            case locked(path: String)
        }

        /// The C function named in the error of a prompt (to unlock or to create the default
        /// collection) nobody answered before the deadline.
        static let unansweredPromptFunction = "g_main_context_iteration"

        /// Unlocks the collection at `path` through the provider's own prompt, as the Secret
        /// Service API runs one: the service's `Unlock`, then the prompt's `Prompt`, then its
        /// `Completed` signal (each through `g_dbus_connection_call_sync` and
        /// `g_dbus_connection_signal_subscribe`), waited for until the cancellation.
        ///
        /// At the deadline the prompt is left to the person, never dismissed. libsecret's
        /// `secret_service_unlock_dbus_paths_sync` sends the prompt's `Dismiss` when it is
        /// cancelled, and gnome-keyring 42.1 aborts on a `Dismiss` of an unlock prompt whose
        /// dialog is showing (its `mark_as_complete` starts the next queued unlock, itself, while
        /// the dialog's own request is still current: `perform_next_unlock: assertion failed:
        /// (!self->current)`). gnome-keyring's own clients (Seahorse, secret-tool) never dismiss
        /// a prompt a person may still answer: its dialog stays until answered or cancelled,
        /// and answering it unlocks the keyring for the next command.
        /// - Parameter path: The collection's D-Bus path (``defaultCollectionNeedingPrompt()``).
        /// - Throws: `.locked` when the prompt was dismissed (or the provider offers none);
        ///   `.timedOut` (C function ``unansweredPromptFunction``) when nobody answered it before the deadline.
        func unlockCollection(at path: String) throws {
            let connection = lk_g_dbus_proxy_get_connection(service.pointer) // a SecretService is a GDBusProxy
            let type = lk_g_variant_type_new("ao")
            let builder = lk_g_variant_builder_new(type)
            lk_g_variant_type_free(type)
            lk_g_variant_builder_add_value(builder, lk_g_variant_new_object_path(path))
            var paths: [OpaquePointer?] = [lk_g_variant_builder_end(builder)]
            lk_g_variant_builder_unref(builder)
            let reply = try call(
                connection, "/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "Unlock",
                lk_g_variant_new_tuple(&paths, 1))
            defer { lk_g_variant_unref(reply) }
            guard lk_g_variant_n_children(reply) == 2, let unlocked = lk_g_variant_get_child_value(reply, 0),
                let promptPath = lk_g_variant_get_child_value(reply, 1)
            else {
                throw LatchkeyError(
                    .io, "unexpected reply to the Secret Service's Unlock", cFunction: "g_variant_get_child_value")
            }
            let prompt = String(cString: lk_g_variant_get_string(promptPath, nil))
            let done = lk_g_variant_n_children(unlocked) > 0
            lk_g_variant_unref(unlocked)
            lk_g_variant_unref(promptPath)
            if done { return }
            guard prompt != "/" else { throw Self.dismissed }
            guard try answer(prompt, connection) else { throw Self.dismissed }
        }

        /// The error of an unlock prompt that was dismissed (or that the provider could not show):
        /// the provider's answer, not a failing C call.
        private static let dismissed = LatchkeyError(
            .locked,
            "the Secret Service's default collection is locked and its unlock prompt was dismissed (or the provider could not show one)"
        )

        /// Shows the prompt at `prompt` (`Prompt` with no parent window) and waits, on a main
        /// context of its own, for its `Completed` signal or the cancellation, which a
        /// `g_cancellable_source_new` source on that context turns into a wake-up.
        /// - Returns: Whether the person answered (false: dismissed).
        /// - Throws: `.timedOut` when the cancellation came first; the prompt is left as it is.
        private func answer(_ prompt: String, _ connection: OpaquePointer?) throws -> Bool {
            let context = lk_g_main_context_new()
            lk_g_main_context_push_thread_default(context)
            let completion = PromptCompletion()
            let subscription = lk_g_dbus_connection_signal_subscribe(
                connection, nil, "org.freedesktop.Secret.Prompt", "Completed", prompt, nil,
                LK_G_DBUS_SIGNAL_FLAGS_NONE,
                { _, _, _, _, _, parameters, data in
                    guard let data, let parameters else { return }
                    Unmanaged<PromptCompletion>.fromOpaque(data).takeUnretainedValue().received(parameters)
                }, Unmanaged.passRetained(completion).toOpaque(),
                { data in
                    if let data { Unmanaged<PromptCompletion>.fromOpaque(data).release() }
                })
            let wake = lk_g_cancellable_source_new(cancellation.pointer)
            lk_g_source_set_callback(wake, { _ in 0 }, nil, nil) // G_SOURCE_REMOVE: waking was the point
            lk_g_source_attach(wake, context)
            defer {
                lk_g_dbus_connection_signal_unsubscribe(connection, subscription)
                lk_g_source_destroy(wake)
                lk_g_source_unref(wake)
                // What the subscription still has queued here, its release of `completion` included.
                while lk_g_main_context_iteration(context, 0) != 0 {}
                lk_g_main_context_pop_thread_default(context)
                lk_g_main_context_unref(context)
            }
            var window: [OpaquePointer?] = [lk_g_variant_new_string("")]
            lk_g_variant_unref(
                try call(
                    connection, prompt, "org.freedesktop.Secret.Prompt", "Prompt", lk_g_variant_new_tuple(&window, 1)))
            while completion.dismissed == nil && !cancellation.isCancelled {
                _ = lk_g_main_context_iteration(context, 1)
            }
            guard let dismissed = completion.dismissed else {
                throw LatchkeyError(
                    .timedOut, "nobody answered the Secret Service's prompt before the deadline",
                    cFunction: Self.unansweredPromptFunction)
            }
            return !dismissed
        }

        /// A method call to the Secret Service (`g_dbus_connection_call_sync`) under the cancellation.
        private func call(
            _ connection: OpaquePointer?, _ path: String, _ interface: String, _ method: String,
            _ parameters: OpaquePointer?
        ) throws -> OpaquePointer {
            let reply = try check("g_dbus_connection_call_sync", cancellation) {
                lk_g_dbus_connection_call_sync(
                    connection, "org.freedesktop.secrets", path, interface, method, parameters, nil,
                    LK_G_DBUS_CALL_FLAGS_NO_AUTO_START, -1, cancellation.pointer, $0)
            }
            guard let reply else {
                throw LatchkeyError(
                    .io, "no reply to the Secret Service's \(method)", cFunction: "g_dbus_connection_call_sync")
            }
            return reply
        }

        /// The D-Bus path of the collection behind the `default` alias
        /// (`secret_service_read_alias_dbus_path_sync`) and its `Locked` property,
        /// read fresh from the daemon (`org.freedesktop.DBus.Properties.Get` through
        /// `g_dbus_connection_call_sync`), without building a collection proxy;
        /// nil when there is no default collection.
        private func defaultCollection() throws -> (path: String, locked: Bool)? {
            guard let path = try defaultCollectionPath() else { return nil }
            var arguments: [OpaquePointer?] = [
                lk_g_variant_new_string("org.freedesktop.Secret.Collection"), lk_g_variant_new_string("Locked"),
            ]
            let connection = lk_g_dbus_proxy_get_connection(service.pointer) // a SecretService is a GDBusProxy
            let reply = try check("g_dbus_connection_call_sync", cancellation) {
                lk_g_dbus_connection_call_sync(
                    connection, "org.freedesktop.secrets", path, "org.freedesktop.DBus.Properties", "Get",
                    lk_g_variant_new_tuple(&arguments, 2), nil, LK_G_DBUS_CALL_FLAGS_NONE, -1, cancellation.pointer, $0)
            }
            guard let reply else {
                throw LatchkeyError(
                    .io, "no reply to reading the collection's Locked property",
                    cFunction: "g_dbus_connection_call_sync")
            }
            defer { lk_g_variant_unref(reply) }
            guard lk_g_variant_n_children(reply) == 1, let boxed = lk_g_variant_get_child_value(reply, 0) else {
                throw LatchkeyError(
                    .io, "unexpected reply to reading the collection's Locked property",
                    cFunction: "g_variant_get_child_value")
            }
            defer { lk_g_variant_unref(boxed) }
            guard let locked = lk_g_variant_get_variant(boxed) else {
                throw LatchkeyError(
                    .io, "unexpected reply to reading the collection's Locked property",
                    cFunction: "g_variant_get_variant")
            }
            defer { lk_g_variant_unref(locked) }
            return (path, lk_g_variant_get_boolean(locked) != 0)
        }

        /// The D-Bus path the `default` alias names (`secret_service_read_alias_dbus_path_sync`);
        /// nil when it names none (`/`).
        private func defaultCollectionPath() throws -> String? {
            let alias = try check("secret_service_read_alias_dbus_path_sync", cancellation) {
                lk_secret_service_read_alias_dbus_path_sync(service.pointer, "default", cancellation.pointer, $0)
            }
            guard let alias else { return nil }
            let path = String(cString: alias)
            lk_g_free(alias)
            return path == "/" ? nil : path
        }

        /// Deletes one item found by ``search(_:_:loadSecrets:)`` with `secret_item_delete_sync`.
        /// An item that no longer exists counts as deleted.
        /// - Parameter item: The item.
        func delete(_ item: Item) throws {
            do {
                _ = try check("secret_item_delete_sync", cancellation) {
                    lk_secret_item_delete_sync(item.handle.pointer, cancellation.pointer, $0)
                }
            } catch let error as LatchkeyError where error.code == .notFound {
                return
            }
        }
    }

    /// Reads an item's state into Swift values (`secret_item_get_locked`,
    /// `secret_item_get_attributes`, `secret_item_get_label`, `secret_item_get_secret`).
    fileprivate static func item(_ pointer: OpaquePointer) -> Item {
        var attributes: [String: String] = [:]
        if let table = lk_secret_item_get_attributes(pointer) {
            var iterator = LKGHashTableIter()
            lk_g_hash_table_iter_init(&iterator, table)
            var key: UnsafeMutableRawPointer?
            var value: UnsafeMutableRawPointer?
            while lk_g_hash_table_iter_next(&iterator, &key, &value) != 0 {
                if let key, let value {
                    attributes[String(cString: key.assumingMemoryBound(to: CChar.self))] = String(
                        cString: value.assumingMemoryBound(to: CChar.self))
                }
            }
            lk_g_hash_table_unref(table)
        }
        var label = ""
        if let text = lk_secret_item_get_label(pointer) {
            label = String(cString: text)
            lk_g_free(text)
        }
        var secret: SecretBytes?
        if let value = lk_secret_item_get_secret(pointer) {
            var length = 0
            let bytes = lk_secret_value_get(value, &length)
            secret = SecretBytes(count: length) { out in
                if let bytes, length > 0 { out.copyMemory(from: UnsafeRawBufferPointer(start: bytes, count: length)) }
            }
            lk_secret_value_unref(UnsafeMutableRawPointer(value))
        }
        return Item(
            attributes: attributes, label: label, isLocked: lk_secret_item_get_locked(pointer) != 0,
            secret: secret, handle: ItemHandle(pointer))
    }
}

extension LibSecret {
    /// What a prompt's `Completed` signal said, set by the signal's callback on the thread
    /// that waits for it (``Connection/unlockCollection(at:)``), which owns it.
    final class PromptCompletion {
        /// Whether the prompt was dismissed; nil until the signal came.
        private(set) var dismissed: Bool?

        /// Reads the signal's `(bv)` parameters: dismissed, and the prompt's result.
        func received(_ parameters: OpaquePointer) {
            guard lk_g_variant_n_children(parameters) == 2, let flag = lk_g_variant_get_child_value(parameters, 0)
            else {
                dismissed = true // not an answer this reads as a yes
                return
            }
            dismissed = lk_g_variant_get_boolean(flag) != 0
            lk_g_variant_unref(flag)
        }
    }
}
