import Foundation
import Latchkey

/// A writer process (`latchkey-testhelper write-loop`) SIGKILLed at random
/// moments; after each kill a fresh backend opens the vault and finds every
/// acknowledged write, and the in-flight write either absent or whole.
struct CrashStress {
    let directory: String
    let kills: Int
    static let slots = 8

    /// Returns (passed, failed): one check per kill.
    func run() throws -> (passed: Int, failed: Int) {
        let helper = try ChildProcess.sibling("latchkey-testhelper")
        let store = directory + "/crash"
        let appID = try AppID(FileBackendSection.appID)
        var expected: [Int: Int] = [:] // slot -> last acknowledged value
        var next = 0
        var passed = 0
        var failed = 0
        var acknowledged = 0
        var landed = 0
        for round in 0..<kills {
            let writer = try ChildProcess(helper, ["write-loop", store, appID.rawValue, "\(next)", "\(Self.slots)"])
            var numbers: [Int] = []
            if let first = writer.line(), let number = Int(first) { numbers.append(number) }
            Spawn.pause(microseconds: UInt32.random(in: 0...20_000))
            Spawn.killNow(writer.processID)
            numbers += writer.remainingNumbers()
            let ended = try writer.waitForExit()
            var problems: [String] = []
            if ended.signal == nil {
                problems.append("the writer exited by itself (status \(ended.shellStatus))")
            }
            if numbers != Array(next..<(next + numbers.count)) { problems.append("acknowledgements out of order") }
            for value in numbers { expected[value % Self.slots] = value }
            acknowledged += numbers.count
            next += numbers.count
            do {
                let fresh = EncryptedFileBackend(appID: appID, directory: store, keySource: .keyFile)
                for slot in 0..<Self.slots {
                    let text = try fresh.read(ItemKey(kind: .setting, name: "slot-\(slot)"))?.value.utf8String()
                    let stored = text.flatMap { Int($0) }
                    if slot == next % Self.slots && stored == next {
                        expected[slot] = next // the in-flight write landed whole
                        landed += 1
                    } else if stored != expected[slot] {
                        problems.append(
                            "slot \(slot) holds \(text ?? "nothing"), expected \(expected[slot].map(String.init) ?? "nothing")"
                        )
                    }
                }
            } catch {
                problems.append("the vault did not open: \(error)")
            }
            if expected[next % Self.slots] == next { next += 1 }
            if problems.isEmpty {
                passed += 1
            } else {
                failed += 1
                FileHandle.standardError.write(
                    Data("crash round \(round + 1): \(problems.joined(separator: "; "))\n".utf8))
            }
        }
        print(
            "crash: \(kills) SIGKILLs of latchkey-testhelper write-loop; \(acknowledged) acknowledged writes checked; the in-flight write had landed \(landed) times"
        )
        return (passed, failed)
    }
}
