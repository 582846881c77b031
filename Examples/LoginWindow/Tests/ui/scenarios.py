"""One scenario per item of the login-screen story (shared/LOGIN-SCREEN-STORY.txt),
and one per way a secret could leave the window. Each checks what the story
demands after every step, through AT-SPI."""
import os
import subprocess
import time

from harness import App, CheckFailed

PASSWORD = "correct horse"  # the test server's password for alice and bob
CANARY = "Qz7x-Wv4k-9Jm2-Rt5p"  # a password that must never leave the window


def fill(app, username, password):
    """Types as a person: the username, Return, the password."""
    app.type(username)
    app.expect("the username field shows %r" % username, lambda s: s.username.text == username)
    app.key("Return")
    app.expect("Return in the username field moves the focus to the password", lambda s: s.password.focused)
    app.type(password)
    app.expect("the password field holds %d characters" % len(password), lambda s: s.password.count == len(password))


def submit(app):
    app.key("Return")


def sign_in(app, username="alice"):
    fill(app, username, PASSWORD)
    app.expect("both fields make sense: the button is sensitive", lambda s: s.login.sensitive)
    submit(app)
    app.expect("signed in as %s" % username,
               lambda s: s.signed_in == app.texts["login.status.signedInAs"].replace("{account}", username) and s.login is None)


def idle(app):
    return lambda s: s.spinner is None and s.username.sensitive and s.password.sensitive and s.remember.sensitive


def item01(h):
    """The login button is insensitive until the input makes sense."""
    app = App(h, h.new_store())
    app.expect("at start the button is insensitive", lambda s: not s.login.sensitive)
    app.type("al ice")
    app.expect("the username field shows 'al ice'", lambda s: s.username.text == "al ice")
    app.stays("a username alone: insensitive", lambda s: not s.login.sensitive)
    app.key("Return")
    app.expect("the focus is in the password field", lambda s: s.password.focused)
    app.type(PASSWORD)
    app.expect("the password field holds its characters", lambda s: s.password.count == len(PASSWORD))
    app.stays("a username with a space in it does not make sense: insensitive", lambda s: not s.login.sensitive)
    app.click(app.screen().username)
    app.expect("the username field has the focus", lambda s: s.username.focused)
    app.key("ctrl+a")
    app.type("alice")
    app.expect("alice and a password make sense: sensitive", lambda s: s.username.text == "alice" and s.login.sensitive)
    return app


def item02(h):
    """Every change of either field re-derives whether the button is sensitive."""
    app = App(h, h.new_store())
    steps = [
        (lambda: app.type("a"), lambda s: s.username.text == "a", False),
        (lambda: app.key("Return"), lambda s: s.password.focused, False),
        (lambda: app.type("p"), lambda s: s.password.count == 1, True),
        (lambda: app.key("BackSpace"), lambda s: s.password.count == 0, False),
        (lambda: app.type("q"), lambda s: s.password.count == 1, True),
        (lambda: (app.click(app.screen().username), app.key("End", "BackSpace")), lambda s: s.username.text == "", False),
        (lambda: app.type("b"), lambda s: s.username.text == "b", True),
        (lambda: app.type(" c"), lambda s: s.username.text == "b c", False),
        (lambda: app.key("BackSpace", "BackSpace"), lambda s: s.username.text == "b", True),
    ]
    for number, (act, shown, sensitive) in enumerate(steps, 1):
        act()
        app.expect("step %d shows its edit" % number, shown)
        app.expect("step %d: the button is %s" % (number, "sensitive" if sensitive else "insensitive"),
                   lambda s: s.login.sensitive == sensitive)
        app.stays("step %d: and stays so" % number, lambda s: s.login.sensitive == sensitive, period=0.3)
    return app


def item03(h):
    """The button is insensitive initially, also when the username is prefilled."""
    store = h.new_store()
    app = App(h, store)
    app.expect("a fresh window: the username field has the focus", lambda s: s.username.focused and s.username.text == "")
    app.stays("a fresh window: the button is insensitive", lambda s: not s.login.sensitive, period=1.0)
    sign_in(app)
    app.close()
    app = App(h, store)
    app.expect("the next start prefills alice and focuses the password", lambda s: s.username.text == "alice" and s.password.focused)
    app.stays("prefilled, no password: the button is insensitive", lambda s: not s.login.sensitive, period=1.0)
    return app


