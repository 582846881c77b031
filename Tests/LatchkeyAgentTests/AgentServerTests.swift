import Latchkey
import LatchkeyAgent
import LatchkeyCommands
import LatchkeySystem
import LatchkeyTestSupport
import Testing

/// The agent's server, unit-tested over socketpairs with a manual clock and a recording
/// executor (docs/AGENT.md): each admission and deadline rule, without a subprocess; and the
/// store commands themselves run by the server on a file store. The
/// subprocess suites (LatchkeyCLITests' CLIAgent*) test the same rules through the real agent.
@Suite("agent server over socketpairs, with a manual clock", .sandboxed)
struct AgentServerTests {
    @Test("a client that sends half a request is dropped when the 2 s request deadline passes, not before")
    func requestDeadline() throws {
        let test = ServerUnderTest()
        let client = try test.connect()
        var request = AgentMessage(.status)
        request.append(.text, "padding")
        let half = try request.encoded().withUnsafeBytes { Array($0.prefix(6)) }
        try half.withUnsafeBytes { try client.socket.send($0, before: .now + .seconds(5)) }
        #expect(eventually { test.server.load.connections == 1 })
        // Once it reads the time again and again, it waits for the rest of the request.
        let read = test.clock.timesRead
        #expect(eventually { test.clock.timesRead > read + 5 })
        test.clock.advance(by: .milliseconds(1999))
        #expect(stillHolds { client.socket.pending() == .nothing && test.server.load.connections == 1 })
        test.clock.advance(by: .milliseconds(1))
        #expect(client.isClosedByServer())
        #expect(eventually { test.server.load.connections == 0 })
        #expect(test.logged("did not send the whole message in time"))
    }

    @Test("an answer the client does not take is given up when the 5 s answer deadline passes, not before")
    func answerDeadline() throws {
        let test = ServerUnderTest()
        let client = try test.connect()
        try client.run("big", in: "a")
        // The client reads nothing: the 2 MiB answer fills the socket and the server waits.
        #expect(eventually { test.runner.finished == ["big"] })
        // Once it reads the time again and again, it waits for the client to take the answer.
        let read = test.clock.timesRead
        #expect(eventually { test.clock.timesRead > read + 5 })
        test.clock.advance(by: .milliseconds(4999))
        #expect(stillHolds { test.server.load.running == 1 && test.server.load.connections == 1 })
        test.clock.advance(by: .milliseconds(1))
        #expect(eventually { test.server.load.connections == 0 && test.server.load.running == 0 })
        #expect(test.logged("did not take the message in time"))
        let messages = client.rest()
        #expect(messages.first?.kind == .accepted)
        #expect(!messages.contains { $0.kind == .result }, "the answer was cut off")
    }

    @Test("beyond the total connection cap a connection is refused; a slot given back takes the next")
    func totalConnectionCap() throws {
        var limits = AgentServer.Limits()
        limits.maximumConnections = 3
        let test = ServerUnderTest(limits: limits)
        var held = try (0..<3).map { _ in try test.connect() }
        #expect(eventually { test.server.load.connections == 3 })
        let refused = try test.connect()
        #expect(refused.isClosedByServer())
        #expect(test.logged("refused a connection: 3 are open"))
        held.removeLast()
        #expect(eventually { test.server.load.connections == 2 })
        let next = try test.connect()
        #expect(eventually { test.server.load.connections == 3 })
        #expect(next.socket.pending() == .nothing)
        withExtendedLifetime(held) {}
    }

    @Test("beyond the per-process cap that process's connection is refused, while another process's is taken")
    func perProcessConnectionCap() throws {
        var limits = AgentServer.Limits()
        limits.maximumConnectionsPerProcess = 2
        let test = ServerUnderTest(limits: limits)
        let held = try (0..<2).map { _ in try test.connect(process: 4242) }
        #expect(eventually { test.server.load.connections == 2 })
        let refused = try test.connect(process: 4242)
        #expect(refused.isClosedByServer())
        #expect(test.logged("refused a connection: process 4242 already holds 2"))
        let other = try test.connect(process: 4243)
        #expect(eventually { test.server.load.connections == 3 })
        #expect(other.socket.pending() == .nothing)
        withExtendedLifetime(held) {}
    }

