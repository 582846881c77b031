#!/usr/bin/env python3
"""A scripted login server for the login window's tests and demo (test tooling).

Listens on 127.0.0.1 only. `POST /login` with {"username": ..., "password": ...}
answers the next step of its script, or, when the script is empty, checks the
demo accounts: alice / "correct horse" signs in; the usernames locked, limited,
broken, slow and drop show the other answers, so every failure class can be
tried by hand. Never logs a password: each request is recorded as the username
and whether the password matched.

Steps (dicts): {"answer": "success" | "invalid" | "locked" | "limited" | "error"
| "malformed" | "drop", "delay": seconds, "hold": True (answer only after
release()), "retry_after": seconds}.
"""
import argparse
import http.server
import json
import secrets
import socket
import sys
import threading
import time

ACCOUNTS = {"alice": "correct horse", "bob": "correct horse"}
DEMO_USERNAMES = {"locked": "locked", "limited": "limited", "broken": "error", "slow": "slow", "drop": "drop"}


class LoginServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port=0):
        super().__init__(("127.0.0.1", port), Handler)
        self.lock = threading.Lock()
        self.steps = []
        self.requests = []
        self.released = threading.Semaphore(0)
        self.holding = 0

    def handle_error(self, request, client_address):
        # A client that gave up (a timeout, a cancelled attempt) is not an error of the server.
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)

    @property
    def url(self):
        return "http://127.0.0.1:%d/login" % self.server_address[1]

    def script(self, *steps):
        with self.lock:
            self.steps.extend(steps)

    def release(self):
        self.released.release()

    def reset(self):
        """Forgets the script and lets every held answer go."""
        while self.released.acquire(blocking=False):
            pass
        with self.lock:
            self.steps = []
            holding = self.holding
        for _ in range(holding):
            self.released.release()

    def next_step(self, username, password):
        with self.lock:
            self.requests.append({"username": username, "password_ok": ACCOUNTS.get(username) == password})
            if self.steps:
                return self.steps.pop(0)
        if username in DEMO_USERNAMES:
            demo = DEMO_USERNAMES[username]
            return {"answer": "success", "delay": 3} if demo == "slow" else {"answer": demo, "retry_after": 10}
        return {"answer": "success" if ACCOUNTS.get(username) == password else "invalid"}

    def start(self):
        thread = threading.Thread(target=self.serve_forever, daemon=True)
        thread.start()
        return self


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):
        pass  # Nothing of a request is logged: its body holds a password.

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        try:
            body = json.loads(self.rfile.read(length))
            username, password = body["username"], body["password"]
        except (ValueError, KeyError, TypeError):
            return self.answer(400, {"error": "bad request"})
        step = self.server.next_step(username, password)
        del password, body
        if step.get("hold"):
            with self.server.lock:
                self.server.holding += 1
            self.server.released.acquire(timeout=60)
            with self.server.lock:
                self.server.holding -= 1
        time.sleep(step.get("delay", 0))
        answer = step["answer"]
        if answer == "drop":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if answer == "success":
            return self.answer(200, {"access_token": secrets.token_hex(16), "refresh_token": secrets.token_hex(16), "expires_in": 3600})
        if answer == "invalid":
            return self.answer(401, {"error": "invalid credentials"})
        if answer == "locked":
            return self.answer(423, {"error": "account locked"})
        if answer == "limited":
            return self.answer(429, {"error": "rate limited"}, {"Retry-After": str(step.get("retry_after", 10))})
        if answer == "error":
            return self.answer(500, {"error": "server error"})
        if answer == "malformed":
            return self.answer(200, {"unexpected": True})
        raise ValueError("unknown answer " + answer)

    def answer(self, status, body, headers=None):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--url-file", help="write the URL here once listening")
    args = parser.parse_args()
    server = LoginServer(args.port)
    if args.url_file:
        with open(args.url_file, "w") as handle:
            handle.write(server.url + "\n")
    print("login server: " + server.url, file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
