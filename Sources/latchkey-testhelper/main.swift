// A helper the encrypted-file tests launch as a separate process, to test
// what only processes can show: locking between writers, and crashes (SIGKILL)
// in the middle of a save. It is never installed.
//
//   latchkey-testhelper write-many DIR APPID PREFIX COUNT
//       writes COUNT items (setting/PREFIX-i = "PREFIX-i"), key-file source
//   latchkey-testhelper write-loop DIR APPID START SLOTS
//       forever: writes setting/slot-(i % SLOTS) = "i" for i = START, START+1, ...
//   latchkey-testhelper write-many-audited DIR APPID PREFIX COUNT
//       as write-many, and after each write appends an audit entry to the trail
//       in DIR whose key and anchor live in the same vault (make stress)
//   latchkey-testhelper make-vault DIR APPID
//       writes a few items to a key-file vault (fuzz seeds use an all-zero key file)
//   latchkey-testhelper dumpable default|protected
//       prints whether the process is dumpable (1 or 0) before, while and after it
//       holds a secret, as "before while after", without or with the app's opt-in
//       (MemoryProtection.forbidDumpsWhileHoldingSecrets)
//   latchkey-testhelper migrate-crash DIR APPID STEP [MINIMUM_AGE]
//       opens the app's Vault (default policy, so a file vault left from a
//       fallback is migrated into the Secret Service) and SIGKILLs itself right
//       after migration step STEP; MINIMUM_AGE (seconds) replaces the age a copy must
//       reach before a later process may destroy the file vault (10 s)
//   latchkey-testhelper migrate-open DIR APPID [MINIMUM_AGE]
//       opens the app's Vault as migrate-crash does and prints what opening migrated:
//       "moved=N keptNewer=N destroyed=0|1 awaiting=0|1"
//
// After each write returns, it prints the write's number and a newline on stdout
// (one unbuffered write), so the parent knows which writes were acknowledged.
import Foundation
import Latchkey

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("latchkey-testhelper: \(message)\n".utf8))
    exit(1)
}

func acknowledge(_ number: Int) {
    FileHandle.standardOutput.write(Data("\(number)\n".utf8))
}

let arguments = CommandLine.arguments
if arguments.count == 3 && arguments[1] == "dumpable" {
    if arguments[2] == "protected" { MemoryProtection.forbidDumpsWhileHoldingSecrets() }
    func flag() -> String { MemoryProtection.isDumpable ? "1" : "0" }
    let before = flag()
    var secret: SecretBytes? = SecretBytes(utf8: "a token the app holds")
    let holding = flag()
    secret = nil
    FileHandle.standardOutput.write(Data("\(before) \(holding) \(flag())\n".utf8))
    withExtendedLifetime(secret) {}
    exit(0)
}
guard arguments.count >= 4 else {
    fail("usage: latchkey-testhelper write-many|write-many-audited|write-loop|make-vault DIR APPID ...")
}
let appID: AppID
do {
    appID = try AppID(arguments[3])
} catch {
    fail("\(error)")
}
let backend = EncryptedFileBackend(appID: appID, directory: arguments[2], keySource: .keyFile)

do {
    switch arguments[1] {
    case "write-many" where arguments.count == 6:
        let prefix = arguments[4]
        guard let count = Int(arguments[5]) else { fail("COUNT must be a number") }
        for i in 0..<count {
            let name = "\(prefix)-\(i)"
            try backend.write(StoredItem(value: SecretBytes(utf8: name)), for: ItemKey(kind: .setting, name: name))
            acknowledge(i)
        }
    case "write-many-audited" where arguments.count == 6:
        let prefix = arguments[4]
        guard let count = Int(arguments[5]) else { fail("COUNT must be a number") }
        let trail = AuditTrail(appID: appID, directory: arguments[2], backend: backend)
        for i in 0..<count {
            let name = "\(prefix)-\(i)"
            try backend.write(StoredItem(value: SecretBytes(utf8: name)), for: ItemKey(kind: .setting, name: name))
            try trail.record(.sessionSaved, outcome: .ok, backend: .file, account: prefix, detail: "\(prefix) \(i)")
            acknowledge(i)
        }
    case "write-loop" where arguments.count == 6:
        guard let start = Int(arguments[4]), let slots = Int(arguments[5]), slots > 0 else {
            fail("START and SLOTS must be numbers")
        }
        var i = start
        while true {
            try backend.write(
                StoredItem(value: SecretBytes(utf8: "\(i)")), for: ItemKey(kind: .setting, name: "slot-\(i % slots)"))
            acknowledge(i)
            i += 1
        }
    case "make-vault" where arguments.count == 4:
        let created = Date(timeIntervalSinceReferenceDate: 800_000_000)
        try backend.write(
            StoredItem(value: SecretBytes(utf8: "alice"), created: created), for: ItemKey(kind: .username, name: "last")
        )
        try backend.write(
            StoredItem(value: SecretBytes(utf8: "token-\u{e9}"), created: created, expires: created + 3600),
            for: ItemKey(kind: .session, account: "alice", name: "access"))
        try backend.write(
            StoredItem(value: SecretBytes([0, 1, 255]), created: created), for: ItemKey(kind: .key, name: "pseudonym"))
    case "migrate-crash" where arguments.count == 5 || arguments.count == 6:
        #if LATCHKEY_TEST_SEAMS
            guard let step = Int(arguments[4]) else { fail("STEP must be a number") }
            let minimumAge = arguments.count == 6 ? Double(arguments[5]) : nil
            let observer: @Sendable (Int) -> Void = { if $0 == step { kill(getpid(), SIGKILL) } }
            try Vault.$migrationMinimumAgeForTests.withValue(minimumAge) {
                try Vault.$migrationStepObserver.withValue(observer) {
                    _ = try Vault.open(appID: appID, storeDirectory: arguments[2])
                }
            }
        #else
            fail("migrate-crash needs the library's test seams: a debug build with LATCHKEY_TEST_SEAMS=1 (make test)")
        #endif
    case "migrate-open" where arguments.count == 4 || arguments.count == 5:
        #if LATCHKEY_TEST_SEAMS
            let minimumAge = arguments.count == 5 ? Double(arguments[4]) : nil
            let vault = try Vault.$migrationMinimumAgeForTests.withValue(minimumAge) {
                try Vault.open(appID: appID, storeDirectory: arguments[2])
            }
            let report = vault.openReport.migration
            func flag(_ value: Bool?) -> Int { value == true ? 1 : 0 }
            FileHandle.standardOutput.write(
                Data(
                    "moved=\(report?.moved ?? 0) keptNewer=\(report?.keptNewer ?? 0) destroyed=\(flag(report?.destroyedFileVault)) awaiting=\(flag(report?.awaitingVerification))\n"
                        .utf8))
        #else
            fail("migrate-open needs the library's test seams: a debug build with LATCHKEY_TEST_SEAMS=1 (make test)")
        #endif
    default:
        fail("unknown command or wrong number of arguments")
    }
} catch let error as LatchkeyError {
    fail("\(error.code): \(error.message)")
}
