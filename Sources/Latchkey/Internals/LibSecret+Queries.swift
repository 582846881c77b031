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
        func secrets(atPaths paths: [String]) throws -> [(path: String, secret: SecretBytes)] {
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
