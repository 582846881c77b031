internal import CLatchkeySecret

// The default collection of one Secret Service connection: whether it is there and locked,
// and the provider's prompts that create or unlock it, run through the Secret Service API
// itself (see `LibSecret+Queries.swift` for the connection's other calls).

extension LibSecret.Connection {
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
        let completion = LibSecret.PromptCompletion()
        let subscription = lk_g_dbus_connection_signal_subscribe(
            connection, nil, "org.freedesktop.Secret.Prompt", "Completed", prompt, nil,
            LK_G_DBUS_SIGNAL_FLAGS_NONE,
            { _, _, _, _, _, parameters, data in
                guard let data, let parameters else { return }
                Unmanaged<LibSecret.PromptCompletion>.fromOpaque(data).takeUnretainedValue().received(parameters)
            }, Unmanaged.passRetained(completion).toOpaque(),
            { data in
                if let data { Unmanaged<LibSecret.PromptCompletion>.fromOpaque(data).release() }
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
        let reply = try LibSecret.check("g_dbus_connection_call_sync", cancellation) {
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
    func defaultCollection() throws -> (path: String, locked: Bool)? {
        guard let path = try defaultCollectionPath() else { return nil }
        var arguments: [OpaquePointer?] = [
            lk_g_variant_new_string("org.freedesktop.Secret.Collection"), lk_g_variant_new_string("Locked"),
        ]
        let connection = lk_g_dbus_proxy_get_connection(service.pointer) // a SecretService is a GDBusProxy
        let reply = try LibSecret.check("g_dbus_connection_call_sync", cancellation) {
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
        let alias = try LibSecret.check("secret_service_read_alias_dbus_path_sync", cancellation) {
            lk_secret_service_read_alias_dbus_path_sync(service.pointer, "default", cancellation.pointer, $0)
        }
        guard let alias else { return nil }
        let path = String(cString: alias)
        lk_g_free(alias)
        return path == "/" ? nil : path
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
