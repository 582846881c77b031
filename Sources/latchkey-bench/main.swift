// latchkey-bench: Latchkey's benchmarks and reliability harness (issue 9).
// Never installed; `make bench` and `make stress` build it in release mode and
// run it inside .ci/with-keyring (a private D-Bus session and gnome-keyring).
import Foundation

let usage = """
    Usage: latchkey-bench [--json] [--samples N] [--runs N] [--sizes 10,1000,10000] [--git-libsecret PATH] [--only whole-process|git-scale|agent-load|provider]
           latchkey-bench stress [crash] [concurrency] [corruption] [agent] [agent-slowed] [rotation] [kill-refresh] [migration] [provider] [--kills N] [--processes K] [--writes M] [--agent-seconds S] [--rotation-rounds N] [--kill-refresh-rounds N] [--migration-rounds N] [--provider-items N]

    Without a command it measures and prints one table (with --json, one JSON document,
    "version": 1); --only whole-process measures only whole processes (with and without the
    agent), --only git-scale only git-credential-latchkey get with 1 and 1,000 credentials
    stored, --only agent-load only the agent under load (a stopped Secret Service with 40
    calls queued beside three other namespaces, and 64 idle connections held), --only provider
    only the Secret Service provider beside gnome-keyring (secret-tool lookup and store, among
    10 and 10,000 items, against the floor of a bus where nobody owns the name; idle RSS and CPU).
    `stress` runs the reliability checks (all seven by default; agent kills the agent under
    four clients for --agent-seconds, 60 by default; agent-slowed stops it in bursts while
    clients give up and retry, for as long; rotation storms a token endpoint with 32 processes
    for --rotation-rounds rounds, 100 by default, then kills the refreshing process in twice as
    many; kill-refresh sends SIGINT, SIGTERM, SIGHUP and SIGKILL in turn to an in-process
    refresh at spread moments, --kill-refresh-rounds rounds, 40 by default; migration migrates
    --migration-rounds new namespaces, 30 by default, then deletes through another client and
    loses what the provider had not saved; provider, not in the default set, fills the Secret
    Service provider with --provider-items items, 100,000 by default, and checks that they are
    served, searched and read back after a SIGKILL); each
    prints a summary line `N passed, N failed` and the exit status is 1 when any failed.
    """

/// A wrong command line (exit status 64).
struct UsageError: Error {
    var description: String
}

struct Options {
    var json = false
    var samples = 31
    var runs = 61
    var sizes = [10, 1_000, 10_000]
    var gitLibsecret: String?
    /// One section to run alone (`git-scale`), or nil for all.
    var only: String?
    var stress: [String]?
    var kills = 500
    var agentSeconds = 60
    var processes = 4
    var writes = 250
    var rotationRounds = 100
    var killRefreshRounds = 40
    var migrationRounds = 30
    var providerItems = 100_000

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        func value(_ flag: String) throws -> String {
            guard let next = rest.popFirst() else { throw UsageError(description: "\(flag) needs a value") }
            return next
        }
        func number(_ flag: String) throws -> Int {
            guard let number = Int(try value(flag)), number > 0 else {
                throw UsageError(description: "\(flag) needs a positive number")
            }
            return number
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--json": json = true
            case "--samples": samples = try number(argument)
            case "--runs": runs = max(30, try number(argument))
            case "--sizes":
                sizes = try value(argument).split(separator: ",").map {
                    guard let size = Int($0), size > 0 else {
                        throw UsageError(description: "--sizes takes positive numbers")
                    }
                    return size
                }
            case "--git-libsecret": gitLibsecret = try value(argument)
            case "--only":
                only = try value(argument)
                guard ["whole-process", "git-scale", "agent-load", "provider"].contains(only) else {
                    throw UsageError(description: "--only takes whole-process, git-scale, agent-load or provider")
                }
            case "--kills": kills = try number(argument)
            case "--agent-seconds": agentSeconds = try number(argument)
            case "--processes": processes = try number(argument)
            case "--writes": writes = try number(argument)
            case "--rotation-rounds": rotationRounds = try number(argument)
            case "--kill-refresh-rounds": killRefreshRounds = try number(argument)
            case "--migration-rounds": migrationRounds = try number(argument)
            case "--provider-items": providerItems = try number(argument)
            case "stress" where stress == nil: stress = []
            case "crash" where stress != nil, "concurrency" where stress != nil, "corruption" where stress != nil,
                "agent" where stress != nil, "agent-slowed" where stress != nil, "rotation" where stress != nil,
                "kill-refresh" where stress != nil, "migration" where stress != nil,
                "provider" where stress != nil:
                stress?.append(argument)
            case "--help", "-h":
                print(usage)
                exit(0)
            default: throw UsageError(description: "unknown argument '\(argument)'")
            }
        }
    }
}

/// A private working directory beside the store Latchkey would use, removed at exit.
func makeWorkDirectory() throws -> String {
    let environment = ProcessInfo.processInfo.environment
    let base = environment["LATCHKEY_TEST_SANDBOX"] ?? environment["TMPDIR"] ?? "/tmp"
    return try Spawn.makeTemporaryDirectory(in: base)
}