    @Test("a peer of another user is refused before it takes a slot")
    func otherUserRefused() throws {
        let test = ServerUnderTest()
        let stranger = try test.connect(user: POSIX.effectiveUserID &+ 1)
        #expect(stranger.isClosedByServer())
        #expect(test.logged("this agent serves only user \(POSIX.effectiveUserID)"))
        #expect(test.server.load.connections == 0)
    }

    @Test("the 33rd command queued for one namespace is declined and never runs; the 32 before it run")
    func queueBound() throws {
        let test = ServerUnderTest()
        test.runner.hold("a")
        let first = try test.connect()
        try first.run("hold", in: "a")
        #expect(eventually { test.runner.names == ["hold"] })
        var queued: [TestClient] = []
        for index in 1..<32 {
            let client = try test.connect()
            try client.run("q\(index)", in: "a")
            queued.append(client)
            #expect(eventually { test.server.commandsWaiting(in: TestClient.queue("a")) == index + 1 })
        }
        let extra = try test.connect()
        try extra.run("extra", in: "a")
        let answer = try extra.next()
        #expect(answer?.kind == .declined)
        #expect(answer?.reason == "32 commands already wait for this namespace")
        test.runner.release("a")
        for client in [first] + queued {
            let messages = client.rest()
            #expect(messages.first?.kind == .accepted && messages.last?.kind == .result)
        }
        #expect(test.runner.names == ["hold"] + (1..<32).map { "q\($0)" })
    }

    @Test("a request whose client's patience ran out while it was queued never runs and is never accepted")
    func staleRequest() throws {
        let test = ServerUnderTest()
        test.runner.hold("a")
        let first = try test.connect()
        try first.run("hold", in: "a")
        #expect(eventually { test.runner.names == ["hold"] })
        let late = try test.connect()
        try late.run("late", in: "a", patience: .seconds(1))
        #expect(eventually { test.server.commandsWaiting(in: TestClient.queue("a")) == 2 })
        test.clock.advance(by: .seconds(1))
        test.runner.release("a")
        #expect(first.rest().last?.kind == .result)
        #expect(late.rest().isEmpty, "never told accepted, nor anything else")
        #expect(test.runner.names == ["hold"])
        #expect(test.logged("its client's patience ran out while it waited"))
    }

    @Test("a request whose client is still patient runs once the one before it ends")
    func patientRequestRuns() throws {
        let test = ServerUnderTest()
        test.runner.hold("a")
        let first = try test.connect()
        try first.run("hold", in: "a")
        #expect(eventually { test.runner.names == ["hold"] })
        let patient = try test.connect()
        try patient.run("patient", in: "a", patience: .seconds(1))
        #expect(eventually { test.server.commandsWaiting(in: TestClient.queue("a")) == 2 })
        test.clock.advance(by: .milliseconds(999))
        test.runner.release("a")
        #expect(patient.rest().map(\.kind) == [.accepted, .output, .result])
        #expect(test.runner.names == ["hold", "patient"])
    }

    @Test("a request whose client hung up while it was queued never runs")
    func hungUpWhileQueued() throws {
        let test = ServerUnderTest()
        test.runner.hold("a")
        let first = try test.connect()
        try first.run("hold", in: "a")
        #expect(eventually { test.runner.names == ["hold"] })
        var gone: TestClient? = try test.connect()
        try gone?.run("gone", in: "a")
        #expect(eventually { test.server.commandsWaiting(in: TestClient.queue("a")) == 2 })
        gone = nil
        test.runner.release("a")
        #expect(first.rest().last?.kind == .result)
        #expect(eventually { test.server.load.connections == 0 })
        #expect(test.runner.names == ["hold"])
        #expect(test.logged("its client hung up while it waited"))
    }

