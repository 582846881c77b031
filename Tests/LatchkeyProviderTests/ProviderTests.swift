import Foundation
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("the Secret Service provider", .sandboxed)
struct ProviderTests {
    @Test("secret-tool stores, looks up, replaces, searches and clears through the agent, in a DH session")
    func secretTool() throws {
        let bus = try ProviderBus()
        try bus.startAgent()
        // Watches the sessions clients open, to see that libsecret's DH session was accepted.
        // (Line-buffered, as it is killed: a child of the test runner does not see SIGTERM.)
        let monitor = try Child(
            "/usr/bin/stdbuf",
            [
                "-oL", "dbus-monitor", "--address", bus.address,
                "type='method_call',interface='org.freedesktop.Secret.Service',member='OpenSession'",
            ])
        Thread.sleep(forTimeInterval: 0.5)
        let store = try bus.run(
            "secret-tool", ["store", "--label=Demo", "service", "demo", "user", "alice"], input: "hunter2")
        #expect(store.status == 0, "\(store.stderr)")
        let lookup = try bus.run("secret-tool", ["lookup", "service", "demo", "user", "alice"])
        #expect(lookup.status == 0 && lookup.text == "hunter2", "\(lookup.stderr)")
        let replace = try bus.run(
            "secret-tool", ["store", "--label=Demo", "service", "demo", "user", "alice"], input: "second")
        #expect(replace.status == 0, "\(replace.stderr)")
        #expect(try bus.run("secret-tool", ["lookup", "service", "demo", "user", "alice"]).text == "second")
        let other = try bus.run(
            "secret-tool", ["store", "--label=Other", "service", "demo", "user", "bob"], input: "b")
        #expect(other.status == 0, "\(other.stderr)")
        let search = try bus.run("secret-tool", ["search", "--all", "service", "demo"])
        #expect(search.status == 0, "\(search.stderr)")
        let labels = search.text.split(separator: "\n").filter { $0.hasPrefix("label = ") }
        #expect(labels.sorted() == ["label = Demo", "label = Other"], "one item per account: \(search.text)")
        // (secret-tool writes the attributes on standard error.)
        #expect(search.text.contains("secret = second") && search.stderr.contains("attribute.user = bob"))
        let clear = try bus.run("secret-tool", ["clear", "service", "demo", "user", "alice"])
        #expect(clear.status == 0, "\(clear.stderr)")
        #expect(try bus.run("secret-tool", ["lookup", "service", "demo", "user", "alice"]).status == 1)
        #expect(try bus.run("secret-tool", ["lookup", "service", "demo", "user", "bob"]).text == "b")
        kill(monitor.process.processIdentifier, SIGKILL)
        let sessions = try monitor.finish().text
        #expect(sessions.contains("dh-ietf1024-sha256-aes128-cbc-pkcs7"), "libsecret opened a DH session: \(sessions)")
        #expect(!sessions.contains("string \"plain\""), "libsecret did not fall back to a plain session")
    }

