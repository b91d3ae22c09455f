#!/usr/bin/env python3
"""A tiny HTTP/1.1 server for tests/net: prints its port on the first stdout line.

  GET  /bytes/N        N bytes of a pattern (byte i = i*7 % 251), with Content-Length
  ANY  /echo           JSON: method, path, headers (lower-cased), body length and sha256
  GET  /status/N       an empty response with status N
  GET  /redirect       302 to /bytes/10
  GET  /basic          200 when Basic auth is hangar:secret, else 401
"""
import hashlib, http.server, json, socketserver, sys


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _send(self, status, body=b"", headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _any(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if self.path.startswith("/bytes/"):
            n = int(self.path[len("/bytes/"):])
            self.send_response(200)
            self.send_header("Content-Length", str(n))
            self.send_header("X-Test", "Yes")
            self.end_headers()
            if self.command == "HEAD":
                return
            pattern = bytes((i * 7) % 251 for i in range(251 * 1024))
            sent = 0
            while sent < n:
                off = sent % 251
                chunk = pattern[off:off + min(len(pattern) - off, n - sent)]
                self.wfile.write(chunk)
                sent += len(chunk)
        elif self.path == "/echo":
            out = {"method": self.command, "path": self.path,
                   "headers": {k.lower(): v for k, v in self.headers.items()},
                   "length": len(body), "sha256": hashlib.sha256(body).hexdigest()}
            self._send(200, json.dumps(out).encode(), [("Content-Type", "application/json")])
        elif self.path.startswith("/status/"):
            self._send(int(self.path[len("/status/"):]))
        elif self.path == "/redirect":
            self._send(302, b"", [("Location", "/bytes/10")])
        elif self.path == "/basic":
            ok = self.headers.get("Authorization") == "Basic aGFuZ2FyOnNlY3JldA=="
            self._send(200 if ok else 401, b"ok" if ok else b"no")
        else:
            self._send(404, b"not found")

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = do_PATCH = _any


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # clients that abort on purpose


srv = Server(("127.0.0.1", 0), Handler)
print(srv.server_address[1], flush=True)
srv.serve_forever()