def expect_cli(h, app, what, expected_status, *args):
    """Checks the vault through the latchkey CLI (exit 0: there, 1: not found). The window
    shows a state before the store has finished acting on it, so the check waits a while."""
    deadline = time.monotonic() + 10
    while True:
        status, _ = h.latchkey(app, *args)
        if status == expected_status:
            h.checks += 1
            return
        if time.monotonic() > deadline:
            raise CheckFailed("%s: latchkey %s exited %d, not %d" % (what, " ".join(args), status, expected_status))
        time.sleep(0.2)


def expect_audited(h, app, *wanted):
    """Waits until the audit trail holds every event in `wanted`; returns the events."""
    deadline = time.monotonic() + 10
    while True:
        events = h.audit_events(app)
        if all(event in events for event in wanted):
            h.checks += 1
            return events
        if time.monotonic() > deadline:
            raise CheckFailed("the audit trail lacks %s: %r" % (", ".join(e for e in wanted if e not in events), events))
        time.sleep(0.2)


def item04(h):
    """The button is insensitive whenever the login screen appears again (after signing out),
    and signing out wipes what the policy says."""
    shared = App(h, h.new_store(), policy="built-in:shared-device")
    sign_in(shared)
    expect_cli(h, shared, "shared device, signed in: the session is kept", 0, "session", "get", "access", "--account", "alice")
    shared.click(shared.screen().logout)
    shared.expect("shared device, signed out: no username kept, the button insensitive",
                  lambda s: s.login is not None and s.username.text == "" and not s.login.sensitive and s.username.focused)
    expect_cli(h, shared, "shared device, signed out: the session is wiped", 1, "session", "get", "access", "--account", "alice")
    expect_cli(h, shared, "shared device: no username remembered", 1, "username", "get")
    shared.close()

    app = App(h, h.new_store())
    sign_in(app)
    expect_cli(h, app, "default policy, signed in: the session is kept", 0, "session", "get", "access", "--account", "alice")
    app.expect("the sign-out button is shown", lambda s: s.logout is not None and s.logout.sensitive)
    app.click(app.screen().logout)
    app.expect("signed out: the login form is back", lambda s: s.login is not None and s.signed_in is None)
    app.stays("back on the screen: the button is insensitive, the password empty, alice remembered",
              lambda s: not s.login.sensitive and s.password.count == 0 and s.username.text == "alice")
    app.expect("the focus is in the password field", lambda s: s.password.focused)
    expect_cli(h, app, "default policy, signed out: the session is wiped", 1, "session", "get", "access", "--account", "alice")
    expect_cli(h, app, "default policy, signed out: the username is kept", 0, "username", "get")
    app.screenshot("login-window-signed-out-en", committed=True)
    app.type(PASSWORD)
    app.expect("typing makes it sensitive again", lambda s: s.login.sensitive)
    return app


def item05(h):
    """The password field is empty for the next attempt."""
    app = App(h, h.new_store())
    fill(app, "alice", "wrong horse")
    submit(app)
    app.expect("after invalid credentials the password is empty and the button insensitive",
               lambda s: s.password.count == 0 and not s.login.sensitive and s.message == app.texts["login.error.invalidCredentials"])
    app.type(PASSWORD)
    app.expect("the next attempt is typed into an empty field", lambda s: s.password.count == len(PASSWORD) and s.login.sensitive)
    submit(app)
    app.expect("signed in", lambda s: s.signed_in is not None)
    app.click(app.screen().logout)
    app.expect("after signing in and out the password is empty", lambda s: s.login is not None and s.password.count == 0)
    return app


