"""Drives the login window as a person would (xdotool keys and clicks) and reads
it as a screen reader would (AT-SPI), under Xvfb on a private D-Bus session.

Every check reads widget state through AT-SPI: text, sensitive, focused,
visible, checked, and the extents of the widgets in the window.
"""
import json
import os
import signal
import socket
import subprocess
import time

import gi

gi.require_version("Atspi", "2.0")
from gi.repository import Atspi  # noqa: E402

import pyatspi  # noqa: E402

# The README's screenshots, committed (the others go to the git-ignored output directory).
DOCS_SCREENSHOTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "docs", "screenshots")

# How long a state may take to show after a step, and how long a state that
# must not change is watched.
SETTLE = 6.0
STAYS = 0.6


class CheckFailed(AssertionError):
    pass


class Node:
    """One accessible object, read once."""

    def __init__(self, accessible):
        self.role = accessible.getRoleName()
        self.name = accessible.name or ""
        self.description = accessible.description or ""
        states = accessible.getState()
        self.sensitive = states.contains(pyatspi.STATE_SENSITIVE)
        self.focused = states.contains(pyatspi.STATE_FOCUSED)
        self.visible = states.contains(pyatspi.STATE_VISIBLE)
        self.checked = states.contains(pyatspi.STATE_CHECKED)
        self.text = None
        self.count = None
        try:
            text = accessible.queryText()
            self.count = text.characterCount
            self.text = text.getText(0, self.count)
        except NotImplementedError:
            pass
        self.extents = None
        try:
            e = accessible.queryComponent().getExtents(pyatspi.WINDOW_COORDS)
            self.extents = (e.x, e.y, e.width, e.height)
        except NotImplementedError:
            pass

    def __repr__(self):
        flags = "".join(c for c, on in (("S", self.sensitive), ("F", self.focused), ("V", self.visible), ("C", self.checked)) if on)
        return "%s %r text=%r [%s] %s" % (self.role, self.name, self.text, flags, self.extents)


class Screen:
    """What AT-SPI shows of the window at one moment."""

    def __init__(self, app):
        self.nodes = []
        self.texts = app.texts
        frames = [c for c in _children(app.accessible) if c.getRoleName() in ("frame", "window", "dialog")]
        self.windows = len(frames)
        for frame in frames:
            self._walk(frame)
        self.frame = Node(frames[0]) if frames else None

    def _walk(self, accessible):
        self.nodes.append(Node(accessible))
        for child in _children(accessible):
            self._walk(child)

    def role(self, *roles):
        return [n for n in self.nodes if n.role in roles]

    def one(self, *roles, name=None):
        found = [n for n in self.role(*roles) if name is None or n.name == name]
        return found[0] if found else None

    @property
    def username(self):
        return self.one("text", "entry")

    @property
    def password(self):
        return self.one("password text")

    @property
    def remember(self):
        return self.one("check box")

    @property
    def login(self):
        return self.one("push button", name=self.texts["login.button.logIn"])

    @property
    def logout(self):
        return self.one("push button", name=self.texts["login.button.logOut"])

    @property
    def spinner(self):
        found = [n for n in self.nodes if n.role in ("spinner", "progress bar", "animation") or n.name == "GtkSpinner"]
        return found[0] if found else None

    def label(self, key):
        return self.one("label", name=self.texts[key])

    @property
    def message(self):
        keys = [k for k in self.texts if k.startswith("login.error.")]
        shown = [n for n in self.role("label") if n.name in [self.texts[k] for k in keys]]
        return shown[0].name if shown else None

    @property
    def countdown(self):
        prefix = self.texts["login.progress.retryCountdown"].split("{seconds}")[0]
        shown = [n for n in self.role("label") if n.name.startswith(prefix) and n.name != prefix]
        return shown[0].name if shown else None

    @property
    def signed_in(self):
        prefix = self.texts["login.status.signedInAs"].split("{account}")[0]
        shown = [n for n in self.role("label") if n.name.startswith(prefix) and n.name != prefix]
        return shown[0].name if shown else None

    def describe(self):
        return "\n".join("      " + repr(n) for n in self.nodes if n.role not in ("filler", "scroll bar", "panel"))


