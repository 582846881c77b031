#!/usr/bin/python3
"""The login window's scenarios: one per item of the login-screen story, and one
per way a secret could leave the window. Run by `make login-window-test`
(through Tests/run-ui-tests, inside Xvfb and a private D-Bus session).

Usage: login_window_test.py BINARY LATCHKEY_CLI OUTPUT_DIR [SCENARIO_ID ...]
"""
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from harness import CheckFailed, Harness  # noqa: E402
from login_server import LoginServer  # noqa: E402
from scenarios import SCENARIOS  # noqa: E402


def main():
    binary, cli, output = sys.argv[1:4]
    only = set(sys.argv[4:])
    os.makedirs(output, exist_ok=True)
    server = LoginServer().start()
    harness = Harness(binary, cli, server, output, dict(os.environ))
    passed, failed = 0, 0
    for ident, title, scenario in SCENARIOS:
        if only and ident not in only:
            continue
        server.reset()
        checks_before = harness.checks
        started = time.monotonic()
        app = None
        try:
            app = scenario(harness)
            name = "item-%s" % ident if ident[0].isdigit() else "secret-%s" % ident
            if app is not None and app.process.poll() is None:
                app.screenshot(name)
            passed += 1
            print("scenario %s (%s): ok, %d checks, %.1f s" % (ident, title, harness.checks - checks_before, time.monotonic() - started), flush=True)
        except Exception as error:  # every failure is reported, and the next scenario runs
            failed += 1
            for running in list(harness.running):
                if running.process.poll() is None:
                    try:
                        running.screenshot("FAILED-%s" % ident)
                    except Exception:
                        pass
            detail = str(error) if isinstance(error, CheckFailed) else traceback.format_exc()
            print("scenario %s (%s): FAILED after %d checks\n    %s" % (ident, title, harness.checks - checks_before, detail), flush=True)
        finally:
            for running in list(harness.running):
                try:
                    running.close()
                except Exception:
                    pass
            harness.stop_all()
    server.shutdown()
    print("screenshots: %s" % os.path.join(output, "screenshots"))
    print("login-window-test: %d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
