#!/usr/bin/env python3
"""A webhook receiver for tests and benchmarks, on 127.0.0.1 (python3's standard library).

Usage: webhook_receiver.py LOG_FILE PORT_FILE [HANG_S]
Every POST is appended to LOG_FILE as one JSON line, when it arrives:
  {"path", "headers" (names lower-cased), "body" (parsed JSON, or null), "raw_len", "t" (unix s)}
then answered by the first segment of its path:
  /ok/...    200
  /fail/...  500
  /hang/...  nothing for HANG_S seconds (default 30), then 200
The chosen port is written to PORT_FILE once listening. Stops on SIGTERM.
"""
import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOG, PORT_FILE = sys.argv[1], sys.argv[2]
HANG_S = float(sys.argv[3]) if len(sys.argv) > 3 else 30.0
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(n)
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        entry = {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()},
                 "body": body, "raw_len": len(raw), "t": time.time()}
        with lock, open(LOG, "a") as f:
            f.write(json.dumps(entry) + "\n")
        kind = self.path.split("/")[1] if self.path.startswith("/") else ""
        if kind == "hang":
            time.sleep(HANG_S)
        status = 500 if kind == "fail" else 200
        out = b'{"ok":true}' if status == 200 else b'{"error":"boom"}'
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)
        except OSError:
            pass  # the hub gave up waiting


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
with open(PORT_FILE + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(PORT_FILE + ".tmp", PORT_FILE)
server.serve_forever()
