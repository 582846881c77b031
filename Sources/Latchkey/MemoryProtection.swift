/// Process-wide protection of the secrets a process holds: whether a core dump,
/// a debugger or another process of the same user can reach them.
///
/// The library changes no process-wide state by itself. Every ``SecretBytes`` is
/// zeroed when released. The keys the library derives or reads (a vault's key, the
/// audit trail's key) and ``SecretBytes/random(count:)`` live in locked memory
/// (`sodium_malloc`: `mlock`, guard pages, left out of core dumps); the secrets an
/// app makes from its own bytes (``SecretBytes/init(_:)``, ``SecretBytes/init(utf8:)``)
/// and the values read from a store live on the ordinary heap, where the kernel may
/// swap them out: locked memory is limited (`RLIMIT_MEMLOCK`, often 8 MiB), and an
/// app may hold many secrets. The process stays
/// dumpable (core dumps, `gdb` and profilers attach as usual) until the app
/// chooses otherwise here, once, early in its life, as it would choose a logging
/// back end. The `latchkey` command line opts in with
/// ``forbidDumpsWhileHoldingSecrets()`` and its agent with ``forbidDumps()``.
public enum MemoryProtection {
    /// Keeps the process from being dumped while it holds any secret: from the
    /// first ``SecretBytes`` to the release of the last one, the process is not
    /// dumpable (`prctl(PR_SET_DUMPABLE, 0)`), so no core file can hold a secret
    /// and no other process of the user can attach to it or read its memory; when
    /// the last one is released the process is dumpable again, if it was before.
    ///
    /// Applies at once when secrets are already held. Calling it again does nothing.
    public static func forbidDumpsWhileHoldingSecrets() {
        POSIX.guardDumpsWhileHoldingSecrets()
    }

    /// Makes the process never dumpable again, whether or not it holds a secret:
    /// no core file (`setrlimit(RLIMIT_CORE, 0)`) and `prctl(PR_SET_DUMPABLE, 0)`.
    /// For a long-lived process that holds secrets most of the time, such as a
    /// credential agent.
    public static func forbidDumps() {
        POSIX.forbidDumps()
    }

    /// Whether the process may be dumped now (`prctl(PR_GET_DUMPABLE)` is not 0).
    public static var isDumpable: Bool { POSIX.isDumpable }
}
