// The `latchkey` command (and `git-credential-latchkey` and
// `docker-credential-latchkey`, the same binary under other names): parsing and
// printing only; every behaviour is the library's.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Latchkey

/// Runs the command line and returns the exit status.
func runTool(_ argv: [String]) -> Int32 {
    let invokedAs = argv.first.map { String($0.split(separator: "/").last ?? "") } ?? "latchkey"
    var arguments = argv.dropFirst()
    var globals = GlobalOptions()
    var output = Output(json: arguments.contains("--json"))
    var group: String?
    do {
        globals = try GlobalOptions.parse(&arguments)
        // `--json` may also follow the command; honour it even when the command turns out unknown.
        globals.json = globals.json || arguments.prefix { $0 != "--" }.contains("--json")
        output = Output(json: globals.json)
        if invokedAs == "git-credential-latchkey" { arguments.insert("git-credential", at: arguments.startIndex) }
        group = arguments.first
        if globals.version {
            try output.line("latchkey \(Help.version)")
            output.set("latchkey", .string(Help.version))
            try output.finish(error: nil)
            return 0
        }
        let wantsHelp = globals.help || arguments.prefix { $0 != "--" }.contains { $0 == "--help" || $0 == "-h" }
        if wantsHelp {
            if let group, !Command.all.contains(where: { $0.words[0] == group }) {
                throw LatchkeyError(.usage, "unknown command '\(group)'")
            }
            try CommandLineIO.write((group.map(Help.group) ?? Help.tool) + "\n", to: .output)
            return 0
        }
        let command = invokedAs == DockerCommands.invokedName ? DockerCommands.command : try Command.find(&arguments)
        let parsed = try CommandArguments.parse(arguments, options: command.options, flags: command.flags, globals: &globals)
        output = Output(json: globals.json)
        guard parsed.positionals.count == command.positionals else {
            let count = parsed.positionals.count
            throw LatchkeyError(.usage, count < command.positionals
                ? "\(command.words.joined(separator: " ")) needs \(command.arguments.split(separator: " ").prefix(command.positionals).joined(separator: " "))"
                : "unexpected argument '\(parsed.positionals[command.positionals])'")
        }
        var context = Context(globals: globals, output: output, environment: ProcessInfo.processInfo.environment)
        context.readsStandardInput = command.readsStandardInput
        try command.run(context, parsed)
        for warning in Context.openedVaults.withLock({ $0 }).flatMap(\.auditWarnings) {
            Output.message("latchkey: warning: an audit entry was not written (policy audit.onFailure \"warn\"): \(warning)")
        }
        try output.finish(error: nil)
        return 0
    } catch {
        let failure = error as? LatchkeyError ?? LatchkeyError(.internal, "\(error)")
        Output.message("latchkey: \(failure)")
        if failure.code == .usage { Output.message(Help.usage(group)) }
        do {
            try output.finish(error: failure)
        } catch {
            // The document with the result could not be written (a secret that is not
            // UTF-8, say): write one with the error alone.
            try? Output(json: true).finish(error: failure)
        }
        return failure.code.exitStatus
    }
}

CommandLineIO.exit(status: runTool(CommandLine.arguments))