def item06(h):
    """The button is insensitive while waiting for the server; more presses send nothing."""
    app = App(h, h.new_store())
    h.server.script({"answer": "invalid", "hold": True})
    before = len(h.server.requests)
    fill(app, "alice", "wrong horse")
    app.expect("ready: sensitive", lambda s: s.login.sensitive)
    app.key("Return", "Return")  # a second Return while the first is in flight
    app.expect("in flight: the button is insensitive", lambda s: s.spinner is not None and not s.login.sensitive)
    app.click(app.screen().login)
    app.key("Return")
    app.stays("still in flight: insensitive", lambda s: s.spinner is not None and not s.login.sensitive)
    if len(h.server.requests) - before != 1:
        raise CheckFailed("the server received %d requests, not 1" % (len(h.server.requests) - before))
    h.checks += 1
    h.server.release()
    app.expect("answered: the spinner is gone", idle(app))
    time.sleep(0.3)
    if len(h.server.requests) - before != 1:
        raise CheckFailed("the extra presses sent a request after all")
    h.checks += 1
    return app


def item07(h):
    """Clearing the password field makes the button insensitive."""
    app = App(h, h.new_store())
    fill(app, "alice", PASSWORD)
    app.expect("sensitive", lambda s: s.login.sensitive)
    app.key("ctrl+a", "BackSpace")
    app.expect("the user cleared the password: empty and insensitive", lambda s: s.password.count == 0 and not s.login.sensitive)
    app.type("x")
    app.expect("one character again: sensitive", lambda s: s.login.sensitive)
    return app


def item08(h):
    """A clear by code is not a keystroke, and still makes the button insensitive."""
    app = App(h, h.new_store())
    fill(app, "alice", PASSWORD)
    app.expect("sensitive", lambda s: s.login.sensitive)
    app.key("Escape")  # the window clears the field by code and tells the state so
    app.expect("cleared by code (Escape): empty and insensitive", lambda s: s.password.count == 0 and not s.login.sensitive)
    app.type("wrong horse")
    app.expect("typed again: sensitive", lambda s: s.login.sensitive)
    submit(app)
    app.expect("cleared by code after invalid credentials: empty and insensitive",
               lambda s: s.spinner is None and s.password.count == 0 and not s.login.sensitive)
    return app


def item09(h):
    """The password is cleared after the answer arrives, never at submit."""
    app = App(h, h.new_store())
    h.server.script({"answer": "invalid", "hold": True})
    fill(app, "alice", "wrong horse")
    submit(app)
    app.expect("in flight", lambda s: s.spinner is not None)
    app.stays("while waiting the password field keeps its characters", lambda s: s.password.count == len("wrong horse"))
    h.server.release()
    app.expect("after the answer the password is empty", lambda s: s.spinner is None and s.password.count == 0)
    return app


def item10(h):
    """The password is kept after a server or network problem (and after a rate limit)."""
    app = App(h, h.new_store(), timeout=2.0)
    fill(app, "alice", PASSWORD)
    cases = [
        ({"answer": "error"}, "login.error.serverError", True),
        ({"answer": "drop"}, "login.error.networkUnreachable", True),
        ({"answer": "success", "delay": 3.5}, "login.error.timedOut", True),
        ({"answer": "malformed"}, "login.error.malformedResponse", True),
        ({"answer": "limited", "retry_after": 2}, "login.error.rateLimited", False),
    ]
    for step, key, sensitive in cases:
        h.server.script(step)
        app.expect("ready to try again", lambda s: s.login.sensitive, within=10)
        submit(app)
        app.expect("%s: its message shows" % key, lambda s: s.spinner is None and s.message == app.texts[key])
        app.expect("%s: the password is kept" % key, lambda s: s.password.count == len(PASSWORD))
        app.expect("%s: the button is %s" % (key, "sensitive" if sensitive else "insensitive until the limit ends"),
                   lambda s: s.login.sensitive == sensitive)
    app.expect("the rate limit counts down", lambda s: s.countdown is not None)
    app.expect("the rate limit ended: sensitive with the kept password", lambda s: s.login.sensitive and s.countdown is None, within=6)
    app.close()
    unreachable = App(h, h.new_store(), server_url="http://127.0.0.1:%d/login" % h.closed_port)
    fill(unreachable, "alice", PASSWORD)
    submit(unreachable)
    unreachable.expect("network unreachable: its message shows, the password is kept, sensitive",
                       lambda s: s.message == unreachable.texts["login.error.networkUnreachable"]
                       and s.password.count == len(PASSWORD) and s.login.sensitive)
    return unreachable


