import Foundation
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("the Secret Service provider's durability and scale", .sandboxed)
struct ProviderDurabilityTests {
    @Test("a SIGKILL of the agent amid writes, replacements, deletions and compactions loses no acknowledged change")
    func killAmidWrites() throws {
        let bus = try ProviderBus()
        let agent = try bus.startAgent()
        let expected = try freshDirectory("expected") + "/expected.json"
        let delay = Double.random(in: 1.5...3)
        // One client writes 8 items over and over (replacing them, deleting one in 7 calls: stale
        // records, so the journal is compacted every few hundred calls) until the agent dies under
        // it; it notes the state its acknowledged calls made, and the one call in flight.
        let writer = try bus.python(
            pythonPrelude + """
                import json, os, signal, sys, threading, time
                # Once the agent is gone, no call may start another provider (the bus would activate gnome-keyring).
                def call(path, interface, method, signature=None, arguments=None):
                    try:
                        parameters = GLib.Variant(signature, arguments) if signature else None
                        return bus.call_sync('org.freedesktop.secrets', path, S + interface if '.' not in interface else interface,
                                             method, parameters, None, Gio.DBusCallFlags.NO_AUTO_START, 5000, None).unpack()
                    except GLib.Error as error:
                        return 'error ' + str(Gio.DBusError.get_remote_error(error))
                output, session = call(SERVICE, 'Service', 'OpenSession', '(sv)', ('plain', GLib.Variant('s', '')))
                def killer():
                    time.sleep(\(delay))
                    os.kill(\(agent), signal.SIGKILL)
                killed = threading.Thread(target=killer, daemon=True)
                killed.start()
                acked, pending, count = {}, None, 0
                while True:
                    key = 'k%d' % (count % 8)
                    if count % 7 == 6:
                        pending = [key, None]
                        found = call(SERVICE, 'Service', 'SearchItems', '(a{ss})', ({'app': 'crash', 'key': key},))
                        if isinstance(found, str) or any(isinstance(call(path, 'Item', 'Delete'), str) for path in found[0]):
                            break
                        acked[key] = None
                    else:
                        value = 'v%d' % count
                        pending = [key, value]
                        reply = call(DEFAULT, 'Collection', 'CreateItem', '(a{sv}(oayays)b)',
                                     (item_properties('crash', {'app': 'crash', 'key': key}),
                                      (session, b'', value.encode(), 'text/plain'), True))
                        if isinstance(reply, str):
                            print(reply, file=sys.stderr)
                            break
                        acked[key] = value
                    pending = None
                    count += 1
                killed.join()
                json.dump({'acked': acked, 'pending': pending}, open('\(expected)', 'w'))
                print(count)
                """)
        #expect(writer.status == 0, "\(writer.stderr)")
        let count = Int(writer.text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(count > 100, "the agent was killed amid the writes: \(count) calls answered")
        while try bus.ownerProcessID() == agent { Thread.sleep(forTimeInterval: 0.02) }
        try bus.startAgent()
        let checker = try bus.python(
            pythonPrelude + """
                import json
                expected = json.load(open('\(expected)'))
                output, session = call(SERVICE, 'Service', 'OpenSession', '(sv)', ('plain', GLib.Variant('s', '')))
                for number in range(8):
                    key = 'k%d' % number
                    found = call(SERVICE, 'Service', 'SearchItems', '(a{ss})', ({'app': 'crash', 'key': key},))[0]
                    values = [bytes(call(path, 'Item', 'GetSecret', '(o)', (session,))[0][2]).decode() for path in found]
                    got = values[0] if len(values) == 1 else (None if not values else values)
                    allowed = [expected['acked'].get(key)]
                    if expected['pending'] and expected['pending'][0] == key:
                        allowed.append(expected['pending'][1])
                    print(key, 'ok' if got in allowed else 'got %r, acknowledged %r' % (got, allowed))
                """)
        #expect(checker.status == 0, "\(checker.stderr)")
        let journal = try? FileManager.default.attributesOfItem(
            atPath: bus.store + "/io.github.latchkey.secret-service.d/secret-service.journal")[.size]
        #expect(
            checker.lines == (0..<8).map { "k\($0) ok" },
            "\(checker.text)\nwriter: \(writer.stderr)\njournal \(journal.map { "\($0)" } ?? "none") bytes\n\(bus.agentLog())"
        )
        let verify = try bus.providerAudit("verify")
        #expect(verify.status == 0, "the trail verifies: \(verify.text) \(verify.stderr)")
    }

    @Test("thousands of items are served, searched through the index, and read back after a restart")
    func manyItems() throws {
        let count = 3000 // 100,000 in `make stress` (latchkey-bench stress provider)
        let bus = try ProviderBus()
        let agent = try bus.startAgent()
        let fill = try bus.python(fillScript(count))
        #expect(fill.status == 0 && fill.lines == ["filled \(count)"], "\(fill.text) \(fill.stderr)")
        let check = """
            found = call(SERVICE, 'Service', 'SearchItems', '(a{ss})', ({'service': 'fill'},))
            print('found', len(found[0]), len(found[1]))
            print('one', len(call(SERVICE, 'Service', 'SearchItems', '(a{ss})', ({'service': 'fill', 'n': '1234'},))[0]))
            print('items', len(call(DEFAULT, 'org.freedesktop.DBus.Properties', 'Get', '(ss)', (S + 'Collection', 'Items'))[0]))
            """
        let before = try bus.python(pythonPrelude + check)
        #expect(before.lines == ["found \(count) 0", "one 1", "items \(count)"], "\(before.text) \(before.stderr)")
        #expect(try bus.run("secret-tool", ["lookup", "service", "fill", "n", "2345"]).text == "secret2345")
        #expect(kill(agent, SIGKILL) == 0)
        while try bus.ownerProcessID() == agent { Thread.sleep(forTimeInterval: 0.02) }
        try bus.startAgent()
        let after = try bus.python(pythonPrelude + check)
        #expect(after.lines == before.lines, "\(after.text) \(after.stderr)")
        #expect(try bus.run("secret-tool", ["lookup", "service", "fill", "n", "17"]).text == "secret17")
    }
}

/// Fills the login collection of the provider on `bus` with `count` items (attributes
/// `service fill` and `n NUMBER`, secret `secretNUMBER`) from one client; prints `filled COUNT`.
func fillScript(_ count: Int) -> String {
    pythonPrelude + """
        output, session = call(SERVICE, 'Service', 'OpenSession', '(sv)', ('plain', GLib.Variant('s', '')))
        filled = 0
        for number in range(\(count)):
            reply = call(DEFAULT, 'Collection', 'CreateItem', '(a{sv}(oayays)b)',
                         (item_properties('item %d' % number, {'service': 'fill', 'n': str(number)}),
                          (session, b'', b'secret%d' % number, 'text/plain'), False))
            filled += 0 if isinstance(reply, str) else 1
        print('filled', filled)
        """
}
