import Latchkey
import LatchkeyAgent
import LatchkeySystem

// The `latchkey` command (and `git-credential-latchkey` and
// `docker-credential-latchkey`, the same binary under other names): parsing and
// printing only; every behaviour is the library's.
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Runs the command line and returns the exit status.
/// - Parameters:
///   - line: The arguments after the tool's name.
///   - invokedAs: The name the tool was invoked as (`git-credential-latchkey` speaks git's protocol).
///   - environment: The environment the command reads.
///   - execution: What the command runs against: its streams, its input, a passphrase its client
///     gave, the agent's unlock cache (``Execution/process()`` for this process's own).
///   - viaAgent: Whether a command that uses a store may run in the agent (false inside the agent).
///   - notUTF8: The indices of `line` whose bytes were not valid UTF-8 (refused as usage errors).
func runTool(
    _ line: [String], invokedAs: String, environment: Environment, execution: Execution, viaAgent: Bool,
    notUTF8: Set<Int> = []
) -> Int32 {
    let arguments = CommandLineJobs.words(line, invokedAs: invokedAs)
    // `--json` anywhere before `--` shapes the output, even when the line turns out wrong.
    var output = Output(json: arguments.prefix { $0 != "--" }.contains("--json"), execution: execution)
    var invocation = Invocation()
    let opened = OpenedVaults()
    defer { opened.finish() }
    do {
        let inserted = arguments.count - line.count
        try environment.requireUTF8()
        try invocation.parse(arguments, notUTF8: Set(notUTF8.map { $0 + inserted }))
        output = Output(json: invocation.globals.json, execution: execution)
        var context = Context(globals: invocation.globals, output: output, environment: environment)
        context.openedVaults = opened
        if invocation.globals.version {
            try ToolCommands.version(context, invocation.arguments)
        } else if invocation.globals.help {
            try ToolCommands.showHelp(for: invocation.words, output)
        } else {
            let command = try invocation.resolvedCommand()
            if execution.isInAgent && !command.viaAgent {
                // Inside the agent: only what a client would send (a command that uses a store), never `agent` itself.
                throw LatchkeyError(.usage, "the agent runs only commands that use a store, not '\(command.name)'")
            }
            try invocation.checkArgumentCount()
            context.readsStandardInput = command.readsStandardInput
            if viaAgent {
                switch try AgentOffer.offer(command, context, invocation.arguments, line: line, invokedAs: invokedAs) {
                case .ran(let status): return status
                case .inProcess(let read?):
                    // The input (and passphrase) this process already read for the agent.
                    output = Output(json: invocation.globals.json, execution: read)
                    context = context.writing(to: output)
                case .inProcess(nil): break
                }
            }
            try command.run(context, invocation.arguments)
        }
        for warning in context.openedVaults.vaults.withLock({ $0 }).flatMap(\.auditWarnings) {
            output.message(
                "latchkey: warning: an audit entry was not written: \(warning)")
        }
        try output.finish(error: nil)
        return 0
    } catch {
        execution.report.withLock { $0.failure = error as? LatchkeyError }
        let failure = (error as? LatchkeyError ?? LatchkeyError(.internal, "\(error)")).withCommandLineRemedy
        output.message("latchkey: \(failure)")
        if failure.code == .usage { output.message(Help.usage(invocation.words.first)) }
        do {
            try output.finish(error: failure)
        } catch {
            // The document with the result could not be written (a secret that is not
            // UTF-8, say): write one with the error alone.
            try? Output(json: true, execution: output.execution).finish(error: failure)
        }
        return failure.code.exitStatus
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
        viaAgent: true, notUTF8: Set(commandLine.indices.dropFirst().filter { !commandLine[$0].isUTF8 }.map { $0 - 1 }))
)
