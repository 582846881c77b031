internal import CSecret
import Dispatch
import Synchronization

// Every call into libsecret, GIO and GLib lives in this file and its two
// extensions: `LibSecret+Queries.swift` (the calls one connection makes) and
// `LibSecret+Values.swift` (the GLib values they take). Nothing outside them
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
        let handle: ItemHandle
    }

    /// Owns the `SecretItem` behind an ``Item``, for deleting it.
    final class ItemHandle: @unchecked Sendable {
        // Sendable: the pointer is used only by the holder of the gate, one call at a time.
        let pointer: UnsafeMutablePointer<SecretItem>
        init(_ pointer: UnsafeMutablePointer<SecretItem>) {
            self.pointer = pointer
            g_object_ref(pointer)
        }
        deinit { g_object_unref(pointer) }
    }

    /// A one-byte buffer for the C parameters that must not be null when a secret is empty.
    static let emptySecret: [CChar] = [0]

    /// A schema (`SecretSchema`) made with `secret_schema_newv`, whose attributes are all strings.
    ///
    /// Items stored with it carry the `xdg:schema` attribute, and searches with it
    /// match only items that carry it, so other programs' items never match.
    final class Schema: @unchecked Sendable {
        // Sendable: the schema is immutable after `init`; libsecret only reads it,
        // and its reference count is atomic.
        let pointer: UnsafeMutablePointer<SecretSchema>
        let name: String

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
            // The timer holds a reference of its own, dropped by its cancel handler,
            // which Dispatch runs only after a running event handler has returned:
            // a cancellation still emitting its signal when the call it stopped has
            // returned (and this owner is released) must not meet a freed object.
            g_object_ref(UnsafeMutableRawPointer(target))
            timer.setEventHandler { g_cancellable_cancel(target) }
            timer.setCancelHandler { g_object_unref(UnsafeMutableRawPointer(target)) }
            timer.resume()
        }

        var isCancelled: Bool { g_cancellable_is_cancelled(pointer) != 0 }

        deinit {
            timer.cancel()
            g_object_unref(pointer)
        }
    }

    // MARK: The process-wide connection

    /// The process's own `SecretService` proxy with an open session, made with
    /// `secret_service_open_sync` (not libsecret's shared default, so dropping it
    /// after a failure cannot disturb anyone else).
    final class Service: @unchecked Sendable {
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
    /// A bare lookup by one attribute with no schema (`secret_password_lookupv_sync`),
    /// for the benchmarks' comparison; a found secret is freed (`secret_password_free`) at once.
    static func bareLookup(attribute: String, value: String) throws -> Bool {
        let table = AttributeTable([attribute: value])
        let secret = try check("secret_password_lookupv_sync", nil) { secret_password_lookupv_sync(nil, table.pointer, nil, $0) }
        guard let secret else { return false }
        secret_password_free(secret)
        return true
    }
}
