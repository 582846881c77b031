import Latchkey
import LatchkeyAgent
import LatchkeyCommands
import LatchkeyProvider
import LatchkeySystem

/// `agent run`, `agent status`, `agent stop` and `lock`: the agent's own commands,
/// which always run in this process.
enum AgentCommands {
    /// `latchkey agent run` (also `latchkey agent`): serve in the foreground; with
    /// `--secret-service`, the Secret Service on the session bus too, and then no idle exit.
    /// The policy's `agent.serveSecretService`, or the provider being enabled (Latchkey's own
    /// activation file, `agent enable-secret-service`), makes any agent serve it (an agent a
    /// command started too), which then does not exit when idle while it owns the name.
    static func run(_ context: Context, _ arguments: CommandArguments) throws {
        let secretService = arguments.has(.secretService)
        // A policy that cannot be read is reported where the agent reads it for its idle timeout, in its log.
        let byPolicy =
            !secretService
            && ((try? context.policy().agent.servesSecretService) == true || SecretServiceActivation.isLatchkeysOwn())
        try AgentServer.serve(
            environment: context.environment.subset(["XDG_RUNTIME_DIR", "LISTEN_PID", "LISTEN_FDS", "JOURNAL_STREAM"]),
            idleTimeout: {
                secretService
                    ? .seconds(Int64(Int32.max)) : .milliseconds(Int64(try context.policy().agent.idleTimeout * 1000))
            },
            secretService: secretService || byPolicy)
    }

    /// `latchkey agent status`: whether an agent runs, since when, which namespaces it has served, and which it holds unlocked.
    static func status(_ context: Context, _ arguments: CommandArguments) throws {
        let runtime = try AgentRuntimeDirectory(runtimeDirectory: context.environment["XDG_RUNTIME_DIR"])
        let output = context.output
        output.set("socket", .string(runtime.socketPath))
        guard let lines = ask(.status, runtime, context.execution) else {
            output.set("running", .bool(false))
            try output.line("no agent runs on \(runtime.socketPath)")
            throw LatchkeyError(.notFound, "no agent runs")
        }
        let values = lines.map { $0.split(separator: "=", maxSplits: 1).map(String.init) }.filter { $0.count == 2 }
        func value(_ key: String) -> String { values.first { $0[0] == key }?[1] ?? "" }
        func fields(_ key: String, _ count: Int) -> [[String]] {
            values.filter { $0[0] == key }.map {
                $0[1].split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            }
            .filter { $0.count == count }
        }
        let served = fields("served", 4)
        let unlocked = fields("unlocked", 3)
        output.set("running", .bool(true))
        output.set("pid", .integer(Int64(value("pid")) ?? 0))
        output.set("since", .string(value("since")))
        output.set("latchkeyVersion", .string(value("version")))
        output.set(
            "namespaces",
            .array(
                served.map {
                    .object([
                        ("app", .string($0[0])), ("storeDirectory", .string($0[1])), ("backend", .string($0[2])),
                        ("lastUsed", .string($0[3])),
                    ])
                }))
        output.set(
            "unlocked",
            .array(
                unlocked.map {
                    .object([("app", .string($0[0])), ("storeDirectory", .string($0[1])), ("until", .string($0[2]))])
                }))
        try output.line(
            "an agent runs on \(runtime.socketPath): pid \(value("pid")), since \(value("since")), latchkey \(value("version"))"
        )
        for namespace in served {
            try output.line("serves: \(namespace[0]) in \(namespace[1]) (\(namespace[2])), last used \(namespace[3])")
        }
        if unlocked.isEmpty {
            try output.line("it holds no vault unlocked")
        }
        for entry in unlocked {
            try output.line("unlocked: \(entry[0]) in \(entry[1]) until \(entry[2])")
        }
    }

    /// `latchkey agent stop`: ends the agent (it forgets every cached key first).
    static func stop(_ context: Context, _ arguments: CommandArguments) throws {
        let runtime = try AgentRuntimeDirectory(runtimeDirectory: context.environment["XDG_RUNTIME_DIR"])
        guard let lines = ask(.stop, runtime, context.execution) else {
            context.output.set("stopped", .bool(false))
            try context.output.line("no agent runs on \(runtime.socketPath)")
            return
        }
        context.output.set("stopped", .bool(true))
        try context.output.line("stopped the agent (\(lines.first ?? ""))")
    }

    /// `latchkey lock`: the agent forgets every passphrase and key it holds; the
    /// next command on a passphrase vault asks again.
    static func lock(_ context: Context, _ arguments: CommandArguments) throws {
        let runtime = try? AgentRuntimeDirectory(runtimeDirectory: context.environment["XDG_RUNTIME_DIR"])
        guard let runtime, let lines = ask(.lock, runtime, context.execution) else {
            context.output.set("forgotten", .integer(0))
            try context.output.line("no agent runs, so no key is held")
            return
        }
        let count = lines.first.flatMap { Int64($0.dropFirst("forgotten=".count)) } ?? 0
        context.output.set("forgotten", .integer(count))
        try context.output.line("locked: the agent forgot the passphrases of \(count) vault\(count == 1 ? "" : "s")")
    }

    /// Sends `kind` to the running agent; its `key=value` lines, or nil when none answers.
    static func ask(
        _ kind: AgentMessage.Kind, _ runtime: AgentRuntimeDirectory, _ execution: Execution
    ) -> [String]? {
        let connection: POSIX.LocalSocket
        switch AgentClient.connectToOwnAgent(runtime) {
        case .connected(let connected): connection = connected
        case .none: return nil
        case .ignored(let reason):
            AgentOffer.warnIgnored(runtime, reason, execution)
            return nil
        }
        let again = { () -> POSIX.LocalSocket? in
            guard case .connected(let connection) = AgentClient.connectToOwnAgent(runtime) else { return nil }
            return connection
        }
        guard let answer = AgentClient.ask(kind, on: connection, again: again), answer.kind == .information
        else { return nil }
        return answer.texts(.line)
    }
}
