import Foundation
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("the Secret Service provider's durability", .sandboxed)
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
                import json, os, signal, threading, time
                output, session = call(SERVICE, 'Service', 'OpenSession', '(sv)', ('plain', GLib.Variant('s', '')))
                def killer():
                    time.sleep(\(delay))
                    os.kill(\(agent), signal.SIGKILL)
                threading.Thread(target=killer, daemon=True).start()
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
                            break
                        acked[key] = value
                    pending = None
                    count += 1
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
        #expect(checker.lines == (0..<8).map { "k\($0) ok" }, "\(checker.text)")
        let verify = try bus.run(
            try latchkeyPath(),
            [
                "--backend", "file", "--store-dir", bus.store, "--app", "io.github.latchkey.secret-service", "audit",
                "verify",
            ])
        #expect(verify.status == 0, "the trail verifies: \(verify.text) \(verify.stderr)")
    }
}
