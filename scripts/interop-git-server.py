#!/usr/bin/env python3
"""A git smart-HTTP server for `make interop`: 127.0.0.1 only, Basic authentication
demanded on every request, `git http-backend` run as CGI behind it.

Usage: interop-git-server.py PORT_FILE PROJECT_ROOT CREDENTIALS_FILE LOG_FILE
CREDENTIALS_FILE holds one line `user:password`. The chosen port is written to
PORT_FILE once the server listens. Test tooling; never installed.
"""
import base64
import http.server
import os
import subprocess
import sys


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def authorized(self):
        with open(self.server.credentials_file, "rb") as f:
            expected = f.read().strip()
        header = self.headers.get("Authorization", "")
        if not header.startswith("Basic "):
            return False
        try:
            return base64.b64decode(header[6:], validate=True) == expected
        except ValueError:
            return False

    def handle_any(self):
        if not self.authorized():
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="latchkey-interop"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path, _, query = self.path.partition("?")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": self.server.project_root,
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_USER": "interop",
            "REMOTE_ADDR": "127.0.0.1",
            "GATEWAY_INTERFACE": "CGI/1.1",
            "SERVER_PROTOCOL": "HTTP/1.0",
            "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
            "HOME": os.environ.get("HOME", "/"),
        }
        result = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True, check=False)
        head, _, payload = result.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, payload = result.stdout.partition(b"\n\n")
        status = 200
        headers = []
        for line in head.decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.strip().split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = handle_any
    do_POST = handle_any

    def log_message(self, format, *args):
        with open(self.server.log_file, "a") as log:
            log.write("%s %s\n" % (self.log_date_time_string(), format % args))


def main():
    port_file, project_root, credentials_file, log_file = sys.argv[1:5]
    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    server.project_root = project_root
    server.credentials_file = credentials_file
    server.log_file = log_file
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(port_file + ".tmp", port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
