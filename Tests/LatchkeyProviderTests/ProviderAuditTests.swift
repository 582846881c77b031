import Foundation
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("the Secret Service provider's audit trail and limits", .sandboxed)
struct ProviderAuditTests {
    /// `latchkey audit show` of the provider's namespace on `bus`: its lines, and whether it verifies.
    private func trail(_ bus: ProviderBus) throws -> [String] {
        let show = try bus.providerAudit("show")
        #expect(show.status == 0, "\(show.stderr)")
        return show.lines
    }

    @Test(
        "each read, write and delete is recorded with the caller's name, uid, pid and executable; the load is one entry"
    )
    func callersRecorded() throws {
        let bus = try ProviderBus()
        try bus.startAgent()
        let store = try bus.run(
            "secret-tool", ["store", "--label=Private label", "service", "audited", "user", "attr-value"],
            input: "the-secret")
        #expect(store.status == 0, "\(store.stderr)")
        let lookup = try bus.run("secret-tool", ["lookup", "service", "audited", "user", "attr-value"])
        #expect(lookup.text == "the-secret", "\(lookup.stderr)")
        let clear = try bus.run("secret-tool", ["clear", "service", "audited", "user", "attr-value"])
        #expect(clear.status == 0, "\(clear.stderr)")
        let lines = try trail(bus)
        let uid = getuid()
        let item = "/org/freedesktop/secrets/collection/login/1"
        for (event, action) in [("secret.saved", "write"), ("secret.read", "read"), ("secret.deleted", "delete")] {
            let line = lines.first { $0.contains("\t\(event)\t") && $0.contains("secret-tool \(action) \(item)") }
            #expect(line != nil, "\(event) by secret-tool: \(lines.joined(separator: "\n"))")
            #expect(line?.contains("(uid \(uid), pid ") == true && line?.contains("exe /usr/bin/secret-tool)") == true)
        }
        let text = lines.joined(separator: "\n")
        #expect(!text.contains("the-secret") && !text.contains("attr-value") && !text.contains("Private label"))
        let reads = lines.filter { $0.contains("\tsecret.read\t") }
        #expect(reads.count == 2, "one load by the provider, one read by secret-tool: \(text)")
        #expect(reads.first?.hasSuffix("the Secret Service provider loaded its collections and items") == true)
        #expect(reads.last?.contains("secret-tool read") == true)
        // A restart loads the one collection record as one entry, not one read per item.
        _ = try bus.run("secret-tool", ["store", "--label=a", "service", "a"], input: "1")
        _ = try bus.run("secret-tool", ["store", "--label=b", "service", "b"], input: "2")
        let agent = try #require(try bus.ownerProcessID())
        #expect(kill(agent, SIGKILL) == 0)
        while try bus.ownerProcessID() == agent { Thread.sleep(forTimeInterval: 0.02) }
        try bus.startAgent()
        let after = try trail(bus).filter { $0.contains("\tsecret.read\t") }
        #expect(after.count == 3, "one more entry for the load of the collections and two items: \(after)")
        #expect(after.last?.contains("the Secret Service provider loaded its collections and items") == true)
        let verify = try bus.providerAudit("verify")
        #expect(verify.status == 0, "\(verify.text) \(verify.stderr)")
    }

