import Latchkey
import LatchkeySystem
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The agent's log (docs/AGENT.md, "Its log"): lines on standard error, which is
/// `agent.log` or the journal. Each kind of line (its text before the first colon, as
/// "refused a connection") is rate-limited: at most ``burst`` lines of a kind per
/// ``window``, the rest counted and summed up in one line when the window ends, so a
/// client repeating what makes the agent log (reconnecting after each refusal, say) adds a
/// few lines per window, not one per attempt. `agent.log` is capped as well: a line that
/// would take it past ``cap`` bytes first makes it `agent.log.1` (replacing the one
/// before) and starts a new one, so the two never hold much more than twice the cap.
package final class AgentLog: Sendable {
    /// How many lines of one kind are written per window.
    static let burst = 20
    /// How long a window lasts.
    static let window: Duration = .seconds(10)
    /// The most `agent.log` holds before a new one starts.
    static let cap = 1 << 20

    /// The log file, or nil when standard error is the journal (which has limits of its own).
    private let path: String?
    /// Where lines go instead of standard error: a test's record of what a server logged.
    private let sink: (@Sendable (String) -> Void)?
    /// Each kind's current window: when it began, how many lines it wrote and how many it held back.
    private let windows = Mutex<[String: Window]>([:])

    private struct Window {
        let began: ContinuousClock.Instant
        var written = 0
        var suppressed = 0
    }

    /// - Parameters:
    ///   - path: The log file standard error appends to, or nil for the journal.
    ///   - sink: What takes each line (its text, without the time) instead of standard error.
    package init(path: String?, sink: (@Sendable (String) -> Void)? = nil) {
        self.path = path
        self.sink = sink
    }

    /// Writes `text` as a line with the time, unless its kind has written ``burst`` lines in this window.
    func write(_ text: String) {
        let kind = String(text.prefix { $0 != ":" })
        let now = ContinuousClock.now
        windows.withLock { windows in
            var window = windows[kind] ?? Window(began: now)
            if now - window.began >= Self.window {
                emitSummary(kind, window)
                window = Window(began: now)
            }
            if window.written < Self.burst {
                window.written += 1
                emit(text)
            } else {
                window.suppressed += 1
            }
            windows[kind] = window
        }
    }

    /// Ends the windows that are over (all of them with `all`), writing what each held back.
    func flush(all: Bool = false) {
        let now = ContinuousClock.now
        windows.withLock { windows in
            for (kind, window) in windows where all || now - window.began >= Self.window {
                emitSummary(kind, window)
                windows[kind] = nil
            }
        }
    }

    /// Writes the summary of a window that held lines back (called holding the lock).
    private func emitSummary(_ kind: String, _ window: Window) {
        guard window.suppressed > 0 else { return }
        let seconds = (ContinuousClock.now - window.began).components.seconds
        emit("held back \(window.suppressed) more lines of \"\(kind)\" in the last \(seconds) s")
    }

    /// Writes one line on standard error, starting a new log file first when it would pass the cap
    /// (called holding the lock, so lines and the switch to a new file never interleave).
    private func emit(_ text: String) {
        if let sink { return sink(text) }
        let line = "latchkey agent \(Date().formatted(Date.ISO8601FormatStyle())): \(text)\n"
        if let path, let size = POSIX.standardErrorFileSize(), size + line.utf8.count > Self.cap {
            // When no new file can be started the line is dropped: the cap holds (the next line tries again).
            guard (try? POSIX.startNewLog(at: path, keepingOldAs: path + ".1")) != nil else { return }
        }
        // Nothing sensible remains to be done when standard error cannot be written.
        try? POSIX.write(line, toDescriptor: 2, name: "standard error")
    }
}
