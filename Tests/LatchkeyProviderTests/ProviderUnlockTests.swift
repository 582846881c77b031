import Foundation
import LatchkeyTestSupport
import Testing

@Suite("the Secret Service provider's passphrase vault, prompts and latchkey unlock", .sandboxed)
struct ProviderUnlockTests {
    /// A policy whose file vault's key is a passphrase, with a 2 s prompt deadline.
    private static let policy = """
        {"version": 1, "name": "passphrase-provider", "file": {"keySource": "passphrase"},
         "secretService": {"unlockTimeoutSeconds": 2}}
        """

    @Test(
        "a passphrase vault starts locked; Unlock's prompt is completed by latchkey unlock, dismissed, or timed out; Lock forgets the key"
    )
    func promptsAndUnlock() throws {
        let bus = try ProviderBus(policy: Self.policy)
        try bus.startAgent()
        let latchkey = try latchkeyPath()
        let run = try bus.python(
            pythonPrelude + """
                import subprocess, time
                LOGIN = '/org/freedesktop/secrets/collection/login'
                get = lambda path, interface, name: call(path, 'org.freedesktop.DBus.Properties', 'Get', '(ss)', (S + interface, name))[0]
                completed = {}
                bus.signal_subscribe(None, S + 'Prompt', 'Completed', None, None, Gio.DBusSignalFlags.NONE,
                                     lambda c, sender, path, i, n, p: completed.__setitem__(path, p.unpack()))
                def wait(prompt):
                    end = time.time() + 10
                    while prompt not in completed and time.time() < end:
                        GLib.MainContext.default().iteration(False) or time.sleep(0.01)
                    return completed.get(prompt)
                def unlock(passphrase):
                    return subprocess.run(['\(latchkey)', 'unlock', '--passphrase-fd', '0'], input=passphrase.encode(),
                                          capture_output=True).returncode
                output, session = call(SERVICE, 'Service', 'OpenSession', '(sv)', ('plain', GLib.Variant('s', '')))
                print('locked', get(LOGIN, 'Collection', 'Locked'))
                print('get', call(LOGIN + '/1', 'Item', 'GetSecret', '(o)', (session,)))
                print('create', call(LOGIN, 'Collection', 'CreateItem', '(a{sv}(oayays)b)',
                                     (item_properties('x', {'k': 'v'}), (session, b'', b'v', 't'), False)))
                print('session', call('/org/freedesktop/secrets/aliases/session', 'Collection', 'CreateItem',
                      '(a{sv}(oayays)b)', (item_properties('x', {'k': 'v'}), (session, b'', b'v', 't'), False)))
                unlocked, prompt = call(SERVICE, 'Service', 'Unlock', '(ao)', ([LOGIN],))
                print('unlock', unlocked, prompt != '/')
                call(prompt, 'Prompt', 'Prompt', '(s)', ('',))
                print('latchkey unlock', unlock('correct horse'))
                print('completed', wait(prompt))
                print('locked', get(LOGIN, 'Collection', 'Locked'))
                item, _ = call(LOGIN, 'Collection', 'CreateItem', '(a{sv}(oayays)b)',
                               (item_properties('x', {'k': 'v'}), (session, b'', b'kept', 't'), False))
                print('item', item)
                print('lock', call(SERVICE, 'Service', 'Lock', '(ao)', ([LOGIN],)))
                print('get', call(item, 'Item', 'GetSecret', '(o)', (session,)))
                print('search', call(SERVICE, 'Service', 'SearchItems', '(a{ss})', ({'k': 'v'},)))
                unlocked, prompt = call(SERVICE, 'Service', 'Unlock', '(ao)', ([item],))
                call(prompt, 'Prompt', 'Prompt', '(s)', ('',))
                print('wrong', unlock('wrong'))
                call(prompt, 'Prompt', 'Dismiss')
                print('dismissed', wait(prompt))
                unlocked, prompt = call(SERVICE, 'Service', 'Unlock', '(ao)', ([item],))
                call(prompt, 'Prompt', 'Prompt', '(s)', ('',))
                print('deadline', wait(prompt))
                unlocked, prompt = call(SERVICE, 'Service', 'Unlock', '(ao)', ([item],))
                call(prompt, 'Prompt', 'Prompt', '(s)', ('',))
                print('latchkey unlock', unlock('correct horse'))
                print('completed', wait(prompt))
                print('get', bytes(call(item, 'Item', 'GetSecret', '(o)', (session,))[0][2]).decode())
                print('latchkey lock', subprocess.run(['\(latchkey)', 'lock'], capture_output=True).returncode)
                end = time.time() + 10
                while get(LOGIN, 'Collection', 'Locked') is not True and time.time() < end:
                    time.sleep(0.02)
                print('get', call(item, 'Item', 'GetSecret', '(o)', (session,)))
                """)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.lines == [
                "locked True", "get error org.freedesktop.Secret.Error.IsLocked",
                "create error org.freedesktop.Secret.Error.IsLocked",
                "session error org.freedesktop.Secret.Error.IsLocked", "unlock [] True", "latchkey unlock 0",
                "completed (False, ['/org/freedesktop/secrets/collection/login'])", "locked False",
                "item /org/freedesktop/secrets/collection/login/1",
                "lock (['/org/freedesktop/secrets/collection/login'], '/')",
                "get error org.freedesktop.Secret.Error.IsLocked",
                "search ([], ['/org/freedesktop/secrets/collection/login/1'])", "wrong 77",
                "dismissed (True, [])", "deadline (True, [])", "latchkey unlock 0",
                "completed (False, ['/org/freedesktop/secrets/collection/login/1'])", "get kept",
                "latchkey lock 0", "get error org.freedesktop.Secret.Error.IsLocked",
            ], "\(run.text)\n\(bus.agentLog())")
    }

    @Test("secret-tool lookup on the locked vault waits on its prompt until latchkey unlock, then prints the secret")
    func secretToolWaitsForUnlock() throws {
        let bus = try ProviderBus(policy: Self.policy)
        try bus.startAgent()
        let latchkey = try latchkeyPath()
        let first = try bus.run(latchkey, ["unlock", "--passphrase-fd", "0"], input: "pass phrase")
        #expect(first.status == 0 && first.text.contains("completed 0 prompts"), "\(first.text) \(first.stderr)")
        let store = try bus.run("secret-tool", ["store", "--label=Locked", "service", "locked"], input: "behind")
        #expect(store.status == 0, "\(store.stderr)")
        #expect(try bus.run(latchkey, ["lock"]).status == 0)
        let lookup = try Child("/usr/bin/secret-tool", ["lookup", "service", "locked"], environment: bus.environment)
        let end = Date(timeIntervalSinceNow: 20)
        while !bus.agentLog().contains("a client waits for the vault to be unlocked") && Date() < end {
            Thread.sleep(forTimeInterval: 0.05)
        }
        let unlock = try bus.run(latchkey, ["unlock", "--passphrase-fd", "0"], input: "pass phrase")
        #expect(unlock.status == 0 && unlock.text.contains("completed 1 prompt"), "\(unlock.text) \(unlock.stderr)")
        let result = try lookup.finish()
        #expect(result.status == 0 && result.text == "behind", "\(result.stderr) \(bus.agentLog())")
    }

    @Test("the bus answers other calls while a wrong passphrase's key derivation runs")
    func answersWhileDeriving() throws {
        let bus = try ProviderBus(policy: Self.policy)
        try bus.startAgent()
        let run = try bus.python(
            pythonPrelude + """
                LATCHKEY = 'io.github.latchkey.SecretService'
                output, session = call(SERVICE, 'Service', 'OpenSession', '(sv)', ('plain', GLib.Variant('s', '')))
                passphrase = lambda text: GLib.Variant('((oayays))', ((session, b'', text, 'text/plain'),))
                # The first unlock makes the vault with its passphrase; then it is locked.
                print('made', bus.call_sync('org.freedesktop.secrets', SERVICE, LATCHKEY, 'Unlock', passphrase(b'right one'),
                                            None, Gio.DBusCallFlags.NONE, 60000, None).unpack())
                call(SERVICE, 'Service', 'Lock', '(ao)', (['/org/freedesktop/secrets/collection/login'],))
                order = []
                loop = GLib.MainLoop()
                def answered(name):
                    def callback(connection, result):
                        order.append((name, connection.call_finish(result).unpack()))
                        if len(order) == 3:
                            loop.quit()
                    return callback
                bus.call('org.freedesktop.secrets', SERVICE, LATCHKEY, 'Unlock', passphrase(b'wrong one'), None,
                         Gio.DBusCallFlags.NONE, 60000, None, answered('unlock'))
                bus.call('org.freedesktop.secrets', SERVICE, 'org.freedesktop.DBus.Properties', 'Get',
                         GLib.Variant('(ss)', (S + 'Service', 'Collections')), None, Gio.DBusCallFlags.NONE, 60000, None,
                         answered('collections'))
                bus.call('org.freedesktop.secrets', SERVICE, S + 'Service', 'SearchItems', GLib.Variant('(a{ss})', ({},)),
                         None, Gio.DBusCallFlags.NONE, 60000, None, answered('search'))
                loop.run()
                print(' '.join(name for name, _ in order))
                print('unlock', dict(order)['unlock'])
                """)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.lines == ["made (True, [])", "collections search unlock", "unlock (False, [])"],
            "\(run.text)\n\(bus.agentLog())")
    }

    @Test(
        "under agent.unlockCacheSeconds 0 the vault locks again once the clients that waited made their calls, which succeed"
    )
    func lockAtOnce() throws {
        let bus = try ProviderBus(
            policy: """
                {"version": 1, "name": "lock-at-once", "file": {"keySource": "passphrase"},
                 "agent": {"unlockCacheSeconds": 0}, "secretService": {"unlockTimeoutSeconds": 20}}
                """)
        try bus.startAgent()
        let latchkey = try latchkeyPath()
        let made = try bus.run(latchkey, ["unlock", "--passphrase-fd", "0"], input: "pass phrase")
        #expect(made.status == 0, "\(made.text) \(made.stderr)")
        let locked = """
            import time
            get = lambda: call('/org/freedesktop/secrets/collection/login', 'org.freedesktop.DBus.Properties', 'Get',
                               '(ss)', (S + 'Collection', 'Locked'))[0]
            end = time.time() + 10
            while get() is not True and time.time() < end:
                time.sleep(0.02)
            print('locked', get())
            """
        #expect(try bus.python(pythonPrelude + locked).lines == ["locked True"], "locked at once: \(bus.agentLog())")
        /// Runs `arguments` of secret-tool, which waits on its prompt, and completes the prompt with latchkey unlock.
        func throughPrompt(_ arguments: [String], input: String = "") throws -> Run {
            let client = try Child(
                "/bin/sh", ["-c", "printf %s \"$0\" | /usr/bin/secret-tool \"$@\"", input] + arguments,
                environment: bus.environment)
            let waits = bus.agentLog().components(separatedBy: "a client waits for the vault").count
            let end = Date(timeIntervalSinceNow: 20)
            while bus.agentLog().components(separatedBy: "a client waits for the vault").count == waits && Date() < end
            {
                Thread.sleep(forTimeInterval: 0.05)
            }
            let unlock = try bus.run(latchkey, ["unlock", "--passphrase-fd", "0"], input: "pass phrase")
            #expect(unlock.status == 0 && unlock.text.contains("completed 1 prompt"), "\(unlock.text) \(unlock.stderr)")
            return try client.finish()
        }
        let store = try throughPrompt(["store", "--label=Zero", "service", "zero"], input: "held briefly")
        #expect(store.status == 0, "the write after the prompt is made: \(store.stderr) \(bus.agentLog())")
        #expect(try bus.python(pythonPrelude + locked).lines == ["locked True"], "locked after the write")
        let lookup = try throughPrompt(["lookup", "service", "zero"])
        #expect(lookup.status == 0 && lookup.text == "held briefly", "\(lookup.stderr) \(bus.agentLog())")
        #expect(try bus.python(pythonPrelude + locked).lines == ["locked True"], "locked after the read")
    }

    @Test("latchkey unlock on a terminal asks for the passphrase without echo, as a pinentry would")
    func unlockOnTerminal() throws {
        let bus = try ProviderBus(policy: Self.policy)
        try bus.startAgent()
        let latchkey = try latchkeyPath()
        let run = try bus.python(
            pythonPrelude + """
                import os, pty
                LOGIN = '/org/freedesktop/secrets/collection/login'
                get = lambda: call(LOGIN, 'org.freedesktop.DBus.Properties', 'Get', '(ss)', (S + 'Collection', 'Locked'))[0]
                print('locked', get())
                pid, fd = pty.fork()
                if pid == 0:
                    os.execv('\(latchkey)', ['\(latchkey)', 'unlock'])
                shown = b''
                while b'Passphrase' not in shown:
                    shown += os.read(fd, 1024)
                os.write(fd, b'typed secret\\n')
                rest = b''
                while True:
                    try:
                        chunk = os.read(fd, 1024)
                    except OSError:
                        break
                    if not chunk:
                        break
                    rest += chunk
                _, status = os.waitpid(pid, 0)
                print('status', os.WEXITSTATUS(status))
                print('echoed', b'typed secret' in shown + rest)
                print('said', b'unlocked the Secret Service provider' in rest)
                print('locked', get())
                """)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.lines == ["locked True", "status 0", "echoed False", "said True", "locked False"],
            "\(run.text)\n\(bus.agentLog())")
    }
}