    @Test("after a missed deadline the next queued command fails fast; after the window one runs normally")
    func silenceWindow() throws {
        let test = ServerUnderTest()
        test.runner.hold("a")
        let missing = try test.connect()
        try missing.run("miss", in: "a")
        #expect(eventually { test.runner.names == ["miss"] })
        let behind = try test.connect()
        try behind.run("behind", in: "a")
        #expect(eventually { test.server.commandsWaiting(in: TestClient.queue("a")) == 2 })
        test.runner.release("a")
        #expect(missing.rest().last?.kind == .result)
        let failedFast = behind.rest().last
        #expect(failedFast?.kind == .result && failedFast?.integer(.exitStatus) == RecordingExecutor.failedFastStatus)
        let within = try test.connect()
        test.clock.advance(by: RecordingExecutor.missedDeadline - .milliseconds(1))
        try within.run("within", in: "a")
        #expect(within.rest().last?.integer(.exitStatus) == RecordingExecutor.failedFastStatus)
        test.clock.advance(by: .milliseconds(1))
        let after = try test.connect()
        try after.run("after", in: "a")
        #expect(after.rest().last?.integer(.exitStatus) == 0)
        #expect(test.runner.ran.map(\.failingFast) == [false, true, true, false])
        #expect(test.runner.names == ["miss", "behind", "within", "after"])
    }

    @Test("a silence window holds only its own namespace")
    func silenceWindowIsPerNamespace() throws {
        let test = ServerUnderTest()
        let missing = try test.connect()
        try missing.run("miss", in: "a")
        #expect(missing.rest().last?.kind == .result)
        let other = try test.connect()
        try other.run("other", in: "b")
        #expect(other.rest().last?.integer(.exitStatus) == 0)
        #expect(test.runner.ran.map(\.failingFast) == [false, false])
    }

    @Test("a stopping agent answers a queued request declined instead of running it, then ends")
    func stoppingDeclines() throws {
        let test = ServerUnderTest()
        test.runner.hold("a")
        let first = try test.connect()
        try first.run("hold", in: "a")
        #expect(eventually { test.runner.names == ["hold"] })
        let queued = try test.connect()
        try queued.run("queued", in: "a")
        #expect(eventually { test.server.commandsWaiting(in: TestClient.queue("a")) == 2 })
        let stopper = try test.connect()
        try stopper.send(AgentMessage(.stop))
        #expect(try stopper.next()?.kind == .information)
        // It waits for the running command before it ends.
        #expect(stillHolds { test.ended.isEmpty })
        test.runner.release("a")
        #expect(first.rest().last?.kind == .result)
        let answer = try queued.next()
        #expect(answer?.kind == .declined && answer?.reason == "the agent is stopping")
        #expect(eventually { test.ended == [0] })
        #expect(test.runner.names == ["hold"])
    }

    @Test("with no connection for the idle time the agent stops, not a moment before; an open connection holds it")
    func idleExit() throws {
        let test = ServerUnderTest(idleExit: .seconds(30))
        try POSIX.startThread { test.server.watch() }
        var client: TestClient? = try test.connect()
        #expect(eventually { test.server.load.connections == 1 })
        test.clock.advance(by: .seconds(40))
        #expect(stillHolds { test.ended.isEmpty }, "a connection is open")
        client = nil
        #expect(eventually { test.server.load.connections == 0 })
        test.clock.advance(by: .seconds(29))
        #expect(stillHolds { test.ended.isEmpty })
        test.clock.advance(by: .seconds(1))
        #expect(eventually { test.ended == [0] })
        #expect(test.logged("stopping: no request came for 30.0 seconds"))
        _ = client
    }

    @Test("commands of different namespaces run concurrently while one namespace is stalled")
    func namespacesRunConcurrently() throws {
        let test = ServerUnderTest()
        test.runner.hold("a")
        let stalled = try test.connect()
        try stalled.run("hold", in: "a")
        #expect(eventually { test.runner.names == ["hold"] })
        let other = try test.connect()
        try other.run("other", in: "b")
        #expect(other.rest().map(\.kind) == [.accepted, .output, .result])
        #expect(test.runner.names == ["hold", "other"])
        test.runner.release("a")
        #expect(stalled.rest().last?.kind == .result)
    }

