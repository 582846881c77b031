#!/usr/bin/env python3
"""A small OAuth 2.0 token endpoint on 127.0.0.1 for Latchkey's rotation tests and
`make stress` (docs/ROTATION.md): refresh tokens rotate on every use, and presenting one
that was already used is taken as theft (reuse detection): the whole family is revoked, as
Auth0, Okta and OAuth 2.1 do, and every later refresh is `invalid_grant`.

  token-endpoint.py --port-file PATH [--delay-ms N] [--expires-in S] [--initial-refresh TOKEN]

It writes the port it listens on to PATH once it accepts connections.
  POST /token    grant_type=refresh_token&refresh_token=...  (form-encoded, as curl sends it)
  GET  /stats    {"refreshes", "reuse", "revoked", "abandoned", "access_token", "refresh_token"}
  POST /control  a JSON object: {"down": true|false} (answer 503 with an HTML page),
                 {"expires_in": S}, {"delay_ms": N}, {"revoke": true}, {"reset": TOKEN}
                 (a new family whose refresh token is TOKEN)

A refresh is committed (the token rotated) when the endpoint answers, after the delay; a
client that hung up before then rotates nothing ("abandoned"), as an endpoint that never
answered.
"""
import argparse
import json
import os
import secrets
import select
import socket
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Family:
    def __init__(self, initial, expires_in, delay_ms):
        self.lock = threading.Lock()
        self.current = initial
        self.used = set()
        self.refreshes = 0
        self.reuse = 0
        self.revoked = False
        self.access = ""
        self.expires_in = expires_in
        self.delay_ms = delay_ms
        self.down = False
        self.abandoned = 0

    def reset(self, token):
        with self.lock:
            self.current = token
            self.used = set()
            self.revoked = False

    def refresh(self, token):
        """Returns (status, body) for a refresh with `token`."""
        with self.lock:
            if self.down:
                return 503, "<html><body>503 Service Unavailable</body></html>"
            if token in self.used:
                self.reuse += 1
                self.revoked = True
            if self.revoked or token != self.current:
                return 400, json.dumps({"error": "invalid_grant", "error_description": "refresh token is not valid"})
            self.used.add(token)
            self.refreshes += 1
            self.current = f"r{self.refreshes}-{secrets.token_hex(8)}"
            self.access = f"a{self.refreshes}-{secrets.token_hex(8)}"
            return 200, json.dumps({
                "access_token": self.access, "token_type": "Bearer", "expires_in": self.expires_in,
                "refresh_token": self.current, "scope": "read",
            })


def handler(family):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def log_message(self, *args):
            pass

        def answer(self, status, body, kind="application/json"):
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def client_gone(self):
            """Whether the client hung up (its end of the connection is closed)."""
            try:
                readable, _, _ = select.select([self.connection], [], [], 0)
                return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
            except OSError:
                return True

        def body(self):
            return self.rfile.read(int(self.headers.get("Content-Length", "0") or 0))

        def do_GET(self):
            if self.path != "/stats":
                return self.answer(404, json.dumps({"error": "not_found"}))
            with family.lock:
                stats = {"refreshes": family.refreshes, "reuse": family.reuse, "revoked": family.revoked,
                         "abandoned": family.abandoned, "access_token": family.access,
                         "refresh_token": family.current}
            self.answer(200, json.dumps(stats))

        def do_POST(self):
            data = self.body()
            if self.path == "/control":
                change = json.loads(data or b"{}")
                with family.lock:
                    if "down" in change:
                        family.down = bool(change["down"])
                    if "expires_in" in change:
                        family.expires_in = int(change["expires_in"])
                    if "delay_ms" in change:
                        family.delay_ms = int(change["delay_ms"])
                    if change.get("revoke"):
                        family.revoked = True
                if "reset" in change:
                    family.reset(str(change["reset"]))
                return self.answer(200, "{}")
            if self.path != "/token":
                return self.answer(404, json.dumps({"error": "not_found"}))
            form = urllib.parse.parse_qs(data.decode(), keep_blank_values=True)
            if form.get("grant_type") != ["refresh_token"] or len(form.get("refresh_token", [])) != 1:
                return self.answer(400, json.dumps({"error": "invalid_request"}))
            with family.lock:
                delay = family.delay_ms
            time.sleep(delay / 1000)
            if self.client_gone():
                with family.lock:
                    family.abandoned += 1
                return
            status, text = family.refresh(form["refresh_token"][0])
            self.answer(status, text, "text/html" if status == 503 else "application/json")

    return Handler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--delay-ms", type=int, default=0)
    parser.add_argument("--expires-in", type=int, default=3600)
    parser.add_argument("--initial-refresh", default="r0")
    options = parser.parse_args()
    family = Family(options.initial_refresh, options.expires_in, options.delay_ms)
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(family))
    server.daemon_threads = True
    temporary = options.port_file + ".tmp"
    with open(temporary, "w") as out:
        out.write(str(server.server_address[1]))
    os.rename(temporary, options.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
