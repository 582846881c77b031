import Latchkey

/// Who made a call: the client's user id and process id as the bus daemon saw them
/// (`GetConnectionCredentials`), and the executable of that process (`/proc/PID/exe`).
/// What the audit trail records of a caller; never a secret, an attribute value or a label.
struct Caller: Equatable {
    let uid: UInt32?
    let pid: UInt32?
    /// The path of the process's executable; nil when it cannot be read (the process
    /// left, or belongs to another user).
    let executable: String?

    /// The caller behind `credentials` (nil when the bus gave none).
    init(credentials: (uid: UInt32, pid: UInt32)?) {
        uid = credentials?.uid
        pid = credentials?.pid
        executable = credentials.flatMap { SecretServiceProviderFound.executable(ofProcess: $0.pid) }
    }

    /// The executable's file name, such as `secret-tool`; `unknown` when it cannot be read.
    var name: String {
        executable.flatMap { $0.split(separator: "/").last.map(String.init) } ?? "unknown"
    }

    /// The audit entry's detail for `action` (`read`, `write`, `delete`, `create`) on the object
    /// at `path`, such as `secret-tool read /org/freedesktop/secrets/collection/login/7 (uid 1000,
    /// pid 4242, exe /usr/bin/secret-tool)`.
    func detail(_ action: String, _ path: String) -> String {
        let uid = uid.map(String.init) ?? "unknown"
        let pid = pid.map(String.init) ?? "unknown"
        return "\(name) \(action) \(path) (uid \(uid), pid \(pid), exe \(executable ?? "unknown"))"
    }
}
