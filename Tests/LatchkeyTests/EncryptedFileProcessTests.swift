import Foundation
import Glibc
import LatchkeyTestSupport
import Testing

@testable import Latchkey

/// A running helper process whose stdout is read line by line.
private final class Helper {
    let process = Process()
    private let output = Pipe()
    private var buffer = Data()

    init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: try testHelperPath())
        process.arguments = arguments
        process.standardOutput = output
        try process.run()
    }

    /// Waits for the next complete line; nil at the end of the output.
    func nextLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                return line
            }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { return nil }
            buffer.append(chunk)
        }
    }

    /// Every remaining complete line, after the process ended.
    func remainingLines() -> [String] {
        var lines: [String] = []
        while let line = nextLine() { lines.append(line) }
        return lines
    }
}

@Suite("Encrypted file backend across processes", .serialized, .sandboxed)
struct EncryptedFileProcessTests {
    @Test("two processes x 200 writes on distinct keys: all 400 present")
    func twoWriters() throws {
        let directory = try freshDirectory() + "/store"
        let writers = try ["a", "b"].map { try Helper(["write-many", directory, testAppID.rawValue, $0, "200"]) }
        let acknowledged = writers.map { $0.remainingLines().count }
        for writer in writers { writer.process.waitUntilExit() }
        #expect(writers.map(\.process.terminationStatus) == [0, 0])
        #expect(acknowledged == [200, 200])
        let backend = EncryptedFileBackend(appID: testAppID, directory: directory, keySource: .keyFile)
        let names = Set(try backend.list(kind: .setting).map(\.name))
        #expect(names.count == 400)
        for prefix in ["a", "b"] {
            for i in 0..<200 {
                #expect(
                    try backend.read(ItemKey(kind: .setting, name: "\(prefix)-\(i)"))?.value
                        == SecretBytes(utf8: "\(prefix)-\(i)"))
            }
        }
        #expect(try POSIX.directoryEntries(directory).filter { $0.hasPrefix(PrivateFiles.temporaryPrefix) }.isEmpty)
    }

    @Test("a writer killed with SIGKILL 200 times: the vault always opens with every acknowledged write")
    func killedWriter() throws {
        let directory = try freshDirectory() + "/store"
        let slots = 8
        var expected: [Int: Int] = [:] // slot -> last acknowledged value
        var next = 0
        var outcomes = (inFlightOld: 0, inFlightNew: 0, acknowledged: 0, temporaryLeft: 0)
        let backend = EncryptedFileBackend(appID: testAppID, directory: directory, keySource: .keyFile)
        for _ in 0..<200 {
            let writer = try Helper(["write-loop", directory, testAppID.rawValue, "\(next)", "\(slots)"])
            // Let it start and acknowledge at least one write, then kill it at a random moment.
            var lines: [String] = []
            if let first = writer.nextLine() { lines.append(first) }
            usleep(UInt32.random(in: 0...15_000))
            kill(writer.process.processIdentifier, SIGKILL)
            lines += writer.remainingLines()
            writer.process.waitUntilExit()
            #expect(writer.process.terminationReason == .uncaughtSignal)
            let acknowledged = lines.compactMap(Int.init)
            #expect(acknowledged == Array(next..<(next + acknowledged.count)), "acknowledgements out of order")
            for value in acknowledged { expected[value % slots] = value }
            outcomes.acknowledged += acknowledged.count
            next += acknowledged.count
            if try POSIX.directoryEntries(directory).contains(where: { $0.hasPrefix(PrivateFiles.temporaryPrefix) }) {
                outcomes.temporaryLeft += 1 // killed inside a save, between creating and renaming its temporary file
            }
            // `next` was in flight: its slot holds the old value or the new one.
            let fresh = EncryptedFileBackend(appID: testAppID, directory: directory, keySource: .keyFile)
            for slot in 0..<slots {
                let stored = try fresh.read(ItemKey(kind: .setting, name: "slot-\(slot)")).flatMap {
                    $0.value.utf8String()
                }.flatMap { Int($0) }
                if slot == next % slots, stored == next {
                    outcomes.inFlightNew += 1
                    expected[slot] = next
                } else {
                    if slot == next % slots { outcomes.inFlightOld += 1 }
                    #expect(stored == expected[slot], "slot \(slot)")
                }
            }
            if expected[next % slots] == next { next += 1 } // the in-flight write landed; continue after it
        }
        #expect(try backend.list(kind: .setting).count == min(slots, next))
        #expect(try POSIX.directoryEntries(directory).filter { $0.hasPrefix(PrivateFiles.temporaryPrefix) }.count <= 1)
        print(
            "SIGKILL test: 200 kills, \(outcomes.acknowledged) acknowledged writes all present; in-flight write found old \(outcomes.inFlightOld) times, new \(outcomes.inFlightNew) times; \(outcomes.temporaryLeft) kills left a temporary file (killed mid-save)"
        )
    }
}