func progress(_ text: String) {
    FileHandle.standardError.write(Data("latchkey-bench: \(text)\n".utf8))
}

/// The directory of this program, which holds the `latchkey` built with it.
func binDirectory() -> String {
    URL(
        fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
    ) // argv[0] is the fallback without /proc
    .deletingLastPathComponent().path
}

func runBenchmarks(_ options: Options, in directory: String) throws {
    var report = Report()
    report.notes.append("work directory \(directory) (same file system as the vaults measured)")
    let secretService = WholeProcessSection.secretServiceRunning()
    let bin = binDirectory()
    if options.only == nil {
        progress("file backend at \(options.sizes.map(\.formatted).joined(separator: ", ")) entries")
        try FileBackendSection(directory: directory, sizes: options.sizes, samples: options.samples).run(into: &report)
        progress("key derivation")
        try KeyDerivationSection(directory: directory, samples: 5).run(into: &report)
        progress("Secret Service backend (daemon \(secretService ? "running" : "not running"))")
        SecretServiceSection(samples: options.samples).run(secretServiceRunning: secretService, into: &report)
    }
    if options.only == nil || options.only == "whole-process" {
        progress("whole-process figures, \(options.runs) runs each")
        let gitHelper = options.gitLibsecret.flatMap(Spawn.which) ?? Spawn.which("git-credential-libsecret")
        try WholeProcessSection(
            directory: directory, runs: options.runs, gitLibsecretHelper: gitHelper, binDirectory: bin
        ).run(secretServiceRunning: secretService, into: &report)
    }
    if options.only == nil || options.only == "git-scale" {
        progress("git-credential-latchkey get with 1 and 1,000 credentials stored, \(options.runs) runs each")
        GitScaleSection(directory: directory, runs: options.runs, binDirectory: bin).run(
            secretServiceRunning: secretService, into: &report)
    }
    if options.only == nil || options.only == "agent-load" {
        progress("the agent under load: a stopped Secret Service with 40 calls queued, and 64 idle connections")
        let met = try AgentLoadSection(binDirectory: bin, directory: directory, runs: 20).run(
            secretServiceRunning: secretService)
        report.notes.append("agent under load: every target met: \(met)")
    }
    if options.only == nil || options.only == "provider" {
        progress("the Secret Service provider beside gnome-keyring, \(options.runs) runs each")
        do {
            try ProviderSection(binDirectory: bin, directory: directory, runs: options.runs).run(
                secretServiceRunning: secretService, into: &report)
        } catch {
            report.skip(ProviderSection.section, "all", "\(error)")
        }
    }
    print(options.json ? try report.json() : report.table())
}

func runStress(_ options: Options, in directory: String) throws -> Bool {
    let parts =
        options.stress?.isEmpty == false
        ? options.stress!
        : ["crash", "concurrency", "corruption", "agent", "agent-slowed", "rotation", "kill-refresh", "migration"]
    var allPassed = true
    for part in parts {
        let started = ContinuousClock.now
        let result: (passed: Int, failed: Int)
        switch part {
        case "crash": result = try CrashStress(directory: directory, kills: options.kills).run()
        case "concurrency":
            result = try ConcurrencyStress(directory: directory, processes: options.processes, writes: options.writes)
                .run()
        case "agent": result = try AgentStress(directory: directory, seconds: options.agentSeconds).run()
        case "agent-slowed":
            result = try AgentStress(directory: directory, seconds: options.agentSeconds, slowed: true).run()
        case "rotation":
            result = try RotationStress(
                directory: directory, processes: 32, rounds: options.rotationRounds,
                killRounds: 2 * options.rotationRounds
            ).run()
        case "kill-refresh":
            result = try KillRefreshStress(directory: directory, rounds: options.killRefreshRounds).run()
        case "migration": result = try MigrationStress(directory: directory, rounds: options.migrationRounds).run()
        case "provider":
            result = try ProviderSection.stress(
                binDirectory: binDirectory(), directory: directory, items: options.providerItems)
        default: result = try CorruptionStress(directory: directory).run()
        }
        progress("\(part) took \(Report.time((ContinuousClock.now - started).seconds))")
        print("\(result.passed) passed, \(result.failed) failed")
        allPassed = allPassed && result.failed == 0
    }
    return allPassed
}

do {
    let options = try Options(Array(CommandLine.arguments.dropFirst()))
    let directory = try makeWorkDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) } // best effort: the sandbox is removed anyway
    if options.stress != nil {
        let passed = try runStress(options, in: directory)
        try? FileManager.default.removeItem(atPath: directory) // exit() skips the defer; best effort as above
        exit(passed ? 0 : 1)
    }
    try runBenchmarks(options, in: directory)
} catch let failure as UsageError {
    FileHandle.standardError.write(Data("Error: \(failure.description)\n\(usage)\n".utf8))
    exit(64)
} catch {
    FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
    exit(1)
}