def _children(accessible):
    return [accessible.getChildAtIndex(i) for i in range(accessible.childCount)]


class App:
    """One run of the login window: a process, its AT-SPI tree and its X window."""

    def __init__(self, harness, store, lang="en_US.UTF-8", policy=None, backend="secret-service", timeout=8.0,
                 server_url=None):
        self.harness = harness
        self.store = store
        self.lang = lang
        # One namespace per store: the Secret Service is shared by every scenario.
        self.app_id = "com.example.LoginWindowTest." + os.path.basename(store)
        self.backend = backend
        env = dict(harness.env)
        env["LANG"] = lang
        env.pop("LC_ALL", None)
        env.pop("LC_MESSAGES", None)
        self.texts = json.loads(subprocess.run([harness.binary, "--print-texts"], env=env, check=True, capture_output=True).stdout)
        self.argv = [harness.binary, "--server", server_url or harness.server.url, "--app", self.app_id, "--store-dir", store,
                     "--backend", backend, "--timeout", str(timeout)]
        if policy:
            self.argv += ["--policy", policy]
        harness.app_runs += 1
        self.log_path = os.path.join(harness.output, "logs", "app-%03d.log" % harness.app_runs)
        os.makedirs(os.path.dirname(self.log_path), exist_ok=True)
        self.log = open(self.log_path, "wb")
        self.process = subprocess.Popen(self.argv, env=env, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log, start_new_session=True)
        harness.running.append(self)
        self.accessible = self._find_accessible()
        self.window = self._find_window()
        # The pointer rests on the window, so X delivers the keys to it (no window manager).
        x, y, _, _ = self.geometry()
        harness.xdotool("mousemove", str(x + 2), str(y + 2))

    @property
    def pid(self):
        return self.process.pid

    def _find_accessible(self):
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise CheckFailed("the window exited with status %s: %s" % (self.process.returncode, open(self.log_path, "rb").read().decode(errors="replace")[-2000:]))
            desktop = pyatspi.Registry.getDesktop(0)
            for app in _children(desktop):
                try:
                    if app is not None and app.get_process_id() == self.pid and any(c.getRoleName() == "frame" for c in _children(app)):
                        Atspi.Accessible.set_cache_mask(app, Atspi.Cache.NONE)
                        return app
                except Exception:
                    continue
            time.sleep(0.1)
        raise CheckFailed("the window did not appear on the accessibility bus")

    def _find_window(self):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            found = subprocess.run(["xdotool", "search", "--onlyvisible", "--pid", str(self.pid)], capture_output=True, text=True).stdout.split()
            if found:
                return found[-1]
            time.sleep(0.1)
        raise CheckFailed("the window did not map on the X display")

    def geometry(self):
        out = subprocess.run(["xdotool", "getwindowgeometry", "--shell", self.window], capture_output=True, text=True, check=True).stdout
        values = dict(line.split("=", 1) for line in out.split())
        return int(values["X"]), int(values["Y"]), int(values["WIDTH"]), int(values["HEIGHT"])

    def screen(self):
        return Screen(self)

    # -- acting as a person ---------------------------------------------------

    def type(self, text):
        self.harness.xdotool("type", "--delay", "40", text)

    def key(self, *keys):
        self.harness.xdotool("key", "--delay", "40", *keys)

    def click(self, node):
        if node is None or node.extents is None:
            raise CheckFailed("nothing to click")
        x0, y0, _, _ = self.geometry()
        x, y, w, h = node.extents
        self.harness.xdotool("mousemove", str(x0 + x + w // 2), str(y0 + y + h // 2), "click", "1")

    def resize(self, width, height):
        self.harness.xdotool("windowsize", self.window, str(width), str(height))

    # -- checking as a screen reader ------------------------------------------

    def expect(self, what, predicate, within=SETTLE):
        """Waits until `predicate(screen)` holds; fails with the tree when it does not."""
        deadline = time.monotonic() + within
        while True:
            screen = self.screen()
            try:
                if predicate(screen):
                    self.harness.checks += 1
                    return screen
            except (AttributeError, TypeError):
                pass
            if time.monotonic() > deadline:
                raise CheckFailed("%s: not so within %.1f s; the window shows:\n%s" % (what, within, screen.describe()))
            time.sleep(0.05)

    def stays(self, what, predicate, period=STAYS):
        """Checks that `predicate(screen)` holds throughout `period`."""
        deadline = time.monotonic() + period
        while True:
            screen = self.screen()
            ok = False
            try:
                ok = predicate(screen)
            except (AttributeError, TypeError):
                ok = False
            if not ok:
                raise CheckFailed("%s: stopped holding; the window shows:\n%s" % (what, screen.describe()))
            if time.monotonic() > deadline:
                self.harness.checks += 1
                return screen
            time.sleep(0.05)

    def screenshot(self, name, committed=False):
        """Saves the window as output/screenshots/NAME.png, or, for the README's three,
        as docs/screenshots/NAME.png without time stamps (so an unchanged window is an unchanged file)."""
        if committed:
            # A key that changes nothing: GTK shows the focus ring after keyboard use, so the
            # committed pictures always show it; then the frame after the last change.
            self.key("shift")
            time.sleep(0.5)
        directory = DOCS_SCREENSHOTS if committed else os.path.join(self.harness.output, "screenshots")
        path = os.path.join(directory, name + ".png")
        os.makedirs(directory, exist_ok=True)
        subprocess.run(["import", "-window", self.window, "-define", "png:exclude-chunks=date,time", path],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return path

    def close(self):
        """Closes as a user ending the session would (SIGTERM: the app applies its exit policy)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise CheckFailed("the window did not close on SIGTERM")
        self.log.close()
        if self in self.harness.running:
            self.harness.running.remove(self)
        return self.process.returncode

    def log_text(self):
        if not self.log.closed:
            self.log.flush()
        return open(self.log_path, "rb").read()


class Harness:
    """Shared by the scenarios: the binaries, the server, the output directory, the counts."""

    def __init__(self, binary, cli, server, output, env):
        self.binary = binary
        self.cli = cli
        self.server = server
        self.output = output
        self.env = env
        self.running = []
        self.app_runs = 0
        self.checks = 0
        self.stores = 0
        # A port nothing listens on, for "network unreachable".
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        self.closed_port = probe.getsockname()[1]
        probe.close()

    def xdotool(self, *args):
        subprocess.run(["xdotool"] + list(args), check=True, env=self.env)

    def new_store(self):
        self.stores += 1
        path = os.path.join(self.output, "stores", "store-%03d" % self.stores)
        os.makedirs(path, mode=0o700, exist_ok=True)
        os.chmod(path, 0o700)
        return path

    def latchkey(self, app, *args):
        """Runs the latchkey CLI on the app's namespace and store; returns (status, stdout)."""
        argv = [self.cli, "--app", app.app_id, "--store-dir", app.store, "--backend", app.backend] + list(args)
        result = subprocess.run(argv, env=self.env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        return result.returncode, result.stdout

    def audit_events(self, app):
        status, out = self.latchkey(app, "--json", "audit", "show")
        if status != 0:
            raise CheckFailed("latchkey audit show failed (%d)" % status)
        return [entry["event"] for entry in json.loads(out)["entries"]]

    def stop_all(self):
        for app in list(self.running):
            try:
                app.process.kill()
                app.process.wait(timeout=5)
            except Exception:
                pass
            self.running.remove(app)
