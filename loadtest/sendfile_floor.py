#!/usr/bin/env python3
"""The loopback "cat to socket" floor: a threaded HTTP/1.1 server on 127.0.0.1:PORT that
answers GET/HEAD /<name> with a bare header and os.sendfile(2)s ROOT/<name> (basename only)
into the socket, then closes. Usage: sendfile_floor.py PORT ROOT"""
import os
import socket
import sys
import threading

port, root = int(sys.argv[1]), sys.argv[2]


def serve(c):
    try:
        buf = b""
        while b"\r\n\r\n" not in buf:
            d = c.recv(4096)
            if not d:
                return
            buf += d
        path = os.path.join(root, os.path.basename(buf.split(b" ")[1].decode()))
        size = os.path.getsize(path)
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % size)
        if not buf.startswith(b"HEAD "):
            with open(path, "rb") as f:
                off = 0
                while off < size:
                    n = os.sendfile(c.fileno(), f.fileno(), off, size - off)
                    if n == 0:
                        break
                    off += n
    except OSError:
        pass
    finally:
        c.close()


srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", port))
srv.listen(16)
while True:
    conn, _ = srv.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
