import Latchkey
import LatchkeySystem

extension POSIX.LocalSocket {
    /// Sends `message` before `deadline` of `clock`.
    /// - Parameter version: The protocol version its header says (``AgentMessage/encoded(version:)``).
    /// - Throws: `.timedOut`, `.io`, or `.invalidInput` when it is too large.
    package func send(
        _ message: AgentMessage, version: UInt8 = AgentMessage.protocolVersion,
        before deadline: ContinuousClock.Instant,
        clock: POSIX.DeadlineClock = .continuous
    ) throws {
        try send(message.encoded(version: version), before: deadline, clock: clock)
    }

    /// Sends bytes already encoded (one message, or several in a row) before `deadline` of `clock`.
    /// - Throws: `.timedOut`, `.io`.
    package func send(
        _ encoded: SecretBytes, before deadline: ContinuousClock.Instant, clock: POSIX.DeadlineClock = .continuous
    ) throws {
        try encoded.withUnsafeBytes { try send($0, before: deadline, clock: clock) }
    }

    /// Receives one message before `deadline` of `clock`: the header, then the body straight into zeroing memory.
    /// - Parameter version: The protocol version expected: this Latchkey's, or the agent's
    ///   when a request without fields was sent again in its version.
    /// - Returns: The header and the message, or nil when the peer closed the connection before sending anything.
    ///   The message is nil for another protocol version (its body is read and dropped), except
    ///   a `declined` answer, which reads the same in every version.
    /// - Throws: `.timedOut` when it does not come whole in time; `.invalidInput`
    ///   for a message that breaks the protocol's rules; `.io`.
    package func receiveMessage(
        before deadline: ContinuousClock.Instant, version: UInt8 = AgentMessage.protocolVersion,
        clock: POSIX.DeadlineClock = .continuous
    ) throws -> (header: AgentMessage.Header, message: AgentMessage?)? {
        var headerBytes = [UInt8](repeating: 0, count: AgentMessage.headerLength)
        guard try headerBytes.withUnsafeMutableBytes({ try receive(into: $0, before: deadline, clock: clock) }) else {
            return nil
        }
        let header = try AgentMessage.header(headerBytes)
        var received = true
        let body = try SecretBytes(count: header.bodyLength) { buffer in
            if buffer.count > 0 { received = try receive(into: buffer, before: deadline, clock: clock) }
        }
        guard received else {
            throw LatchkeyError(.invalidInput, "\(path): the peer closed the connection in the middle of a message")
        }
        guard header.version == version || header.kind == AgentMessage.Kind.declined.rawValue else {
            return (header, nil)
        }
        return (header, try AgentMessage.decode(header, body: body))
    }
}
