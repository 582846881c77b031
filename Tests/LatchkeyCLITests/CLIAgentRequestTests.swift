import Foundation
import LatchkeyAgent
import LatchkeyCommands
import LatchkeySystem
import LatchkeyTestSupport
import Testing

@testable import Latchkey

/// Holds a namespace's vault lock (`flock`, as a writer does) from another process
/// until released (its marker file removed; a pipe would be inherited by other children).
final class HeldLock {
    private let child: Child
    private let marker: String

    init(_ path: String) throws {
        marker = path + ".held"
        _ = FileManager.default.createFile(atPath: marker, contents: nil)
        let script = """
            import fcntl, os, sys, time
            f = open(sys.argv[1], "a")
            fcntl.flock(f, fcntl.LOCK_EX)
            print("held", flush=True)
            while os.path.exists(sys.argv[2]): time.sleep(0.02)
            """
        child = try Child("/usr/bin/python3", ["-c", script, path, marker])
        let line = child.outputHandle.availableData
        if !String(decoding: line, as: UTF8.self).hasPrefix("held") { throw TestSupportError("the lock was not taken") }
    }

    /// Releases the lock.
    func release() throws {
        try FileManager.default.removeItem(atPath: marker)
        _ = try child.finish()
    }
}

/// Ends a client as a user giving up would (`SIGKILL`: a child of the test process may have `SIGTERM` blocked).
func giveUp(_ child: Child) {
    kill(child.process.processIdentifier, SIGKILL)
    child.process.waitUntilExit()
}

@Suite("latchkey agent: requests never run after their client stopped waiting", .sandboxed)
struct CLIAgentRequestTests {
    /// Starts `latchkey` with the sandbox's store options through its agent, writing `input`.
    static func start(_ sandbox: AgentSandbox, _ arguments: [String], input: String = "", app: String? = nil) throws
        -> Child
    {
        let child = try Child(
            try latchkeyPath(), sandbox.store.options + (app.map { ["--app", $0] } ?? []) + arguments,
            environment: sandbox.environment)
        try child.input.fileHandleForWriting.write(contentsOf: Data(input.utf8))
        try child.input.fileHandleForWriting.close()
        return child
    }

    @Test("a put of OLD queued behind a hung call, whose client gave up, never overwrites NEW put in-process meanwhile")
    func staleRequestBehindAnotherNamespace() throws {
        let sandbox = try AgentSandbox()
        let other = sandbox.store.app + "-other"
        #expect(try sandbox.run(["session", "put", "api"], input: "FIRST").status == 0)
        #expect(try sandbox.run(["--app", other, "session", "put", "api"], input: "x").status == 0)
        let hung = try HeldLock(sandbox.store.storeDirectory + "/\(other).d/credentials.lock")
        let blocked = try Self.start(sandbox, ["session", "put", "api"], input: "blocked", app: other)
        Thread.sleep(forTimeInterval: 0.5)
        let old = try Self.start(sandbox, ["session", "put", "api"], input: "OLD")
        Thread.sleep(forTimeInterval: 1)
        giveUp(old)
        #expect(try sandbox.run(["session", "put", "api"], input: "NEW", agent: false).status == 0)
        try hung.release()
        #expect(try blocked.finish().status == 0)
        Thread.sleep(forTimeInterval: 1)
        let final = try sandbox.run(["session", "get", "api"], agent: false)
        #expect(final.text == "NEW\n", "\(final.stderr)")
    }

    @Test("a request queued behind its own namespace's hung call is dropped when its client hangs up")
    func droppedWhenClientHangsUp() throws {
        let sandbox = try AgentSandbox()
        #expect(try sandbox.run(["session", "put", "api"], input: "FIRST").status == 0)
        let hung = try HeldLock(sandbox.store.namespaceFile("credentials.lock"))
        let blocked = try Self.start(sandbox, ["session", "put", "api"], input: "BLOCKED")
        Thread.sleep(forTimeInterval: 0.5)
        let old = try Self.start(sandbox, ["session", "put", "api"], input: "OLD")
        Thread.sleep(forTimeInterval: 1)
        giveUp(old)
        try hung.release()
        #expect(try blocked.finish().status == 0)
        Thread.sleep(forTimeInterval: 1)
        let final = try sandbox.run(["session", "get", "api"], agent: false)
        #expect(final.text == "BLOCKED\n", "\(final.stderr)")
        let shown = try sandbox.run(["audit", "show"], agent: false).text
        #expect(shown.components(separatedBy: "session.saved").count - 1 == 2, "\(shown)")
    }

