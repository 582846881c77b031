import Foundation
import LatchkeyTestSupport
import Testing

@Suite("latchkey audit reset", .sandboxed)
struct CLIAuditResetTests {
    /// The audit anchor files below the store directory.
    private func anchorFiles(_ store: Store) throws -> [String] {
        let files = FileManager.default
        guard let walker = files.enumerator(atPath: store.storeDirectory) else { return [] }
        return walker.compactMap { $0 as? String }.filter { $0.hasSuffix(".anchor") && $0.contains("audit") }.map {
            store.storeDirectory + "/" + $0
        }
    }

    @Test(
        "a broken trail stops the app with 65 naming audit reset; reset --yes keeps it aside, verify reports the reset, and the app works again",
        arguments: backends)
    func resetAfterLostAnchor(backend: String) throws {
        let store = try Store(backend)
        #expect(try store.run(["session", "put", "access"], input: "token-1\n").status == 0)
        #expect(try store.run(["session", "get", "access"]).status == 0)
        let anchors = try anchorFiles(store)
        try #require(!anchors.isEmpty)
        for anchor in anchors { try FileManager.default.removeItem(atPath: anchor) }

        let refused = try store.run(["session", "get", "access"])
        #expect(refused.status == 65, "\(refused.stderr)")
        #expect(refused.stderr.contains("audit reset"), "\(refused.stderr)")
        #expect(!refused.text.contains("token-1"))
        let broken = try store.run(["audit", "verify"])
        #expect(broken.status == 65)

        let unconfirmed = try store.run(["audit", "reset"])
        #expect(unconfirmed.status == 64 && unconfirmed.stderr.contains("--yes"), "\(unconfirmed.stderr)")
        let reset = try store.json(["audit", "reset", "--yes"])
        let reports = try #require(reset["reset"] as? [[String: Any]])
        #expect(reports.count == 1)
        let kept = try #require(reports.first?["kept"] as? String)
        #expect(FileManager.default.fileExists(atPath: kept), "the broken trail is kept")

        let verified = try store.json(["audit", "verify"])
        #expect(verified["intact"] as? Bool == true)
        let resets = try #require(verified["resets"] as? [[String: Any]])
        #expect(
            resets.count == 1
                && (resets.first?["detail"] as? String)?.contains((kept as NSString).lastPathComponent) == true)
        #expect(try store.run(["session", "get", "access"]).text == "token-1\n")
        let again = try store.json(["audit", "reset", "--yes"])
        #expect((again["reset"] as? [Any])?.isEmpty == true, "an intact trail is left alone")
        try store.run(["wipe", "--yes"])
    }
}

@Suite("latchkey audit verify lists every reset", .sandboxed)
struct CLIAuditResetListTests {
    @Test("two resets: verify's text and --json list both, the earlier one from the segment the later kept")
    func twoResets() throws {
        let store = try Store("file")
        let anchor = store.namespaceFile("audit.file.anchor")
        for round in 1...2 {
            #expect(try store.run(["session", "put", "s\(round)"], input: "t\n").status == 0)
            try FileManager.default.removeItem(atPath: anchor)
            #expect(try store.run(["audit", "reset", "--yes"]).status == 0)
        }
        let verified = try store.json(["audit", "verify"])
        let resets = try #require(verified["resets"] as? [[String: Any]])
        #expect(resets.count == 2, "\(resets)")
        let details = resets.compactMap { $0["detail"] as? String }
        #expect(details.count == 2 && details[0] != details[1], "\(details)")
        let text = try store.run(["audit", "verify"])
        #expect(text.status == 0)
        #expect(text.lines.filter { $0.hasPrefix("reset at ") }.count == 2, "\(text.text)")
    }
}