    @Test("under audit.onFailure fail, a call that cannot be audited is refused and changes nothing")
    func unauditedCallRefused() throws {
        let bus = try ProviderBus()
        try bus.startAgent()
        let first = try bus.run("secret-tool", ["store", "--label=Kept", "service", "kept"], input: "old")
        #expect(first.status == 0, "\(first.stderr)")
        let directory = bus.store + "/io.github.latchkey.secret-service.d"
        // The trail cannot be written: a directory stands where its file was (a mode would not stop root).
        let trailFile = directory + "/audit.file.jsonl"
        #expect(rename(trailFile, trailFile + ".aside") == 0)
        #expect(mkdir(trailFile, 0o700) == 0)
        let store = try bus.run("secret-tool", ["store", "--label=Kept", "service", "kept"], input: "new")
        #expect(store.status != 0, "the write was refused")
        let added = try bus.run("secret-tool", ["store", "--label=Other", "service", "other"], input: "x")
        #expect(added.status != 0, "the new item was refused")
        let clear = try bus.run("secret-tool", ["clear", "service", "kept"])
        #expect(rmdir(trailFile) == 0 && rename(trailFile + ".aside", trailFile) == 0)
        #expect(try bus.run("secret-tool", ["lookup", "service", "kept"]).text == "old", "\(clear.stderr)")
        #expect(try bus.run("secret-tool", ["lookup", "service", "other"]).status == 1)
        let lines = try trail(bus)
        #expect(!lines.contains { $0.contains("secret-tool write") && $0.contains("collection/login/2") }, "\(lines)")
    }

    @Test("a 1 MiB attribute and 10,000 sessions from one client get errors, and the agent stays up")
    func limits() throws {
        let bus = try ProviderBus()
        let agent = try bus.startAgent()
        let run = try bus.python(
            pythonPrelude + """
                output, session = call(SERVICE, 'Service', 'OpenSession', '(sv)', ('plain', GLib.Variant('s', '')))
                big = 'x' * (1024 * 1024)
                print(call(DEFAULT, 'Collection', 'CreateItem', '(a{sv}(oayays)b)',
                           (item_properties('big', {'a': big}), (session, b'', b'v', 't'), False)))
                print(call(DEFAULT, 'Collection', 'CreateItem', '(a{sv}(oayays)b)',
                           (item_properties(big, {'a': 'b'}), (session, b'', b'v', 't'), False)))
                errors = set()
                opened = 1
                for _ in range(10000):
                    reply = call(SERVICE, 'Service', 'OpenSession', '(sv)', ('plain', GLib.Variant('s', '')))
                    if isinstance(reply, str):
                        errors.add(reply)
                    else:
                        opened += 1
                print(opened, sorted(errors))
                """)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.lines == [
                "error org.freedesktop.DBus.Error.InvalidArgs", "error org.freedesktop.DBus.Error.InvalidArgs",
                "1024 ['error org.freedesktop.DBus.Error.LimitsExceeded']",
            ], "\(run.text)")
        #expect(try bus.ownerProcessID() == agent, "the agent still owns the name")
        let store = try bus.run("secret-tool", ["store", "--label=After", "service", "after"], input: "up")
        #expect(store.status == 0, "another client still opens a session: \(store.stderr)")
    }

    @Test(
        "under agent.secretServiceClientCollections false, CreateCollection gives AccessDenied beyond default and session"
    )
    func clientCollectionsDenied() throws {
        let bus = try ProviderBus(
            policy: #"{"version": 1, "name": "no-collections", "agent": {"secretServiceClientCollections": false}}"#)
        try bus.startAgent()
        let run = try bus.python(
            pythonPrelude + """
                label = {S + 'Collection.Label': GLib.Variant('s', 'Mine')}
                print(call(SERVICE, 'Service', 'CreateCollection', '(a{sv}s)', (label, 'mine')))
                print(call(SERVICE, 'Service', 'CreateCollection', '(a{sv}s)', (label, '')))
                print(call(SERVICE, 'Service', 'CreateCollection', '(a{sv}s)', (label, 'default'))[0])
                print(call(SERVICE, 'Service', 'CreateCollection', '(a{sv}s)', (label, 'session'))[0])
                get = lambda: call(SERVICE, 'org.freedesktop.DBus.Properties', 'Get', '(ss)', (S + 'Service', 'Collections'))[0]
                print(sorted(get()))
                """)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.lines == [
                "error org.freedesktop.DBus.Error.AccessDenied", "error org.freedesktop.DBus.Error.AccessDenied",
                "/org/freedesktop/secrets/collection/login", "/org/freedesktop/secrets/collection/session",
                "['/org/freedesktop/secrets/collection/login', '/org/freedesktop/secrets/collection/session']",
            ], "\(run.text)")
    }
}
