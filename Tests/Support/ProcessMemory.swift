import Foundation

/// The canaries found, as raw bytes, anywhere in the readable memory of process
/// `pid` (`/proc/<pid>/maps`, then `/proc/<pid>/mem`); needs root (or ptrace
/// rights) for a process that is not dumpable.
/// - Parameters:
///   - canaries: The secrets to look for.
///   - pid: The process.
/// - Returns: Each canary found.
/// - Throws: ``TestSupportError`` when the memory cannot be read at all.
public func canariesInMemory(_ canaries: [String], of pid: Int32) throws -> [String] {
    guard let maps = try? String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8),
        let memory = FileHandle(forReadingAtPath: "/proc/\(pid)/mem")
    else { throw TestSupportError("cannot read the memory of process \(pid)") }
    defer { try? memory.close() }
    var found = Set<String>()
    var readAny = false
    for line in maps.split(separator: "\n") {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        // Pages without read access are read too (root reads them through /proc/<pid>/mem): guarded secrets live there.
        guard fields.count >= 2, !line.hasSuffix("[vvar]"), !line.hasSuffix("[vsyscall]")
        else { continue }
        let bounds = fields[0].split(separator: "-").compactMap { UInt64($0, radix: 16) }
        guard bounds.count == 2, bounds[1] > bounds[0], bounds[1] - bounds[0] <= 1 << 30 else { continue }
        do {
            try memory.seek(toOffset: bounds[0])
            guard let data = try memory.read(upToCount: Int(bounds[1] - bounds[0])) else { continue }
            readAny = true
            for canary in canaries where data.range(of: Data(canary.utf8)) != nil { found.insert(canary) }
        } catch {
            continue
        }
    }
    guard readAny else { throw TestSupportError("no memory of process \(pid) could be read") }
    return found.sorted()
}