    @Test("a plain session: CreateItem with and without replace, GetSecret, SearchItems, Close")
    func plainSession() throws {
        let bus = try ProviderBus()
        try bus.startAgent()
        let run = try bus.python(
            pythonPrelude + """
                output, session = call(SERVICE, 'Service', 'OpenSession', '(sv)', ('plain', GLib.Variant('s', '')))
                def secret(value):
                    return (session, b'', value, 'text/plain')
                attributes = {'app': 'plain-test', 'user': 'u'}
                args = '(a{sv}(oayays)b)'
                # A property of the client's own, of a type the provider does not read, is ignored.
                properties = item_properties('one', attributes)
                properties['org.example.Flags'] = GLib.Variant('u', 7)
                first, prompt = call(DEFAULT, 'Collection', 'CreateItem', args, (properties, secret(b'first'), False))
                print('prompt', prompt)
                print('get', bytes(call(first, 'Item', 'GetSecret', '(o)', (session,))[0][2]).decode())
                replaced, _ = call(DEFAULT, 'Collection', 'CreateItem', args,
                                   (item_properties('two', attributes), secret(b'second'), True))
                print('replaced same', replaced == first)
                print('get', bytes(call(first, 'Item', 'GetSecret', '(o)', (session,))[0][2]).decode())
                print('label', call(first, 'org.freedesktop.DBus.Properties', 'Get', '(ss)', (S + 'Item', 'Label'))[0])
                added, _ = call(DEFAULT, 'Collection', 'CreateItem', args,
                                (item_properties('three', attributes), secret(b'third'), False))
                print('added new', added != first)
                unlocked, locked = call(SERVICE, 'Service', 'SearchItems', '(a{ss})', ({'app': 'plain-test'},))
                print('found', len(unlocked), len(locked))
                secrets = call(SERVICE, 'Service', 'GetSecrets', '(aoo)', (unlocked, session))[0]
                print('secrets', sorted(bytes(value[2]).decode() for value in secrets.values()))
                print('close', call(session, 'Session', 'Close'))
                print('closed', call(first, 'Item', 'GetSecret', '(o)', (session,)))
                """)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.lines == [
                "prompt /", "get first", "replaced same True", "get second", "label two", "added new True",
                "found 2 0", "secrets ['second', 'third']", "close ()",
                "closed error org.freedesktop.Secret.Error.NoSession",
            ], "\(run.text)")
    }

    @Test("collections and items emit the spec's signals; Collections, aliases and labels follow")
    func signals() throws {
        let bus = try ProviderBus()
        try bus.startAgent()
        let run = try bus.python(
            pythonPrelude + """
                import time
                seen = set()
                bus.signal_subscribe(None, None, None, None, None, Gio.DBusSignalFlags.NONE,
                                     lambda c, sender, path, interface, name, p: None if interface == 'org.freedesktop.DBus'
                                     else seen.add(interface.split('.')[-1] + '.' + name))
                output, session = call(SERVICE, 'Service', 'OpenSession', '(sv)', ('plain', GLib.Variant('s', '')))
                label = {S + 'Collection.Label': GLib.Variant('s', 'Extra Things')}
                collection, _ = call(SERVICE, 'Service', 'CreateCollection', '(a{sv}s)', (label, 'extra'))
                print('collection', collection)
                print('alias', call(SERVICE, 'Service', 'ReadAlias', '(s)', ('extra',))[0] == collection)
                print('default', call(SERVICE, 'Service', 'ReadAlias', '(s)', ('default',))[0])
                get = lambda path, interface, name: call(path, 'org.freedesktop.DBus.Properties', 'Get', '(ss)', (S + interface, name))[0]
                print('listed', collection in get(SERVICE, 'Service', 'Collections'))
                item, _ = call(collection, 'Collection', 'CreateItem', '(a{sv}(oayays)b)',
                               (item_properties('one', {'k': 'v'}), (session, b'', b'x', 'text/plain'), False))
                print('items', get(collection, 'Collection', 'Items') == [item])
                call(item, 'Item', 'SetSecret', '((oayays))', ((session, b'', b'y', 'text/plain'),))
                call(item, 'org.freedesktop.DBus.Properties', 'Set', '(ssv)', (S + 'Item', 'Label', GLib.Variant('s', 'renamed')))
                call(collection, 'org.freedesktop.DBus.Properties', 'Set', '(ssv)',
                     (S + 'Collection', 'Label', GLib.Variant('s', 'Renamed')))
                print('labels', get(item, 'Item', 'Label'), get(collection, 'Collection', 'Label'))
                print('delete item', call(item, 'Item', 'Delete')[0])
                print('delete collection', call(collection, 'Collection', 'Delete')[0])
                print('gone', call(SERVICE, 'Service', 'ReadAlias', '(s)', ('extra',))[0], collection in get(SERVICE, 'Service', 'Collections'))
                end = time.time() + 10
                while len(seen) < 7 and time.time() < end:
                    GLib.MainContext.default().iteration(False) or time.sleep(0.01)
                print('signals', ' '.join(sorted(seen)))
                """)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.lines == [
                "collection /org/freedesktop/secrets/collection/extra_things", "alias True",
                "default /org/freedesktop/secrets/collection/login", "listed True", "items True",
                "labels renamed Renamed", "delete item /", "delete collection /", "gone / False",
                "signals Collection.ItemChanged Collection.ItemCreated Collection.ItemDeleted Properties.PropertiesChanged "
                    + "Service.CollectionChanged Service.CollectionCreated Service.CollectionDeleted",
            ], "\(run.text)")
    }

    @Test("a client's sessions are closed when it leaves the bus")
    func sessionsEndWithClient() throws {
        let bus = try ProviderBus()
        try bus.startAgent()
        let nodes = """
            import re
            def sessions():
                xml = call('/org/freedesktop/secrets/session', 'org.freedesktop.DBus.Introspectable', 'Introspect')[0]
                return len(re.findall('<node name=', xml))

            """
        let first = try bus.python(
            pythonPrelude + nodes + """
                for _ in range(3):
                    call(SERVICE, 'Service', 'OpenSession', '(sv)', ('plain', GLib.Variant('s', '')))
                print(sessions())
                """)
        #expect(first.lines == ["3"], "\(first.text) \(first.stderr)")
        let after = try bus.python(
            pythonPrelude + nodes + """
                import time
                end = time.time() + 10
                while sessions() > 0 and time.time() < end:
                    time.sleep(0.02)
                print(sessions())
                """)
        #expect(after.lines == ["0"], "\(after.text) \(after.stderr)")
    }

    @Test("each DH session gets a public key of its own: the spare key pair made between clients is used once")
    func dhPublicKeysNotReused() throws {
        let bus = try ProviderBus()
        try bus.startAgent()
        let client = """
            P = int('FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A0879'
                    '8E3404DDEF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B'
                    '0BFF5CB6F406B7EDEE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF', 16)
            mine = pow(2, 12345678901234567890, P).to_bytes(128, 'big')
            for _ in range(2):
                output, session = call(SERVICE, 'Service', 'OpenSession', '(sv)',
                                       ('dh-ietf1024-sha256-aes128-cbc-pkcs7', GLib.Variant('ay', mine)))
                print(bytes(output).hex())
            """
        var keys: [String] = []
        for _ in 0..<3 {
            let run = try bus.python(pythonPrelude + client)
            #expect(run.status == 0 && run.lines.count == 2, "\(run.text) \(run.stderr)")
            keys += run.lines
        }
        #expect(keys.count == 6 && Set(keys).count == 6, "\(keys)")
        #expect(keys.allSatisfy { $0.count == 256 }, "\(keys)")
    }

    @Test("bad calls get the spec's errors, and the agent stays up")
    func badCalls() throws {
        let bus = try ProviderBus()
        let agent = try bus.startAgent()
        let run = try bus.python(
            pythonPrelude + """
                output, session = call(SERVICE, 'Service', 'OpenSession', '(sv)', ('plain', GLib.Variant('s', '')))
                args = '(a{sv}(oayays)b)'
                print(call('/org/freedesktop/secrets/collection/login/404', 'Item', 'GetSecret', '(o)', (session,)))
                print(call('/org/freedesktop/secrets/collection/nothing', 'Collection', 'Delete'))
                print(call(SERVICE, 'Service', 'GetSecrets', '(aoo)', ([], '/org/freedesktop/secrets/session/none')))
                print(call(DEFAULT, 'Collection', 'CreateItem', args,
                           (item_properties('x', {'a': 'b'}), ('/org/freedesktop/secrets/session/none', b'', b'v', 't'), False)))
                print(call(SERVICE, 'Service', 'OpenSession', '(sv)', ('rot13', GLib.Variant('s', ''))))
                print(call(SERVICE, 'Service', 'OpenSession', '(s)', ('plain',)))
                print(call(SERVICE, 'Service', 'OpenSession', '(sv)',
                           ('dh-ietf1024-sha256-aes128-cbc-pkcs7', GLib.Variant('ay', b'\\x00'))))
                print(call(DEFAULT, 'Collection', 'CreateItem', '(a{sv}(oayays)b)',
                           ({S + 'Item.Attributes': GLib.Variant('s', 'flat')}, (session, b'', b'v', 't'), False)))
                print(call(SERVICE, 'Service', 'SetAlias', '(so)', ('no alias', '/org/freedesktop/secrets/collection/login')))
                print(call(SERVICE, 'Service', 'SetAlias', '(so)', ('extra', '/org/freedesktop/secrets/collection/none')))
                print(call(SERVICE, 'Service', 'SearchItems', '(a{ss})', ({'a': 'b'},)))
                # A secret asked for in a session its client closed.
                closed = call(SERVICE, 'Service', 'OpenSession', '(sv)', ('plain', GLib.Variant('s', '')))[1]
                item, _ = call(DEFAULT, 'Collection', 'CreateItem', args,
                               (item_properties('c', {'c': 'd'}), (session, b'', b'v', 't'), False))
                print(call(closed, 'Session', 'Close'))
                print(call(item, 'Item', 'GetSecret', '(o)', (closed,)))
                print(call(SERVICE, 'Service', 'GetSecrets', '(aoo)', ([item], closed)))
                print(call(item, 'Item', 'SetSecret', '((oayays))', ((closed, b'', b'w', 't'),)))
                """)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.lines == [
                "error org.freedesktop.Secret.Error.NoSuchObject",
                "error org.freedesktop.Secret.Error.NoSuchObject",
                "error org.freedesktop.Secret.Error.NoSession",
                "error org.freedesktop.Secret.Error.NoSession",
                "error org.freedesktop.DBus.Error.NotSupported",
                "error org.freedesktop.DBus.Error.InvalidArgs",
                "error org.freedesktop.DBus.Error.InvalidArgs",
                "error org.freedesktop.DBus.Error.InvalidArgs",
                "error org.freedesktop.DBus.Error.InvalidArgs",
                "error org.freedesktop.Secret.Error.NoSuchObject",
                "([], [])",
                "()",
                "error org.freedesktop.Secret.Error.NoSession",
                "error org.freedesktop.Secret.Error.NoSession",
                "error org.freedesktop.Secret.Error.NoSession",
            ], "\(run.text)")
        #expect(try bus.ownerProcessID() == agent, "the agent still owns the name")
        let store = try bus.run("secret-tool", ["store", "--label=After", "service", "after"], input: "still up")
        #expect(store.status == 0, "\(store.stderr)")
        #expect(try bus.run("secret-tool", ["lookup", "service", "after"]).text == "still up")
    }

    @Test("an item whose store was acknowledged survives a SIGKILL of the agent")
    func survivesKill() throws {
        let bus = try ProviderBus()
        let agent = try bus.startAgent()
        let store = try bus.run("secret-tool", ["store", "--label=Kept", "service", "kept"], input: "durable")
        #expect(store.status == 0, "\(store.stderr)")
        #expect(kill(agent, SIGKILL) == 0)
        while try bus.ownerProcessID() == agent { Thread.sleep(forTimeInterval: 0.02) }
        let restarted = try bus.startAgent()
        #expect(restarted != agent)
        let lookup = try bus.run("secret-tool", ["lookup", "service", "kept"])
        #expect(lookup.status == 0 && lookup.text == "durable", "\(lookup.stderr)")
        let secrets = try String(
            contentsOfFile: bus.store + "/io.github.latchkey.secret-service.d/credentials.vault", encoding: .isoLatin1)
        #expect(!secrets.contains("durable"), "the vault file holds no plaintext")
    }

    @Test(
        "with gnome-keyring on the bus, the agent does not take the name and says so", .needsSecretService)
    func otherProvider() throws {
        let keyring = try KeyringDaemon.pid()
        let runtime = try TestSandbox.required(for: "otherProvider").runtimeDirectory()
        let environment: [String: String?] = [
            "XDG_RUNTIME_DIR": runtime, "LATCHKEY_HOME": try freshDirectory("store"), "LATCHKEY_AGENT": "off",
        ]
        let shell = try runProgram(
            "sh", ["-c", #""$0" agent run --secret-service </dev/null >/dev/null 2>&1 &"#, try latchkeyPath()],
            environment: environment)
        #expect(shell.status == 0)
        let log = runtime + "/latchkey/agent.log"
        let end = Date(timeIntervalSinceNow: 30)
        var text = ""
        while Date() < end && !text.contains("secret service:") {
            text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(text.contains("org.freedesktop.secrets is owned by another provider; not serving"), "\(text)")
        #expect(try KeyringDaemon.pid() == keyring, "gnome-keyring still owns the name")
        let owner = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(keyring)/exe")
        #expect(owner.hasSuffix("/gnome-keyring-daemon"), "the owner is gnome-keyring: \(owner)")
        // secret-tool still reaches gnome-keyring: the item is stored and read back while the name
        // stays gnome-keyring's, and the agent never opened its provider's vault.
        let attributes = ["service", "beside-gnome-keyring", "pid", String(getpid())]
        let store = try runProgram("secret-tool", ["store", "--label=Beside"] + attributes, input: "reached")
        #expect(store.status == 0, "\(store.stderr)")
        let lookup = try runProgram("secret-tool", ["lookup"] + attributes)
        #expect(lookup.status == 0 && lookup.text == "reached", "\(lookup.stderr)")
        #expect(try KeyringDaemon.pid() == keyring, "gnome-keyring still owns the name after the client's calls")
        let vault = try #require(environment["LATCHKEY_HOME"] ?? nil) + "/io.github.latchkey.secret-service.d"
        #expect(!FileManager.default.fileExists(atPath: vault), "the agent opened no provider vault")
        #expect(try runProgram("secret-tool", ["clear"] + attributes).status == 0)
    }
}