def item11(h):
    """The last username is remembered; opting out erases it at once."""
    store = h.new_store()
    app = App(h, store)
    app.expect("remember is on by default", lambda s: s.remember.checked)
    sign_in(app)
    app.close()
    expect_audited(h, app, "username.remembered")
    app = App(h, store)
    app.expect("the next start shows alice", lambda s: s.username.text == "alice" and s.remember.checked)
    app.click(app.screen().remember)
    app.expect("remember is off", lambda s: not s.remember.checked)
    deadline = time.monotonic() + 5
    while h.latchkey(app, "username", "get")[0] != 1:
        if time.monotonic() > deadline:
            raise CheckFailed("the remembered username is still in the store after opting out")
        time.sleep(0.1)
    h.checks += 1
    expect_audited(h, app, "remember.disabled")
    app.close()
    app = App(h, store)
    app.expect("after opting out the next start is empty, remember off",
               lambda s: s.username.text == "" and not s.remember.checked and s.username.focused)
    sign_in(app, "bob")
    app.close()
    app = App(h, store)
    app.expect("while opted out, bob was not remembered", lambda s: s.username.text == "" and not s.remember.checked)
    return app


def item12(h):
    """The spinner shows exactly while a request is in flight, on every path."""
    app = App(h, h.new_store(), timeout=30.0)
    paths = [
        ("success", {"answer": "success", "hold": True}),
        ("invalid credentials", {"answer": "invalid", "hold": True}),
        ("account locked", {"answer": "locked", "hold": True}),
        ("rate limited", {"answer": "limited", "retry_after": 1, "hold": True}),
        ("server error", {"answer": "error", "hold": True}),
        ("malformed answer", {"answer": "malformed", "hold": True}),
        ("dropped connection", {"answer": "drop", "hold": True}),
    ]
    app.stays("before any request: no spinner", lambda s: s.spinner is None, period=0.3)
    for name, step in paths:
        screen = app.screen()
        if screen.username.text == "":
            fill(app, "alice", PASSWORD)
        elif screen.password.count == 0:
            app.click(screen.password)
            app.expect("password focused", lambda s: s.password.focused)
            app.type(PASSWORD)
        app.expect("%s: ready, no spinner" % name, lambda s: s.login.sensitive and s.spinner is None, within=10)
        h.server.script(step)
        app.click(app.screen().login)
        app.expect("%s: the spinner shows while in flight" % name,
                   lambda s: s.spinner is not None and s.spinner.visible and s.label("login.progress.loggingIn") is not None)
        if step.get("hold"):
            app.stays("%s: and keeps showing until the answer" % name, lambda s: s.spinner is not None, period=0.3)
            h.server.release()
        app.expect("%s: the answer hides the spinner" % name,
                   lambda s: s.spinner is None and s.label("login.progress.loggingIn") is None, within=8)
        if name == "success":
            app.click(app.screen().logout)
            app.expect("signed out", lambda s: s.login is not None)
    app.close()
    # The timeout path: a window that waits 2 s for an answer that takes 3.5 s.
    app = App(h, h.new_store(), timeout=2.0)
    fill(app, "alice", PASSWORD)
    h.server.script({"answer": "success", "delay": 3.5})
    submit(app)
    app.expect("timeout: the spinner shows while in flight", lambda s: s.spinner is not None)
    app.expect("timeout: the timeout hides the spinner",
               lambda s: s.spinner is None and s.message == app.texts["login.error.timedOut"], within=8)
    return app


