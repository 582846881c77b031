import Foundation
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `secret-tool` as the provider's client under a SIGKILL, and what the trail says of it. (Python
/// `keyring`, SecretStorage, git's and docker's libsecret helpers are `make interop`'s:
/// interop/secret-service-provider-clients.)
@Suite("the Secret Service provider's clients", .sandboxed)
struct ProviderClientTests {
    @Test("secret-tool search --all: each item it reads is recorded with secret-tool as the caller")
    func searchAllAudited() throws {
        let bus = try ProviderBus()
        try bus.startAgent()
        for user in ["first", "second"] {
            let store = try bus.run(
                "secret-tool",
                ["store", "--label=Private label \(user)", "service", "searched", "user", "attr-value-\(user)"],
                input: "hidden-\(user)")
            #expect(store.status == 0, "\(store.stderr)")
        }
        let before = try bus.providerAudit("show").lines.count
        let search = try bus.run("secret-tool", ["search", "--all", "service", "searched"])
        #expect(search.status == 0 && search.text.contains("secret = hidden-second"), "\(search.stderr)")
        let added = Array(try bus.providerAudit("show").lines.dropFirst(before))
        // (libsecret reads each item's secret twice: GetSecrets for the search, GetSecret to show it.)
        #expect(!added.isEmpty && added.allSatisfy { $0.contains("\tsecret.read\t") }, "only reads: \(added)")
        for item in ["/org/freedesktop/secrets/collection/login/1", "/org/freedesktop/secrets/collection/login/2"] {
            let lines = added.filter { $0.contains(" read \(item) ") }
            #expect(!lines.isEmpty, "\(item) read: \(added)")
            #expect(
                lines.allSatisfy {
                    $0.contains("secret-tool read \(item) (uid \(getuid()), pid ")
                        && $0.hasSuffix(", exe /usr/bin/secret-tool)")
                }, "\(item) read by secret-tool: \(added)")
        }
        let text = added.joined(separator: "\n")
        #expect(
            !text.contains("hidden-") && !text.contains("attr-value-") && !text.contains("Private label"), "\(text)")
    }

    @Test(
        "SIGKILL while 4 secret-tool writers run: every store that exited 0 is there with its value, and the trail verifies"
    )
    func killedUnderWriters() throws {
        let bus = try ProviderBus()
        var agent = try bus.startAgent()
        // Each writer (a process of its own) stores items one by one and writes down the index of
        // each store that exited 0; it stops at the first that fails (the agent is gone, and the
        // bus activates no other provider). A store that was answered before the kill exited 0.
        let writer = """
            round=$1 writer=$2 directory=$3 index=0
            while [ "$index" -lt 1000 ]; do
              index=$((index + 1))
              printf 'value-%s-%s-%s' "$round" "$writer" "$index" |
                secret-tool store --label="item-$round-$writer-$index" \\
                  test killed round "$round" writer "$writer" index "$index" 2>/dev/null || exit 0
              echo "$index" >> "$directory/$writer"
            done
            """
        for round in 1...3 {
            let directory = try freshDirectory("writers-\(round)")
            let acknowledged = { () -> [Int: [Int]] in
                var indices: [Int: [Int]] = [:]
                for writer in 1...4 {
                    let text = (try? String(contentsOfFile: "\(directory)/\(writer)", encoding: .utf8)) ?? ""
                    indices[writer] = text.split(separator: "\n").compactMap { Int($0) }
                }
                return indices
            }
            let writers = try (1...4).map {
                try Child(
                    "/bin/sh", ["-c", writer, "sh", String(round), String($0), directory], environment: bus.environment)
            }
            // Killed mid-way: once each writer has had a store answered, later in each round.
            let clock = ContinuousClock()
            let start = clock.now
            while acknowledged().values.contains(where: { $0.count < 2 * round }) && clock.now - start < .seconds(20) {
                Thread.sleep(forTimeInterval: 0.01)
            }
            #expect(kill(agent, SIGKILL) == 0)
            for child in writers {
                let finished = try child.finish()
                #expect(finished.status == 0, "\(finished.stderr)")
            }
            let stored = acknowledged()
            #expect(stored.values.allSatisfy { $0.count >= 2 * round }, "every writer had stores answered: \(stored)")
            #expect(stored.values.allSatisfy { $0.count < 1000 }, "the kill stopped every writer mid-way: \(stored)")
            while try bus.ownerProcessID() == agent { Thread.sleep(forTimeInterval: 0.02) }
            agent = try bus.startAgent()
            let search = try bus.run("secret-tool", ["search", "--all", "test", "killed", "round", String(round)])
            #expect(search.status == 0, "\(search.stderr)")
            var found: [String: String] = [:]
            var label: String?
            for line in search.lines {
                if line.hasPrefix("label = ") {
                    label = String(line.dropFirst("label = ".count))
                } else if line.hasPrefix("secret = "), let current = label {
                    found[current] = String(line.dropFirst("secret = ".count))
                }
            }
            let lost = stored.flatMap { writer, indices in
                indices.filter { found["item-\(round)-\(writer)-\($0)"] != "value-\(round)-\(writer)-\($0)" }
                    .map { "\(writer)/\($0)" }
            }
            #expect(lost.isEmpty, "round \(round): acknowledged stores missing or wrong after the SIGKILL: \(lost)")
            let verify = try bus.providerAudit("verify")
            #expect(verify.status == 0, "round \(round): \(verify.text) \(verify.stderr)")
        }
    }
}
