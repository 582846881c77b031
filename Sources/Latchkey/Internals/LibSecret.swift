internal import CLatchkeySecret
import Dispatch
import Synchronization

// Every call into libsecret, GIO and GLib lives in this file and its
// extensions: `LibSecret+Queries.swift` (the calls one connection makes),
// `LibSecret+Collections.swift` (the default collection and the provider's prompts
// that create or unlock it), `LibSecret+Values.swift` (the GLib values they take)
// and `GIO.swift` (the message bus). Nothing outside them sees a GLib type, a GError or an unsafe
// pointer that these libraries produced.
// libsecret is not linked: `load()` opens it (dlopen, through CLatchkeySecret's
// `latchkey_secret_load`) the first time the Secret Service is needed, and every
// call goes through CLatchkeySecret's `lk_` wrappers of the functions it resolved. Each
// entry point (`withConnection`, `busOffers`, `bareLookup`) loads it first.
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
        let handle: ItemHandle
    }

    // MARK: Loading

    /// Loads libsecret, GIO and GLib on first use (`latchkey_secret_load`: dlopen
    /// of `libsecret-1.so.0`, then dlsym of every function Latchkey calls), once
    /// per process and from any thread; later calls return the first result.
    /// - Throws: `LatchkeyError` `.unavailable` when libsecret is not installed
    ///   or lacks a function Latchkey needs; the message says which.
    static func load() throws {
        let (status, reason) = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 512) { buffer in
            buffer.initialize(repeating: 0)
            let status = latchkey_secret_load(buffer.baseAddress, buffer.count)
            return (status, status == 0 ? "" : String(cString: buffer.baseAddress!))
        }
        switch status {
        case 0:
            return
        case LK_SECRET_LOAD_NOT_FOUND:
            throw LatchkeyError(.unavailable, "libsecret is not installed: \(reason)", cFunction: "dlopen")
        default:
            throw LatchkeyError(.unavailable, "libsecret cannot be used: \(reason)", cFunction: "dlsym")
        }
    }

    /// Owns the `SecretItem` behind an ``Item``, for deleting it.
    final class ItemHandle: @unchecked Sendable {
        // Sendable: the pointer is used only by the holder of the gate, one call at a time.
        /// The `SecretItem`, referenced (`g_object_ref`) while this handle lives.
        let pointer: OpaquePointer
        /// Takes a reference to `pointer`.
        init(_ pointer: OpaquePointer) {
            self.pointer = pointer
            lk_g_object_ref(UnsafeMutableRawPointer(pointer))
        }
        deinit { lk_g_object_unref(UnsafeMutableRawPointer(pointer)) }
    }

    /// A one-byte buffer for the C parameters that must not be null when a secret is empty.
    static let emptySecret: [CChar] = [0]

    /// A schema (`SecretSchema`) made with `secret_schema_newv`, whose attributes are all strings.
    ///
    /// Items stored with it carry the `xdg:schema` attribute, and searches with it
    /// match only items that carry it, so other programs' items never match.
    ///
    /// Declaring one loads nothing: the `SecretSchema` is made when a connection
    /// first uses it, after libsecret was loaded.
    final class Schema: @unchecked Sendable {
        // Sendable: the schema is made once under `made`'s lock and immutable
        // after; libsecret only reads it, and its reference count is atomic.
        /// The schema name, such as `io.github.latchkey.Item`.
        let name: String
        /// The names of its attributes, all of string type.
        private let attributes: [String]
        /// The `SecretSchema` (its address), once made.
        private let made = Mutex<UInt?>(nil)

        /// - Parameters:
        ///   - name: The schema name, such as `io.github.latchkey.Item`.
        ///   - attributes: The names of its attributes, all of string type.
        init(name: String, attributes: [String]) {
            self.name = name
            self.attributes = attributes
        }

        /// The `SecretSchema`, made with `secret_schema_newv` on first use; only
        /// a ``Connection`` asks for it, so libsecret is loaded by then.
        var pointer: OpaquePointer {
            let address = made.withLock { made in
                if let made { return made }
                let types = lk_g_hash_table_new_full(lk_g_str_hash, lk_g_str_equal, lk_g_free, nil)
                for attribute in attributes {
                    // The value is GINT_TO_POINTER(SECRET_SCHEMA_ATTRIBUTE_STRING), which is 0.
                    lk_g_hash_table_insert(types, lk_g_strdup(attribute), nil)
                }
                let schema = lk_secret_schema_newv(name, LK_SECRET_SCHEMA_NONE, types)
                lk_g_hash_table_unref(types)
                let address = UInt(bitPattern: schema)
                made = address
                return address
            }
            return OpaquePointer(bitPattern: address)!
        }

        deinit {
            if let address = made.withLock({ $0 }) { lk_secret_schema_unref(OpaquePointer(bitPattern: address)) }
        }
    }

    // MARK: Errors

    /// Converts a GError into a `LatchkeyError` and frees it. The one place where
    /// GLib error domains and codes are interpreted.
    private static func convert(
        _ error: UnsafeMutablePointer<LKGError>, _ function: String, cancellation: Cancellation?
    ) -> LatchkeyError {
        let domain = error.pointee.domain
        let code = error.pointee.code
        let detail = error.pointee.message.map { String(cString: $0) } ?? "no details"
        lk_g_error_free(error)

        func isCode(_ values: Int32...) -> Bool { values.contains(code) }
        let io = domain == lk_g_io_error_quark()
        let dbus = domain == lk_g_dbus_error_quark()
        if cancellation?.isCancelled == true || (io && isCode(LK_G_IO_ERROR_CANCELLED)) {
            return LatchkeyError(
                .timedOut, "the Secret Service did not answer within the deadline", cFunction: function)
        }
        if (io && isCode(LK_G_IO_ERROR_TIMED_OUT))
            || (dbus && isCode(LK_G_DBUS_ERROR_NO_REPLY, LK_G_DBUS_ERROR_TIMEOUT, LK_G_DBUS_ERROR_TIMED_OUT))
        {
            return LatchkeyError(.timedOut, "the Secret Service did not answer: \(detail)", cFunction: function)
        }
        if domain == lk_secret_error_get_quark() {
            if isCode(LK_SECRET_ERROR_IS_LOCKED) {
                return LatchkeyError(
                    .locked, "the Secret Service collection is locked (\(detail))", cFunction: function)
            }
            if isCode(LK_SECRET_ERROR_NO_SUCH_OBJECT) {
                return LatchkeyError(
                    .notFound, "the Secret Service item no longer exists (\(detail))", cFunction: function)
            }
            return LatchkeyError(.io, "the Secret Service failed: \(detail)", cFunction: function)
        }
        // Everything else from D-Bus or GIO (no bus, no owner, connection closed,
        // a session or object the daemon no longer knows) means the service cannot be used now.
        return LatchkeyError(.unavailable, "the Secret Service cannot be reached: \(detail)", cFunction: function)
    }

    /// Runs `body` with a GError out-parameter and throws the converted error when one was set.
    static func check<Result>(
        _ function: String, _ cancellation: Cancellation?,
        _ body: (UnsafeMutablePointer<UnsafeMutablePointer<LKGError>?>) -> Result
    ) throws -> Result {
        var error: UnsafeMutablePointer<LKGError>?
        let result = body(&error)
        if let error { throw convert(error, function, cancellation: cancellation) }
        return result
    }

    // MARK: Deadlines

    /// How long after its deadline a libsecret call that has not returned counts as
    /// never returning (see ``neverReturningCall``).
    static let neverReturningGrace: Duration = .seconds(2)
    /// Called (on another thread) when a call has not returned ``neverReturningGrace``
    /// after its deadline cancelled it: libsecret then waits on something its
    /// cancellation does not stop (seen when KeePassXC crashed during a delete), and
    /// the calling thread may wait forever. nil leaves it waiting; the command line
    /// and the agent end the process.
    static let neverReturningCall = Mutex<(@Sendable () -> Void)?>(nil)

    /// A `GCancellable` that ``DeadlineWatch`` cancels at the deadline; if the call has
    /// still not returned `grace` later, the watch calls `neverReturning` (by default
    /// ``neverReturningCall``). Releasing it stops the watch's entry and unrefs the cancellable.
    final class Cancellation: @unchecked Sendable {
        // Sendable: immutable; the watch calls only g_cancellable_is_cancelled and
        // g_cancellable_cancel, which GLib documents as safe to call from any thread.
        /// The `GCancellable`.
        let pointer: OpaquePointer
        private let ticket: DeadlineWatch.Ticket

        /// - Throws: `.io` when the watch's thread cannot be started.
        init(
            after timeout: Duration, grace: Duration = LibSecret.neverReturningGrace,
            neverReturning: @escaping @Sendable () -> Void = { LibSecret.neverReturningCall.withLock { $0 }?() }
        ) throws {
            let target = Cancellable(pointer: lk_g_cancellable_new())
            // The watch holds a reference of its own, dropped when its entry ends (after a
            // running action has returned): a cancellation still emitting its signal when the
            // call it stopped has returned (and this owner is released) must not meet a freed object.
            lk_g_object_ref(UnsafeMutableRawPointer(target.pointer))
            do {
                ticket = try DeadlineWatch.shared.schedule(
                    after: timeout,
                    fire: {
                        guard lk_g_cancellable_is_cancelled(target.pointer) == 0 else {
                            neverReturning()
                            return nil
                        }
                        lk_g_cancellable_cancel(target.pointer)
                        return grace // still owned (the call has not returned): look again after the grace
                    }, end: { lk_g_object_unref(UnsafeMutableRawPointer(target.pointer)) })
            } catch {
                lk_g_object_unref(UnsafeMutableRawPointer(target.pointer))
                throw error
            }
            pointer = target.pointer
        }

        /// A `GCancellable` as the watch's actions hold it.
        private struct Cancellable: @unchecked Sendable {
            // Sendable: GCancellable's cancel and is-cancelled are thread-safe.
            let pointer: OpaquePointer
        }

        var isCancelled: Bool { lk_g_cancellable_is_cancelled(pointer) != 0 }

        deinit {
            DeadlineWatch.shared.cancel(ticket)
            lk_g_object_unref(UnsafeMutableRawPointer(pointer))
        }
    }

    // MARK: The process-wide connection

    /// The process's own `SecretService` proxy with an open session, made with
    /// `secret_service_open_sync` (not libsecret's shared default, so dropping it
    /// after a failure cannot disturb anyone else).
    final class Service: @unchecked Sendable {
        // Sendable: used only by the holder of the gate, one call at a time.
        /// The `SecretService`.
        let pointer: OpaquePointer
        /// Takes over the reference `secret_service_open_sync` returned.
        init(_ pointer: OpaquePointer) { self.pointer = pointer }
        deinit { lk_g_object_unref(UnsafeMutableRawPointer(pointer)) }
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

    /// The error for an answer that lacks the secrets of `count` unlocked items:
    /// libsecret drops a secret its session cannot decrypt. Retried once on a fresh
    /// session (``isWorthRetrying(_:)``); never read as an absent item.
    static func withoutSecret(_ count: String, _ function: String) -> LatchkeyError {
        LatchkeyError(
            .io,
            "the Secret Service returned \(count) unlocked item(s) without their secret (its encrypted session failed to pass them on)",
            cFunction: function)
    }

    /// Whether a failure may be the connection's or the session's rather than the
    /// store's, so a fresh connection and session may succeed: the service cannot
    /// be reached on the kept connection (a killed or restarted daemon), a libsecret
    /// session or protocol error, or a secret lost in the session (``withoutSecret(_:_:)``).
    /// A timeout is not: the deadline is spent.
    private static func isWorthRetrying(_ error: LatchkeyError, _ cancellation: Cancellation) -> Bool {
        guard !cancellation.isCancelled, error.cFunction != nil else { return false }
        return error.code == .unavailable || error.code == .io
    }

    /// Runs `body` with the Secret Service while holding the process-wide gate.
    ///
    /// The gate is waited for with the deadline, so queueing counts too; then one
    /// `GCancellable`, cancelled by ``DeadlineWatch``'s thread at the deadline,
    /// stops every call `body` makes, which then fails with `.timedOut`.
    ///
    /// When the connection or its session fails in a way a fresh one may not
    /// (``isWorthRetrying(_:_:)``: the kept connection is stale because the daemon it
    /// talked to was restarted or killed; opening the session failed; an unlocked
    /// item came back without its secret), a fresh connection and session are
    /// opened and `body` runs once more, within the same deadline; `body` must
    /// therefore be safe to repeat. A second such failure is reported as it is
    /// (`.unavailable` or `.io`), never as an absent item.
    /// - Parameters:
    ///   - deadline: How long the whole operation, waiting included, may take.
    ///   - body: The operation.
    /// - Returns: What `body` returns.
    /// - Throws: `LatchkeyError`: `.timedOut` when the deadline passes, `.unavailable`
    ///   (libsecret cannot be loaded, or the service cannot be reached), `.io`,
    ///   `.locked`, or what `body` throws. After an error that may mean a stale
    ///   connection, the connection is dropped so the next call reconnects.
    static func withConnection<Result>(deadline: Duration, _ body: (Connection) throws -> Result) throws -> Result {
        try load()
        let clock = ContinuousClock()
        let start = clock.now
        guard gate.wait(timeout: .fromNow(deadline)) == .success else {
            throw LatchkeyError(.timedOut, "other Secret Service calls did not finish within the deadline")
        }
        defer { gate.signal() }
        let cancellation = try Cancellation(after: deadline - (clock.now - start))
        func attempt() throws -> Result {
            let kept = try service.withLock({ $0 }) ?? open(cancellation)
            service.withLock { $0 = kept }
            return try body(Connection(service: kept, cancellation: cancellation))
        }
        do {
            do {
                return try attempt()
            } catch let error as LatchkeyError where isWorthRetrying(error, cancellation) {
                disconnect()
                return try attempt()
            }
        } catch let error as LatchkeyError where [.unavailable, .timedOut, .io, .internal].contains(error.code) {
            disconnect()
            throw error
        }
    }

    /// Opens a service proxy of the process's own with `secret_service_open_sync`.
    private static func open(_ cancellation: Cancellation) throws -> Service {
        let pointer = try check("secret_service_open_sync", cancellation) {
            lk_secret_service_open_sync(
                lk_secret_service_get_type(), nil, LK_SECRET_SERVICE_OPEN_SESSION, cancellation.pointer, $0)
        }
        guard let pointer else {
            throw LatchkeyError(
                .unavailable, "the Secret Service could not be opened", cFunction: "secret_service_open_sync")
        }
        return Service(pointer)
    }

    /// The Secret Service while the gate is held; valid only inside `withConnection`.
    /// A bare lookup by one attribute with no schema (`secret_password_lookupv_sync`),
    /// for the benchmarks' comparison; a found secret is freed (`secret_password_free`) at once.
    static func bareLookup(attribute: String, value: String) throws -> Bool {
        try load()
        let table = AttributeTable([attribute: value])
        let secret = try check("secret_password_lookupv_sync", nil) {
            lk_secret_password_lookupv_sync(nil, table.pointer, nil, $0)
        }
        guard let secret else { return false }
        lk_secret_password_free(secret)
        return true
    }
}