def item13(h):
    """Each failure class shows its own inline message, with an icon, and no dialog."""
    app = App(h, h.new_store())
    fill(app, "alice", PASSWORD)
    classes = [
        ({"answer": "locked"}, "login.error.accountLocked"),
        ({"answer": "error"}, "login.error.serverError"),
        ({"answer": "malformed"}, "login.error.malformedResponse"),
        ({"answer": "limited", "retry_after": 1}, "login.error.rateLimited"),
        ({"answer": "invalid"}, "login.error.invalidCredentials"),
    ]
    for step, key in classes:
        screen = app.expect("ready", lambda s: s.spinner is None and (s.login.sensitive or s.password.count == 0), within=6)
        if screen.password.count == 0:
            app.click(screen.password)
            app.type(PASSWORD)
            app.expect("ready", lambda s: s.login.sensitive)
        h.server.script(step)
        submit(app)
        screen = app.expect("%s: the inline message shows" % key, lambda s: s.message == app.texts[key])
        label = [n for n in screen.role("label") if n.name == app.texts[key]][0]
        if not any(n.role == "image" and n.visible for n in screen.nodes):
            raise CheckFailed("%s: no icon beside the message" % key)
        if screen.windows != 1:
            raise CheckFailed("%s: a dialog opened" % key)
        inside(screen.frame, label, key)
        h.checks += 3
    app.close()

    # A session the store could not keep: the store directory is replaced by a file.
    store = h.new_store()
    broken = App(h, store, backend="file")
    broken.expect("appeared", lambda s: s.username.focused)
    os.rename(store, store + ".moved")
    open(store, "w").close()
    fill(broken, "alice", PASSWORD)
    submit(broken)
    broken.expect("signed in, and told the session was not saved",
                  lambda s: s.signed_in is not None and s.message == broken.texts["login.error.sessionNotSaved"])
    return broken


def inside(frame, node, what):
    """Fails unless `node` lies wholly inside the window (nothing cut off)."""
    fx, fy, fw, fh = frame.extents
    x, y, w, hgt = node.extents
    if w <= 0 or hgt <= 0 or x < 0 or y < 0 or x + w > fw or y + hgt > fh:
        raise CheckFailed("%s: %r is cut off by the window %r" % (what, node, frame.extents))


def item14(h):
    """The fields cannot be edited while waiting, and can again after every answer."""
    app = App(h, h.new_store())
    h.server.script({"answer": "error", "hold": True})
    fill(app, "alice", PASSWORD)
    submit(app)
    app.expect("in flight: username, password and remember are insensitive",
               lambda s: s.spinner is not None and not s.username.sensitive and not s.password.sensitive and not s.remember.sensitive)
    app.type("zzz")
    app.stays("typing while in flight changes nothing",
              lambda s: s.username.text == "alice" and s.password.count == len(PASSWORD) and not s.username.sensitive)
    h.server.release()
    app.expect("after a server error the fields are editable again", idle(app))
    h.server.script({"answer": "success", "hold": True})
    submit(app)
    app.expect("in flight again: insensitive", lambda s: s.spinner is not None and not s.username.sensitive)
    h.server.release()
    app.expect("signed in", lambda s: s.signed_in is not None)
    app.click(app.screen().logout)
    app.expect("after signing out the fields are editable again", lambda s: s.login is not None and idle(app)(s))
    return app


def item15(h):
    """English, German and Simplified Chinese: right-aligned labels, nothing cut off."""
    last = None
    for lang, tag in (("en_US.UTF-8", "en"), ("de_DE.UTF-8", "de"), ("zh_CN.UTF-8", "zh")):
        app = App(h, h.new_store(), lang=lang)
        app.expect("%s: the texts come from LoginFlow's table" % tag,
                   lambda s: s.label("login.label.username") and s.label("login.label.password")
                   and s.remember.name == app.texts["login.label.rememberUsername"] and s.login is not None
                   and s.frame.name == app.texts["login.button.logIn"])
        app.expect("%s: labels right-aligned beside their fields, nothing cut off" % tag, lambda s: not layout_problems(s))
        h.server.script({"answer": "locked"})
        fill(app, "alice", PASSWORD)
        submit(app)
        app.expect("%s: the longest message shows" % tag, lambda s: s.message == app.texts["login.error.accountLocked"])
        app.expect("%s: the window grew to show it whole" % tag, lambda s: not layout_problems(s))
        app.screenshot("item-15-%s" % tag)
        if tag == "de":
            app.expect("de: the cursor is back in the password field", lambda s: s.password.focused)
            app.screenshot("login-window-error-de", committed=True)
        if tag == "zh":
            app.type(PASSWORD)
            app.expect("zh: typed again", lambda s: s.login.sensitive)
            submit(app)
            app.expect("zh: the signed-in view speaks Chinese",
                       lambda s: s.signed_in == app.texts["login.status.signedInAs"].replace("{account}", "alice")
                       and s.logout is not None and s.logout.focused and s.message is None)
            app.screenshot("login-window-signed-in-zh", committed=True)
        if last:
            last.close()
        last = app
    return last


