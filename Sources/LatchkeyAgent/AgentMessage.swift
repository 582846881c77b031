import Latchkey

/// One message of the agent protocol (docs/AGENT.md): a request from the
/// command line to `latchkey agent`, or the agent's answer.
///
/// On the wire: a 10-byte header (`LKAG`, the protocol version, the kind, the
/// body's length as a big-endian `UInt32`), then the body: fields, each a tag
/// byte, a big-endian `UInt32` length and that many bytes. The body is read
/// straight into zeroing memory, and every field is kept as ``SecretBytes``
/// (standard input and the passphrase are secrets; the rest is not, but one
/// type keeps the parser simple). A message that breaks any rule is refused
/// whole with `.invalidInput`, naming the rule.
package struct AgentMessage: Sendable {
    /// The protocol version this Latchkey speaks. A `declined` answer (its kind and its
    /// `text` field) reads the same in every version, and is sent in the version of the
    /// request it answers, so a client and an agent of different versions can tell.
    package static let protocolVersion: UInt8 = 5
    /// The first four bytes of every message.
    package static let magic: [UInt8] = Array("LKAG".utf8)
    /// The header's length: magic, version, kind, body length.
    package static let headerLength = 10
    /// The largest body accepted: room for 1 MiB of standard input, a 1 MiB
    /// passphrase and the command line.
    package static let maximumBodyLength = 3 << 20
    /// The most output bytes one `output` message carries; longer output goes in several.
    package static let outputChunkLength = 1 << 20
    /// The most fields a body may have.
    package static let maximumFieldCount = 4096

    /// What a message is.
    package enum Kind: UInt8, Sendable {
        /// Run a command (fields: tool version, typed command, session bus, namespace, standard input, passphrase, patience).
        case run = 1
        /// Describe the agent (no fields).
        case status = 2
        /// Stop the agent (no fields).
        case stop = 3
        /// Forget every cached key (no fields).
        case lock = 4
        /// The client's answer to `refresh`: what its refresh command did (exit status, flags
        /// bit 0: it timed out, standard output), or the error it met running it (error code, text).
        case refreshAnswer = 5
        /// A command's result: exit status, standard output, standard error.
        case result = 0x81
        /// The command needs the vault's passphrase: ask and send the request again with it.
        case needsPassphrase = 0x82
        /// The agent will not run this request (another version, another session
        /// bus): run it in-process. Field: the reason.
        case declined = 0x83
        /// The answer to `status`, `stop` or `lock`: `key=value` lines.
        case information = 0x84
        /// The `run` request reached the front of its namespace's queue while its client
        /// still waited, and runs now (no fields): from here on the client waits for the
        /// answer and never runs the command itself. A client that stops waiting first
        /// shuts its reading down, after which this message cannot be sent, so the agent
        /// never runs a request its client runs itself.
        case accepted = 0x85
        /// Part of a command's output, before its `result`: standard output or standard error bytes.
        case output = 0x86
        /// A refresh is due: run the refresh command with this refresh token on its standard
        /// input, and send its `refreshAnswer` (before the command's output and `result`).
        case refresh = 0x87
    }

    /// A field's meaning.
    package enum Tag: UInt8, Sendable {
        /// The sender's tool version (`run`).
        case toolVersion = 1
        /// Retired: a command-line argument; a `run` request carrying one is refused.
        case argument = 2
        /// Retired: the name the tool was invoked as; a `run` request carrying it is refused.
        case invokedAs = 3
        /// Retired: an environment variable; a `run` request carrying one is refused.
        case environment = 4
        /// Bit 0: the refresh command ran past its deadline (`refreshAnswer`). A `run` request
        /// carrying it (version 4's bit 0: standard input is a terminal) is refused.
        case flags = 5
        /// Standard input, read to its end (`run`).
        case standardInput = 6
        /// The vault's passphrase (`run`).
        case passphrase = 7
        /// The exit status, a big-endian `Int32` (`result`).
        case exitStatus = 8
        /// Bytes for standard output (`result`).
        case standardOutput = 9
        /// Bytes for standard error (`result`).
        case standardError = 10
        /// A reason or a prompt (`declined`, `needsPassphrase`).
        case text = 11
        /// One `key=value` line (`information`).
        case line = 12
        /// How long the client waits for `accepted`, in milliseconds, a big-endian
        /// `Int32` (`run`): the agent drops the request once that time has passed.
        case patience = 13
        /// The refresh token the refresh command reads (`refresh`).
        case refreshToken = 15
        /// What the refresh command wrote to standard output (`refreshAnswer`).
        case refreshOutput = 16
        /// An error's code, as ``LatchkeyError/Code`` names it (`refreshAnswer`).
        case errorCode = 17
        /// The namespace the command works in, resolved by the client (`run`): JSON of
        /// `storeDirectory`, `app`, `policy`, `backend` and `sessionUnlock`.
        case namespace = 18
        /// The command the client parsed from its command line (`run`): JSON of `command`
        /// (one typed value per command) and `json`; never a secret.
        case command = 19
        /// The client's `DBUS_SESSION_BUS_ADDRESS` (`run`): the agent serves only clients on its own bus.
        case sessionBus = 20
    }

    /// The message's kind.
    package var kind: Kind
    /// Its fields in order.
    package var fields: [(tag: Tag, value: SecretBytes)]

    /// A message of `kind` with `fields`.
    package init(_ kind: Kind, _ fields: [(tag: Tag, value: SecretBytes)] = []) {
        self.kind = kind
        self.fields = fields
    }

    /// The first field tagged `tag`.
    package func value(_ tag: Tag) -> SecretBytes? {
        fields.first { $0.tag == tag }?.value
    }

    /// Every field tagged `tag`, as UTF-8 text; nil when one is not UTF-8.
    package func texts(_ tag: Tag) -> [String]? {
        var texts: [String] = []
        for field in fields where field.tag == tag {
            guard let text = field.value.utf8String() else { return nil }
            texts.append(text)
        }
        return texts
    }

    /// The first field tagged `tag` as UTF-8 text.
    package func text(_ tag: Tag) -> String? {
        value(tag)?.utf8String()
    }

    /// Adds a text field.
    package mutating func append(_ tag: Tag, _ text: String) {
        fields.append((tag, SecretBytes(utf8: text)))
    }

    /// Adds a big-endian `Int32` field.
    package mutating func append(_ tag: Tag, _ number: Int32) {
        let value = UInt32(bitPattern: number)
        fields.append(
            (
                tag,
                SecretBytes([
                    UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff),
                ])
            ))
    }

    /// The first field tagged `tag` as a big-endian `Int32`; nil when missing or not 4 bytes.
    package func integer(_ tag: Tag) -> Int32? {
        guard let value = value(tag), value.count == 4 else { return nil }
        return value.withUnsafeBytes { bytes in
            Int32(
                bitPattern: UInt32(bytes[0]) << 24 | UInt32(bytes[1]) << 16 | UInt32(bytes[2]) << 8 | UInt32(bytes[3]))
        }
    }

    /// The message as it goes on the wire, in zeroing memory.
    /// - Parameter version: The protocol version its header says: this Latchkey's, or the
    ///   peer's for a `declined` answer or a request without fields (`status`, `stop`,
    ///   `lock`), which read the same in every version.
    /// - Throws: `.invalidInput` when it is larger than the protocol allows.
    package func encoded(version: UInt8 = protocolVersion) throws -> SecretBytes {
        let bodyLength = fields.reduce(0) { $0 + 5 + $1.value.count }
        guard bodyLength <= Self.maximumBodyLength, fields.count <= Self.maximumFieldCount else {
            throw LatchkeyError(
                .invalidInput,
                "the message for the agent is larger than the protocol allows (\(Self.maximumBodyLength) bytes, \(Self.maximumFieldCount) fields)"
            )
        }
        return SecretBytes(count: Self.headerLength + bodyLength) { out in
            var offset = 0
            func put(_ byte: UInt8) {
                out[offset] = byte
                offset += 1
            }
            func put32(_ value: Int) { for shift in [24, 16, 8, 0] { put(UInt8(truncatingIfNeeded: value >> shift)) } }
            Self.magic.forEach(put)
            put(version)
            put(kind.rawValue)
            put32(bodyLength)
            for field in fields {
                put(field.tag.rawValue)
                put32(field.value.count)
                field.value.withUnsafeBytes { bytes in
                    UnsafeMutableRawBufferPointer(rebasing: out[offset..<offset + bytes.count]).copyMemory(from: bytes)
                }
                offset += field.value.count
            }
        }
    }

    /// What a header says.
    package struct Header: Sendable, Equatable {
        /// The sender's protocol version.
        package var version: UInt8
        /// The message's kind, as sent.
        package var kind: UInt8
        /// The body's length.
        package var bodyLength: Int
    }

    /// Reads a header.
    /// - Throws: `.invalidInput` when `bytes` is not 10 bytes starting with
    ///   `LKAG`, or announces a body larger than ``maximumBodyLength``. Another
    ///   version is not an error here: the caller declines it.
    package static func header(_ bytes: some Collection<UInt8>) throws -> Header {
        let bytes = Array(bytes)
        guard bytes.count == headerLength, Array(bytes[0..<4]) == magic else {
            throw LatchkeyError(.invalidInput, "not an agent message (it must start with LKAG)")
        }
        let length = bytes[6..<10].reduce(0) { $0 << 8 | Int($1) }
        guard length <= maximumBodyLength else {
            throw LatchkeyError(
                .invalidInput,
                "an agent message of \(length) bytes is larger than the protocol allows (\(maximumBodyLength))")
        }
        return Header(version: bytes[4], kind: bytes[5], bodyLength: length)
    }

    /// Reads a body of a message whose header is `header`.
    /// - Throws: `.invalidInput` for an unknown kind or tag, a field running
    ///   past the end, or more than ``maximumFieldCount`` fields.
    package static func decode(_ header: Header, body: SecretBytes) throws -> AgentMessage {
        guard let kind = Kind(rawValue: header.kind) else {
            throw LatchkeyError(.invalidInput, "an agent message of unknown kind \(header.kind)")
        }
        guard body.count == header.bodyLength else {
            throw LatchkeyError(
                .invalidInput,
                "an agent message's body is \(body.count) bytes, not the \(header.bodyLength) its header says")
        }
        var fields: [(tag: Tag, value: SecretBytes)] = []
        try body.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                guard fields.count < maximumFieldCount else {
                    throw LatchkeyError(.invalidInput, "an agent message has more than \(maximumFieldCount) fields")
                }
                guard bytes.count - offset >= 5 else {
                    throw LatchkeyError(.invalidInput, "an agent message ends inside a field's header")
                }
                guard let tag = Tag(rawValue: bytes[offset]) else {
                    throw LatchkeyError(.invalidInput, "an agent message has a field of unknown tag \(bytes[offset])")
                }
                let length = bytes[offset + 1..<offset + 5].reduce(0) { $0 << 8 | Int($1) }
                offset += 5
                guard length <= bytes.count - offset else {
                    throw LatchkeyError(.invalidInput, "an agent message's field runs past its end")
                }
                fields.append((tag, SecretBytes(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length]))))
                offset += length
            }
        }
        return AgentMessage(kind, fields)
    }

    /// Parses a whole message (header and body), as the fuzz target does.
    /// - Throws: `.invalidInput` as ``header(_:)`` and ``decode(_:body:)``, and
    ///   for another protocol version or trailing bytes.
    package static func parse(_ bytes: [UInt8]) throws -> AgentMessage {
        guard bytes.count >= headerLength else {
            throw LatchkeyError(.invalidInput, "an agent message ends inside its header")
        }
        let header = try header(bytes[..<headerLength])
        guard header.version == protocolVersion else {
            throw LatchkeyError(.invalidInput, "agent protocol version \(header.version) is not \(protocolVersion)")
        }
        guard bytes.count - headerLength == header.bodyLength else {
            throw LatchkeyError(
                .invalidInput,
                "an agent message's body is \(bytes.count - headerLength) bytes, not the \(header.bodyLength) its header says"
            )
        }
        return try decode(header, body: SecretBytes(bytes[headerLength...]))
    }
}