    @Test("a typed command crosses the wire and reaches the runner exactly as the client parsed it")
    func typedRequestRoundTrips() throws {
        let test = ServerUnderTest()
        let sent: [StoreRequest] = [
            StoreRequest(
                command: .sessionGet(name: "api", account: "alice", noNewline: true, refreshCommand: "refresh --now"),
                json: true),
            StoreRequest(command: .sessionPut(name: "api", account: "", expiresIn: 90, grant: false), json: false),
            StoreRequest(
                command: .status(
                    SettingOrigins(
                        app: .init(isFlag: true, name: "--app"), policy: nil,
                        backend: .init(isFlag: false, name: "LATCHKEY_BACKEND"), storeDirectory: nil)),
                json: false),
            StoreRequest(command: .dockerCredential(action: "get"), json: true),
        ]
        for request in sent {
            let client = try test.connect()
            try client.send(TestClient.runRequest(request.command, json: request.json, in: "a"))
            #expect(client.rest().map(\.kind).first == .accepted)
        }
        #expect(test.runner.requests == sent)
    }

    @Test("a run request carrying a command line, an invoked name or environment is refused and never runs")
    func argvRequestRefused() throws {
        let test = ServerUnderTest()
        for tag in [AgentMessage.Tag.argument, .invokedAs, .environment] {
            let client = try test.connect()
            var request = try TestClient.runRequest(.secretGet(name: "api", noNewline: false), in: "a")
            request.append(tag, tag == .environment ? "LATCHKEY_APP=other" : "session")
            try client.send(request)
            #expect(client.isClosedByServer())
            #expect(!client.rest().contains { $0.kind == .accepted || $0.kind == .result })
        }
        #expect(test.runner.requests.isEmpty)
        #expect(test.logged("the agent takes only a typed command"))
        // The same request without those fields runs.
        let client = try test.connect()
        try client.run("api", in: "a")
        #expect(client.rest().map(\.kind) == [.accepted, .output, .result])
        #expect(test.runner.names == ["api"])
    }

    @Test(
        "a run request carrying flags (version 4's terminal bit: the agent never prompts) is refused; one without runs")
    func flagsRefused() throws {
        let test = ServerUnderTest()
        for flags: UInt8 in [0, 1] {
            let client = try test.connect()
            var request = try TestClient.runRequest(.secretGet(name: "api", noNewline: false), in: "a")
            request.fields.append((.flags, SecretBytes([flags])))
            try client.send(request)
            #expect(client.isClosedByServer())
            #expect(!client.rest().contains { $0.kind == .accepted || $0.kind == .result })
        }
        #expect(test.runner.requests.isEmpty)
        #expect(test.logged("a run request carries flags"))
        let client = try test.connect()
        try client.run("api", in: "a")
        #expect(client.rest().map(\.kind) == [.accepted, .output, .result])
        #expect(test.runner.names == ["api"])
    }

    @Test(
        "the agent runs a typed command through the store commands on its namespace's vault: a secret put is read back, a missing one fails as in-process"
    )
    func storeCommandsRun() throws {
        let test = ServerUnderTest(storeCommands: true)
        let namespace = ResolvedNamespace(
            storeDirectory: try TestSandbox.required(for: "the agent's store").directory("store"),
            app: "com.example.app", policy: "built-in:default", backend: "file", sessionUnlock: "never")
        func run(_ command: StoreCommand, input: String? = nil) throws -> [AgentMessage] {
            var request = try TestClient.runRequest(command, namespace: namespace)
            if let input { request.fields.append((.standardInput, SecretBytes(utf8: input))) }
            let client = try test.connect()
            try client.send(request)
            return client.rest()
        }
        func text(_ answer: [AgentMessage], _ tag: AgentMessage.Tag) -> String {
            answer.compactMap { $0.value(tag)?.utf8String() }.joined()
        }
        let put = try run(.secretPut(name: "api", fromFile: nil), input: "s3cret\n")
        #expect(put.first?.kind == .accepted && put.last?.integer(.exitStatus) == 0, "\(text(put, .standardError))")
        #expect(text(put, .standardOutput).hasPrefix("saved secret api, "))
        let get = try run(.secretGet(name: "api", noNewline: false))
        #expect(get.last?.kind == .result && get.last?.integer(.exitStatus) == 0)
        #expect(text(get, .standardOutput) == "s3cret\n")
        let missing = try run(.secretGet(name: "other", noNewline: false))
        #expect(missing.last?.integer(.exitStatus) == 1)
        #expect(
            text(missing, .standardError)
                == "latchkey: no secret other (it was never saved, was deleted, or expired)\n")
    }
}
