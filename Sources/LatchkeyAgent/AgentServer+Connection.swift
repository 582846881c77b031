import Latchkey
import LatchkeyCommands
import LatchkeyProvider
import LatchkeySystem

// A connection: its request read whole under the request deadline, answered under the
// answer deadline, then closed. A `run` request goes on to its namespace's lane
// (AgentServer+Jobs.swift).
extension AgentServer {
    /// Reads one request and answers it; a client that breaks a rule or misses a deadline
    /// is dropped, saying why in the log.
    func handle(_ connection: POSIX.LocalSocket) {
        do {
            guard
                let received = try connection.receiveMessage(
                    before: clock.now() + limits.requestDeadline, clock: clock)
            else { return }
            let arrived = clock.now()
            guard let request = received.message else {
                var declined = AgentMessage(.declined)
                declined.append(
                    .text,
                    "this agent speaks protocol version \(AgentMessage.protocolVersion), not \(received.header.version)"
                )
                try connection.send(
                    declined, version: received.header.version, before: clock.now() + limits.answerDeadline,
                    clock: clock)
                return
            }
            guard connection.pending() != .bytes else {
                throw LatchkeyError(.invalidInput, "a request has bytes after the body its header announced")
            }
            switch request.kind {
            case .run:
                try serveRun(request, arrived: arrived, on: connection)
            case .status:
                try answer(information(status()), on: connection)
            case .lock:
                let count = vaults.forgetAll()
                SecretServiceProvider.lockRunning()
                log("locked: forgot the passphrases of \(count) namespace\(count == 1 ? "" : "s")")
                try answer(information(["forgotten=\(count)"]), on: connection)
            case .stop:
                try answer(information(["pid=\(POSIX.processID)"]), on: connection)
                stop(because: "asked to (latchkey agent stop)", removingSocket: true)
            default:
                throw LatchkeyError(.invalidInput, "a message of kind \(request.kind) is not a request")
            }
        } catch {
            // The error names the rule the client broke or the deadline it missed; never a secret.
            log("closed a connection: \(error)")
        }
    }

    /// Sends `message` before the answer deadline.
    /// - Throws: `.timedOut` when the client does not take it in time; `.io`.
    func answer(_ message: AgentMessage, on connection: POSIX.LocalSocket) throws {
        try connection.send(message, before: clock.now() + limits.answerDeadline, clock: clock)
    }

    /// The `output` messages of a command's output: what it wrote to one stream in a
    /// row goes in one message (of at most ``AgentMessage/outputChunkLength``), so
    /// `tok` and its newline are one message, and the client one `write`.
    static func outputMessages(_ output: [(stream: StandardStream, bytes: SecretBytes)]) -> [AgentMessage] {
        var runs: [(stream: StandardStream, parts: [SecretBytes])] = []
        for piece in output where !piece.bytes.isEmpty {
            if let last = runs.last, last.stream == piece.stream {
                runs[runs.count - 1].parts.append(piece.bytes)
            } else {
                runs.append((piece.stream, [piece.bytes]))
            }
        }
        return runs.flatMap { run in
            let tag: AgentMessage.Tag = run.stream == .output ? .standardOutput : .standardError
            let bytes = run.parts.count == 1 ? run.parts[0] : SecretBytes(concatenating: run.parts)
            return bytes.pieces(ofAtMost: AgentMessage.outputChunkLength).map { AgentMessage(.output, [(tag, $0)]) }
        }
    }

    /// Sends `messages` in order, as few `send` calls as fit in about one output chunk
    /// each, each before the answer deadline: a short answer leaves in one write, and wakes
    /// its client once.
    /// - Throws: `.timedOut` when the client does not take them in time; `.io`.
    func answer(_ messages: [AgentMessage], on connection: POSIX.LocalSocket) throws {
        var batch: [SecretBytes] = []
        var batchLength = 0
        func flush() throws {
            guard !batch.isEmpty else { return }
            let bytes = batch.count == 1 ? batch[0] : SecretBytes(concatenating: batch)
            batch.removeAll()
            batchLength = 0
            try connection.send(bytes, before: clock.now() + limits.answerDeadline, clock: clock)
        }
        for message in messages {
            let encoded = try message.encoded()
            if batchLength + encoded.count > AgentMessage.outputChunkLength { try flush() }
            batch.append(encoded)
            batchLength += encoded.count
        }
        try flush()
    }
}
