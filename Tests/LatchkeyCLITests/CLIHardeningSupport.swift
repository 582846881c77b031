import Foundation
import Glibc
import LatchkeyTestSupport
import Testing

/// Runs `latchkey` under `timeout(1)`, so a run that would hang ends with status
/// 124 after `seconds` instead of stalling the suite.
@discardableResult
func latchkeyWithin(_ seconds: Int, _ arguments: [String], input: String = "", environment: [String: String?] = [:])
    throws -> Run
{
    try Child(
        "/usr/bin/timeout", ["--kill-after=2", String(seconds), try latchkeyPath()] + arguments,
        environment: environment
    )
    .finish(writing: Data(input.utf8))
}

/// Creates a FIFO at `path` (`mkfifo`, 0600), failing the test when it cannot.
func makeFIFO(_ path: String) throws {
    guard mkfifo(path, 0o600) == 0 else { throw TestSupportError("mkfifo \(path) failed: errno \(errno)") }
}

/// Sets the mode of `path` (`chmod`).
func setMode(_ path: String, _ mode: mode_t) throws {
    guard chmod(path, mode) == 0 else { throw TestSupportError("chmod \(path) failed: errno \(errno)") }
}

/// Expects a run to have ended with `status` and a message that names `path`.
func expectRefusal(_ run: Run, status: Int32, naming path: String, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(run.status == status, "\(run.stderr)", sourceLocation: sourceLocation)
    #expect(run.stderr.contains(path), "\(run.stderr)", sourceLocation: sourceLocation)
}
