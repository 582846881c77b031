import Foundation
import Latchkey

/// K writer processes (`latchkey-testhelper write-many-audited`) x M writes to one
/// namespace at once, each write followed by an audit entry whose key and anchor
/// live in the same vault: no write may be lost and the audit chain must verify.
struct ConcurrencyStress {
    let directory: String
    let processes: Int
    let writes: Int

    /// Returns (passed, failed): one check per write, one for each writer's exit, one for the audit chain.
    func run() throws -> (passed: Int, failed: Int) {
        let helper = try ChildProcess.sibling("latchkey-testhelper")
        let store = directory + "/concurrency"
        let appID = try AppID(FileBackendSection.appID)
        let started = ContinuousClock.now
        let writers = try (0..<processes).map {
            try ChildProcess(helper, ["write-many-audited", store, appID.rawValue, "p\($0)", "\(writes)"])
        }
        let acknowledged = writers.map { $0.remainingNumbers().count }
        let endings = try writers.map { try $0.waitForExit() }
        let elapsed = (ContinuousClock.now - started).seconds
        var passed = 0
        var failed = 0
        func check(_ ok: Bool, _ problem: @autoclosure () -> String) {
            if ok {
                passed += 1
            } else {
                failed += 1
                FileHandle.standardError.write(Data("concurrency: \(problem())\n".utf8))
            }
        }
        for (index, ended) in endings.enumerated() {
            check(
                ended.status == 0 && acknowledged[index] == writes,
                "writer p\(index) exited with \(ended.shellStatus) after \(acknowledged[index]) acknowledged writes"
            )
        }
        let backend = EncryptedFileBackend(appID: appID, directory: store, keySource: .keyFile)
        for index in 0..<processes {
            for write in 0..<writes {
                let name = "p\(index)-\(write)"
                let value = try backend.read(ItemKey(kind: .setting, name: name))?.value
                check(value == SecretBytes(utf8: name), "\(name) is \(value == nil ? "missing" : "wrong")")
            }
        }
        let verdict = try AuditTrail(appID: appID, directory: store, backend: backend).verify()
        let total = processes * writes
        check(
            verdict == .intact(entryCount: total, lastSequence: UInt64(total)),
            "the audit chain gave \(verdict), expected \(total) intact entries")
        print(
            "concurrency: \(processes) processes x \(writes) audited writes to one namespace in \(String(format: "%.1f", elapsed)) s; audit chain: \(verdict)"
        )
        return (passed, failed)
    }
}
