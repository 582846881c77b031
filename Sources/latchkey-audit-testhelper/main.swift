import Foundation
import Latchkey

// A helper process for the audit trail's multi-process test:
//   latchkey-audit-testhelper append <directory> <app-id> <count> <tag>
//   latchkey-audit-testhelper verify <directory> <app-id>
// The key and anchor live in <directory>/backend (a DirectoryBackend), the
// trail in <directory>, so every process shares them.

func run(_ arguments: [String]) throws -> Int32 {
    guard arguments.count >= 3 else {
        FileHandle.standardError.write(Data("usage: latchkey-audit-testhelper append|verify <directory> <app-id> [<count> <tag>]\n".utf8))
        return 64
    }
    let directory = arguments[1]
    let trail = AuditTrail(appID: try AppID(arguments[2]), directory: directory, backend: try DirectoryBackend(root: directory + "/backend"))
    switch arguments[0] {
    case "append" where arguments.count == 5:
        guard let count = Int(arguments[3]) else { return 64 }
        for index in 0..<count {
            try trail.record(.sessionSaved, outcome: .ok, backend: .memory, account: arguments[4], detail: "\(arguments[4]) \(index)")
        }
        return 0
    case "verify":
        switch try trail.verify() {
        case .intact(let count, let last):
            print("intact \(count) \(last)")
            return 0
        case .broken(let sequence, let reason):
            print("broken \(sequence) \(reason)")
            return 1
        }
    default:
        return 64
    }
}

do {
    exit(try run(Array(CommandLine.arguments.dropFirst())))
} catch {
    FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
    exit(1)
}
