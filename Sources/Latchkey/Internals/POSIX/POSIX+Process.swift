internal import CLatchkeyLinux
internal import Glibc
import Synchronization

// The process: threads, sleeping, and whether it may be dumped.

extension POSIX {
    /// How many secrets the process holds, whether the app asked for the process
    /// to be kept from dumps while it holds any (``guardDumpsWhileHoldingSecrets()``),
    /// and whether it was dumpable before the first of them (so the last one
    /// restores that and never more).
    private static let heldSecrets = Mutex<(count: Int, guarding: Bool, restoreDumpable: Bool)>((0, false, false))

    /// From now on, the process is not dumpable (`prctl(PR_SET_DUMPABLE, 0)`)
    /// while it holds a secret: no core dump can write one to disk, and other
    /// processes of the user cannot attach to it or read its memory. Applies at
    /// once when secrets are already held. Until an app calls this, the library
    /// leaves the dumpable flag alone.
    static func guardDumpsWhileHoldingSecrets() {
        heldSecrets.withLock { state in
            guard !state.guarding else { return }
            state.guarding = true
            if state.count > 0 { forbidDumpsForHeldSecrets(&state) }
        }
    }

    private static func forbidDumpsForHeldSecrets(_ state: inout (count: Int, guarding: Bool, restoreDumpable: Bool)) {
        state.restoreDumpable = latchkey_get_dumpable() == 1
        if state.restoreDumpable {
            // PR_SET_DUMPABLE fails only for a value other than 0 or 1.
            precondition(latchkey_set_dumpable(0) == 0, "prctl(PR_SET_DUMPABLE, 0) failed")
        }
    }

    /// Notes that a secret is now in memory. While guarding, the first one makes
    /// the process not dumpable.
    static func secretAcquired() {
        heldSecrets.withLock { state in
            if state.count == 0 && state.guarding { forbidDumpsForHeldSecrets(&state) }
            state.count += 1
        }
    }

    /// Notes that a secret was zeroed and released. When the last one goes, the
    /// process is made dumpable again (`prctl(PR_SET_DUMPABLE, 1)`) if it was
    /// before the first.
    static func secretReleased() {
        heldSecrets.withLock { state in
            precondition(state.count > 0, "more secrets released than acquired")
            state.count -= 1
            if state.count == 0 && state.restoreDumpable {
                precondition(latchkey_set_dumpable(1) == 0, "prctl(PR_SET_DUMPABLE, 1) failed")
                state.restoreDumpable = false
            }
        }
    }

    /// Whether the process may be dumped (`prctl(PR_GET_DUMPABLE)` is not 0).
    package static var isDumpable: Bool { latchkey_get_dumpable() != 0 }
}

extension POSIX {
    /// Makes this process never dumpable for the rest of its life: no core file
    /// (`setrlimit(RLIMIT_CORE, 0)`), and `prctl(PR_SET_DUMPABLE, 0)`, so other
    /// processes of the same user cannot attach to it or read its memory.
    package static func forbidDumps() {
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        _ = setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &none)
        heldSecrets.withLock { state in
            precondition(latchkey_set_dumpable(0) == 0, "prctl(PR_SET_DUMPABLE, 0) failed")
            state.restoreDumpable = false
        }
    }

    /// Waits for `duration` (`nanosleep`, resumed after a signal for what remains).
    package static func sleep(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        _ = valueOrErrno {
            let result = nanosleep(&request, &remaining)
            if result != 0 { request = remaining }
            return result
        }
    }

    /// Runs `body` on a new thread of its own (`pthread_create`, detached), for
    /// work that waits in system calls and so must not hold one of Dispatch's.
    /// - Throws: `.io` when no thread can be made.
    package static func startThread(_ body: @escaping @Sendable () -> Void) throws {
        final class Work {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let work = Unmanaged.passRetained(Work(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { work in
                Unmanaged<Work>.fromOpaque(work!).takeRetainedValue().body()
                return nil
            }, work)
        guard result == 0 else {
            Unmanaged<Work>.fromOpaque(work).release()
            throw LatchkeyError(
                .io, "cannot start a thread (\(String(cString: strerror(result))))", cFunction: "pthread_create")
        }
        pthread_detach(thread)
    }
}