def layout_problems(screen):
    """What is wrong with the layout: labels not right-aligned, running into fields, cut off."""
    problems = []
    user_label, pass_label = screen.label("login.label.username"), screen.label("login.label.password")
    user, password = screen.username, screen.password
    right = lambda n: n.extents[0] + n.extents[2]
    if abs(right(user_label) - right(pass_label)) > 1:
        problems.append("the labels are not right-aligned")
    if right(user_label) > user.extents[0] or right(pass_label) > password.extents[0]:
        problems.append("a label runs into its field")
    for node in screen.nodes:
        if node.role in ("label", "text", "password text", "push button", "check box", "image") and node.extents:
            try:
                inside(screen.frame, node, "")
            except CheckFailed as cut:
                problems.append(str(cut))
    return problems


def item16(h):
    """Return moves from the username to the password and submits only when possible;
    a window too small for the content scrolls to the focused field."""
    app = App(h, h.new_store())
    before = len(h.server.requests)
    app.type("alice")
    app.expect("typed", lambda s: s.username.text == "alice")
    app.key("Return")
    app.expect("Return in the username field focuses the password", lambda s: s.password.focused)
    app.key("Return")
    app.stays("Return in an empty password field sends nothing", lambda s: s.spinner is None and s.password.focused)
    if len(h.server.requests) != before:
        raise CheckFailed("Return with an empty password sent a request")
    h.checks += 1
    x, y, width, height = app.geometry()
    app.resize(width, 70)
    app.expect("the window is small", lambda s: s.frame.extents[3] <= 80)
    app.click(app.screen().username)
    app.expect("the username field has the focus", lambda s: s.username.focused)
    app.key("Return")
    screen = app.expect("the focused password field is scrolled into view",
                        lambda s: s.password.focused and s.password.extents[1] >= 0
                        and s.password.extents[1] + s.password.extents[3] <= s.frame.extents[3])
    h.server.script({"answer": "invalid"})
    app.type("wrong horse")
    app.expect("typed", lambda s: s.password.count == len("wrong horse"))
    app.key("Return")
    app.expect("Return in the password field submits when possible", lambda s: len(h.server.requests) == before + 1)
    app.resize(width, height)
    app.expect("answered", lambda s: s.message is not None)
    return app


def secret_session(h, store):
    """A session that types the canary password and sends it once; returns the app."""
    app = App(h, store)
    h.server.script({"answer": "invalid", "hold": True})
    fill(app, "carol", CANARY)
    submit(app)
    app.expect("in flight", lambda s: s.spinner is not None)
    return app


def secret_argv_env(h):
    """The password is in neither the argv nor the environment of the window's process."""
    app = secret_session(h, h.new_store())
    for part in ("cmdline", "environ"):
        data = open("/proc/%d/%s" % (app.pid, part), "rb").read()
        if CANARY.encode() in data:
            raise CheckFailed("the password is in /proc/%d/%s" % (app.pid, part))
        h.checks += 1
    h.server.release()
    app.expect("answered", lambda s: s.spinner is None)
    return app


def secret_log(h):
    """No log line of the window holds the password (a full session, including the store failing)."""
    store = h.new_store()
    app = secret_session(h, store)
    h.server.release()
    app.expect("answered", lambda s: s.spinner is None)
    app.type(CANARY)
    h.server.script({"answer": "success"})
    os.rename(store, store + ".moved")
    open(store, "w").close()  # the store fails, so the window logs
    submit(app)
    app.expect("signed in, session not saved", lambda s: s.signed_in is not None)
    status = app.close()
    log = app.log_text()
    if CANARY.encode() in log:
        raise CheckFailed("the password is in the window's log")
    if b"credential store" not in log:
        raise CheckFailed("the store failure was not logged, so the log check proves nothing")
    h.checks += 2
    return app