    @Test("a request at the front of its queue runs as it is accepted, with no further word from its client")
    func runsWhenAccepted() throws {
        let sandbox = try AgentSandbox()
        #expect(try sandbox.run(["session", "put", "api"], input: "FIRST").status == 0)
        var request = try sandbox.runRequest(
            .sessionGet(name: "api", account: "", noNewline: false, refreshCommand: nil))
        request.append(.patience, 60_000)
        let connection = try POSIX.LocalSocket.connected(to: sandbox.socket)
        try connection.send(request, before: .now + .seconds(2))
        // The client says nothing after its request: the answer comes all the same.
        var kinds: [AgentMessage.Kind] = []
        var output: [UInt8] = []
        while let message = try connection.receiveMessage(before: .now + .seconds(10))?.message {
            kinds.append(message.kind)
            output += message.value(.standardOutput)?.copyBytes() ?? []
        }
        #expect(kinds == [.accepted, .output, .result], "\(kinds)")
        #expect(String(decoding: output, as: UTF8.self) == "FIRST\n")
    }

    @Test(
        "a client that stopped waiting (its reading shut down) is never told accepted, and its queued put never runs")
    func notRunOnceReadingIsShutDown() throws {
        let sandbox = try AgentSandbox()
        #expect(try sandbox.run(["session", "put", "api"], input: "FIRST").status == 0)
        // A put of the same namespace holds the front of its queue, waiting for the vault's lock.
        let hung = try HeldLock(sandbox.store.storeDirectory + "/\(sandbox.store.app).d/credentials.lock")
        let front = try Self.start(sandbox, ["session", "put", "api"], input: "FRONT")
        Thread.sleep(forTimeInterval: 0.5)
        var request = try sandbox.runRequest(.sessionPut(name: "api", account: "", expiresIn: nil, grant: false))
        request.fields.append((.standardInput, SecretBytes(utf8: "LATE")))
        request.append(.patience, 60_000)
        let connection = try POSIX.LocalSocket.connected(to: sandbox.socket)
        try connection.send(request, before: .now + .seconds(2))
        Thread.sleep(forTimeInterval: 0.5)
        // As the client does when its wait ends: from here on the agent cannot say `accepted`.
        connection.shutDownReading()
        try hung.release()
        #expect(try front.finish().status == 0)
        Thread.sleep(forTimeInterval: 1)
        #expect(try connection.receiveMessage(before: .now) == nil, "never accepted")
        #expect(try sandbox.run(["session", "get", "api"], agent: false).text == "FRONT\n")
        let log = try String(contentsOfFile: sandbox.log, encoding: .utf8)
        #expect(log.contains("dropped a request before running it: its client stopped waiting"), "\(log)")
    }

    @Test("a request whose client's patience has run out is never accepted nor run; bytes after the body are refused")
    func expiredPatience() throws {
        let sandbox = try AgentSandbox()
        #expect(try sandbox.run(["session", "put", "api"], input: "FIRST").status == 0)
        var request = try sandbox.runRequest(.sessionPut(name: "api", account: "", expiresIn: nil, grant: false))
        request.fields.append((.standardInput, SecretBytes(utf8: "LATE")))
        var late = request
        late.append(.patience, 0)
        let connection = try POSIX.LocalSocket.connected(to: sandbox.socket)
        try connection.send(late, before: .now + .seconds(2))
        #expect(try connection.receiveMessage(before: .now + .seconds(5)) == nil, "closed, never accepted")
        // The same request with one byte more than its header announces.
        let trailing = try POSIX.LocalSocket.connected(to: sandbox.socket)
        try (try request.encoded().copyBytes() + [0]).withUnsafeBytes {
            try trailing.send($0, before: .now + .seconds(2))
        }
        #expect(try trailing.receiveMessage(before: .now + .seconds(5)) == nil, "closed, never accepted")
        #expect(try sandbox.run(["session", "get", "api"], agent: false).text == "FIRST\n")
        let log = try String(contentsOfFile: sandbox.log, encoding: .utf8)
        #expect(log.contains("patience ran out") && log.contains("bytes after the body"), "\(log)")
    }
}
