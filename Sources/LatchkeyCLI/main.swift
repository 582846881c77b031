import Latchkey
import LatchkeyCommands
import LatchkeySystem

// The `latchkey` command (and `git-credential-latchkey` and
// `docker-credential-latchkey`, the same binary under other names): parsing and
// printing only; every behaviour is the library's.
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Runs the command line and returns the exit status: the one place a command line runs. A
/// command that uses a store is parsed into its ``StoreCommand`` and run from that value, in
/// the agent when one answers (``AgentOffer``), else in this process (``InProcess``).
/// - Parameters:
///   - line: The arguments after the tool's name.
///   - invokedAs: The name the tool was invoked as (`git-credential-latchkey` speaks git's protocol).
///   - environment: The environment the command reads.
///   - execution: This process's streams and input (``Execution/process()``).
///   - notUTF8: The indices of `line` whose bytes were not valid UTF-8 (refused as usage errors).
func runTool(
    _ line: [String], invokedAs: String, environment: Environment, execution: Execution, notUTF8: Set<Int> = []
) -> Int32 {
    var arguments = line[...]
    if invokedAs == "git-credential-latchkey" { arguments.insert("git-credential", at: arguments.startIndex) }
    if invokedAs == DockerCommands.invokedName { arguments.insert("docker-credential", at: arguments.startIndex) }
    // `--json` anywhere before `--` shapes the output, even when the line turns out wrong.
    var output = Output(json: arguments.prefix { $0 != "--" }.contains("--json"), streams: execution)
    var invocation = Invocation()
    do {
        let inserted = arguments.count - line.count
        try environment.requireUTF8()
        try invocation.parse(arguments, notUTF8: Set(notUTF8.map { $0 + inserted }))
        var context = Context(globals: invocation.globals, execution: execution, environment: environment)
        output = context.output
        if invocation.globals.version {
            try ToolCommands.version(context, invocation.arguments)
        } else if invocation.globals.help {
            try ToolCommands.showHelp(for: invocation.words, output)
        } else {
            let command = try invocation.resolvedCommand()
            try invocation.checkArgumentCount()
            context.readsStandardInput = command.readsStandardInput
            if let store = command.store {
                let typed = try store(context, invocation.arguments)
                if case .dockerCredential = typed, context.globals.app == nil, environment["LATCHKEY_APP"] == nil {
                    context.globals.app = DockerCommands.defaultApp
                }
                switch try AgentOffer.offer(typed, context) {
                case .ran(let status): return status
                // With the input (and passphrase) this process already read for the agent, if any.
                case .inProcess(let reads): return InProcess.run(typed, context, reads: reads)
                }
            }
            try command.run?(context, invocation.arguments)
        }
        try output.finish(error: nil)
        return 0
    } catch {
        return StoreCommands.fail(error, output, group: invocation.words.first)
    }
}

// Before any socket or file is opened: a closed standard stream must not be reused for one.
POSIX.openClosedStandardDescriptors()
// The tool holds tokens and passphrases: no core dump or same-user debugger may reach them.
MemoryProtection.forbidDumpsWhileHoldingSecrets()
let commandLine = POSIX.commandLineArguments()
let invokedAs = commandLine.first.map { String($0.text.split(separator: "/").last ?? "") } ?? "latchkey"
// A command stuck in a libsecret call that ignores its deadline ends as a timeout (75),
// like one the service did not answer, rather than waiting forever.
SecretServiceBackend.whenACallNeverReturns {
    Execution.process().message(
        "latchkey: the Secret Service did not answer within the deadline, and libsecret did not stop waiting for it (exit 75)"
    )
    POSIX.exitImmediately(LatchkeyError.Code.timedOut.exitStatus)
}
// Alive until the process exits: releasing it first would only build the type metadata its
// deinitialisation needs (about 190,000 instructions, an eighth of a command through the agent).
let execution = Execution.process()
POSIX.exitProcess(
    runTool(
        commandLine.dropFirst().map(\.text), invokedAs: invokedAs, environment: .process, execution: execution,
        notUTF8: Set(commandLine.indices.dropFirst().filter { !commandLine[$0].isUTF8 }.map { $0 - 1 }))
)