def secret_audit(h):
    """The audit trail records every credential event and holds no password or username."""
    store = h.new_store()
    app = secret_session(h, store)
    h.server.release()
    app.expect("answered", lambda s: s.spinner is None)
    app.type(CANARY)
    h.server.script({"answer": "success"})
    submit(app)
    app.expect("signed in", lambda s: s.signed_in is not None)
    app.click(app.screen().logout)
    app.expect("signed out", lambda s: s.login is not None)
    expect_audited(h, app, "username.remembered", "session.saved", "logout")
    status, shown = h.latchkey(app, "--json", "audit", "show")
    if CANARY in shown or "carol" in shown:
        raise CheckFailed("the audit trail shows the password or the username")
    for root, _, files in os.walk(store):
        for name in files:
            if CANARY.encode() in open(os.path.join(root, name), "rb").read():
                raise CheckFailed("the password is in %s" % name)
    h.checks += 3
    return app


def secret_accessibility(h):
    """The password entry exposes no text to assistive technology; no node holds the password."""
    app = App(h, h.new_store())
    fill(app, "carol", CANARY)
    screen = app.screen()
    entry = screen.password
    if entry.count != len(CANARY) or any(c.isalnum() for c in (entry.text or "")):
        raise CheckFailed("the password entry exposes %r" % entry.text)
    pieces = {CANARY[i:i + 4] for i in range(len(CANARY) - 3)}
    for node in screen.nodes:
        for value in (node.name, node.description, node.text or ""):
            if any(piece in value for piece in pieces):
                raise CheckFailed("%r exposes part of the password" % node)
    h.checks += 2
    return app


def secret_screenshot(h):
    """A screenshot shows the password masked: two different passwords of one length look the same."""
    app = App(h, h.new_store())
    fill(app, "carol", CANARY)
    time.sleep(0.3)
    first = app.screenshot("secret-screenshot-canary")
    app.key("ctrl+a", "BackSpace")
    app.expect("cleared", lambda s: s.password.count == 0)
    time.sleep(0.3)
    empty = app.screenshot("secret-screenshot-empty")
    other = "X" * len(CANARY)
    app.type(other)
    app.expect("typed", lambda s: s.password.count == len(other))
    time.sleep(0.3)
    second = app.screenshot("secret-screenshot-other")
    if differing_pixels(first, second) != 0:
        raise CheckFailed("two passwords of the same length look different on screen")
    if differing_pixels(first, empty) == 0:
        raise CheckFailed("the screenshot shows no mask at all, so the comparison proves nothing")
    h.checks += 2
    return app


def differing_pixels(a, b):
    result = subprocess.run(["compare", "-metric", "AE", a, b, "null:"], capture_output=True, text=True)
    return int(float(result.stderr.split()[0]))


SCENARIOS = [
    ("01", "the button is insensitive until the input makes sense", item01),
    ("02", "every edit of either field re-derives the button", item02),
    ("03", "the button is insensitive initially", item03),
    ("04", "insensitive when the screen appears again; sign-out wipes per policy", item04),
    ("05", "the password field is empty for the next attempt", item05),
    ("06", "insensitive while waiting; more presses send nothing", item06),
    ("07", "clearing the password makes the button insensitive", item07),
    ("08", "a clear by code is not a keystroke, and still disables", item08),
    ("09", "the password is cleared after the answer, not at submit", item09),
    ("10", "the password is kept after server and network problems", item10),
    ("11", "the username is remembered; opting out erases it at once", item11),
    ("12", "the spinner shows exactly while in flight, on every path", item12),
    ("13", "one inline message per failure class, no dialog", item13),
    ("14", "the fields are insensitive while waiting", item14),
    ("15", "three languages, right-aligned labels, nothing cut off", item15),
    ("16", "Return moves on and submits; a small window scrolls", item16),
    ("S1", "the password is not in argv or the environment", secret_argv_env),
    ("S2", "the password is not in a log line", secret_log),
    ("S3", "the audit trail records the events, holds no secret", secret_audit),
    ("S4", "the accessibility tree exposes no password", secret_accessibility),
    ("S5", "screenshots show the password masked", secret_screenshot),
]
