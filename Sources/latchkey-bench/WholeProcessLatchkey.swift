import Foundation

/// Whole-process figures for Latchkey's own commands: `latchkey --version`
/// (start-up alone), `latchkey session get` on each backend, and
/// `git credential fill` through `git-credential-latchkey` on each backend.
/// The command lines are all in ``Invocation``.
struct WholeProcessLatchkey {
    let binDirectory: String
    let gitHelperDirectory: String

    static let sessionName = "access"
    /// The floor under every Swift binary's start-up (`latchkey-floor`, linked as `latchkey` is).
    static let floorName = "a Swift program that prints one line (latchkey-floor, the start-up floor)"
    static let gitName = "git credential fill, git-credential-latchkey"

    /// The `latchkey` command lines used here. Each backend has a namespace of its
    /// own: opening a namespace on the Secret Service takes in what the file holds.
    enum Invocation {
        /// Stores a session token read from stdin.
        static func store(_ latchkey: String, backend: String) -> [String] {
            [
                latchkey, "--app", "\(FileBackendSection.appID).\(backend)", "--backend", backend, "session", "put",
                sessionName,
            ]
        }

        /// Prints the session token.
        static func get(_ latchkey: String, backend: String) -> [String] {
            [
                latchkey, "--app", "\(FileBackendSection.appID).\(backend)", "--backend", backend, "session", "get",
                sessionName,
            ]
        }

        /// Stores a grant read from stdin as a token response, as session `grant`.
        static func storeGrant(_ latchkey: String, app: String, backend: String) -> [String] {
            [latchkey, "--app", app, "--backend", backend, "session", "put", "grant", "--grant"]
        }

        /// Prints the grant's access token, refreshing through a command that fails
        /// (`false`) should a refresh be due: none is, so it never runs.
        static func getGrant(_ latchkey: String, app: String, backend: String) -> [String] {
            [latchkey, "--app", app, "--backend", backend, "session", "get", "grant", "--refresh-command", "false"]
        }

        /// A token response whose access token is valid for an hour.
        static let grantResponse =
            #"{"access_token":"bench-access-token","token_type":"Bearer","expires_in":3600,"refresh_token":"bench-refresh"}"#
    }

    /// `session get --refresh-command` of a grant with no refresh due, held against
    /// `session get` of a plain session on the same backend (`floor`), in `section`.
    static func validGrantCommand(
        latchkey: String, backend: String, environment: [String: String] = [:], floor: String, section: String,
        unless reasons: [(Bool, String)], into commands: inout [TimedCommand], _ report: inout Report
    ) {
        TimedCommand.prepare(
            "latchkey session get --refresh-command, no refresh due, \(backend) backend"
                + (environment.isEmpty ? "" : ", through the agent"), in: section, unless: reasons,
            target: (floor, 1.1, "session get"), into: &commands, &report
        ) {
            let app = "\(FileBackendSection.appID).grant.\(backend)"
            let stored = try Spawn.capture(
                Invocation.storeGrant(latchkey, app: app, backend: backend), input: Invocation.grantResponse,
                environment: environment)
            let get = Invocation.getGrant(latchkey, app: app, backend: backend)
            let read = try Spawn.capture(get, environment: environment)
            guard stored.status == 0, read.status == 0, read.output == "bench-access-token\n" else {
                throw Spawn.Failure(
                    description:
                        "storing and reading a grant through the CLI did not round-trip (exit \(stored.status)/\(read.status)): \(stored.error)\(read.error)"
                )
            }
            return Spawn.Command(arguments: get, stdin: nil, environment: environment)
        }
    }

    /// The commands to time, set up and checked; for each that cannot be, why.
    func commands(secretServiceRunning: Bool, into report: inout Report) -> [TimedCommand] {
        let section = WholeProcessSection.section
        let latchkey = binDirectory + "/latchkey"
        let built = FileManager.default.isExecutableFile(atPath: latchkey)
        let notBuilt = (!built, "\(latchkey) is not built (make bench builds it with -c release)")
        var commands: [TimedCommand] = []
        let floor = binDirectory + "/latchkey-floor"
        TimedCommand.prepare(
            Self.floorName, in: section,
            unless: [
                (
                    !FileManager.default.isExecutableFile(atPath: floor),
                    "\(floor) is not built (make bench builds it with -c release)"
                )
            ], into: &commands, &report
        ) {
            Spawn.Command(arguments: [floor], stdin: nil)
        }
        TimedCommand.prepare(
            "latchkey --version (start-up alone)", in: section, unless: [notBuilt], into: &commands, &report
        ) {
            Spawn.Command(arguments: [latchkey, "--version"], stdin: nil)
        }
        let secretTool = WholeProcessSection.secretToolName
        for (backend, factor) in [("secret-service", 1.1), ("file", 0.3)] {
            TimedCommand.prepare(
                "latchkey session get, \(backend) backend", in: section,
                unless: [
                    notBuilt,
                    (backend == "secret-service" && !secretServiceRunning, "no Secret Service on the session bus"),
                ],
                target: (secretTool, factor, "secret-tool"), into: &commands, &report
            ) {
                let token = String(decoding: FileBackendSection.token().copyBytes(), as: UTF8.self)
                let stored = try Spawn.capture(Invocation.store(latchkey, backend: backend), input: token)
                let read = try Spawn.capture(Invocation.get(latchkey, backend: backend))
                guard stored.status == 0, read.status == 0, read.output.contains(token) else {
                    throw Spawn.Failure(
                        description:
                            "storing and reading a session through the CLI did not round-trip (exit \(stored.status)/\(read.status)): \(stored.error)\(read.error)"
                    )
                }
                return Spawn.Command(arguments: Invocation.get(latchkey, backend: backend), stdin: nil)
            }
        }
        for backend in ["secret-service", "file"] {
            Self.validGrantCommand(
                latchkey: latchkey, backend: backend, floor: "latchkey session get, \(backend) backend",
                section: section,
                unless: [
                    notBuilt,
                    (backend == "secret-service" && !secretServiceRunning, "no Secret Service on the session bus"),
                ], into: &commands, &report)
        }
        let helper = gitHelperDirectory + "/git-credential-latchkey"
        for (backend, factor) in [("secret-service", 1.2), ("file", 0.6)] {
            TimedCommand.prepare(
                "\(Self.gitName), \(backend) backend", in: section,
                unless: [
                    notBuilt,
                    (backend == "secret-service" && !secretServiceRunning, "no Secret Service on the session bus"),
                ],
                target: (WholeProcessSection.gitLibsecretName, factor, "git's libsecret helper"), into: &commands,
                &report
            ) {
                try FileManager.default.createDirectory(atPath: gitHelperDirectory, withIntermediateDirectories: true)
                if !FileManager.default.fileExists(atPath: helper) {
                    try FileManager.default.createSymbolicLink(atPath: helper, withDestinationPath: latchkey)
                }
                // A namespace per backend, as for session get.
                let git = try GitCredential(
                    directory: gitHelperDirectory + "/state-\(backend)", helper: helper,
                    extraEnvironment: [
                        "LATCHKEY_BACKEND": backend, "LATCHKEY_APP": "\(FileBackendSection.appID).git.\(backend)",
                    ])
                try git.approve()
                return git.fill
            }
        }
        return commands
    }
}
