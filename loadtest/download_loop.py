#!/usr/bin/env python3
"""One client of loadtest/downloads.sh: downloads URL over and over, on one keep-alive
connection (as huggingface_hub's session does), from the moment START (unix seconds)
until START + SECONDS; a download under way then is finished and counted (and there is
always one: SECONDS 0 is one download). Every body is
hashed as it arrives: a download counts as good only when its status is 200 and its
size and sha256 are the expected ones; anything else (another status, a short or wrong
body, a broken connection, which is then opened again) is an error. A redirect (the
blob store's presigned URL, storage.download_mode = "redirect") is followed once.

  download_loop.py URL SIZE SHA256 START SECONDS

Prints one JSON object: {"good": n, "errors": n, "bytes": body bytes received in all,
"end": unix seconds of the last download's end, "download_seconds": [each good one's],
"first_error": "..." or null}. Loopback targets only.
"""
import hashlib
import http.client
import json
import sys
import time
import urllib.parse

CHUNK = 1 << 20


def loopback(url):
    host = urllib.parse.urlsplit(url).hostname or ""
    return host.startswith("127.") or host == "localhost"


class Client:
    def __init__(self):
        self.conn = None
        self.netloc = None

    def get(self, url):
        """Sends GET url on the kept connection (a new one for another host); returns
        the response, its body not read yet."""
        u = urllib.parse.urlsplit(url)
        if not loopback(url):
            raise ValueError("refusing non-loopback target %s" % u.hostname)
        if self.conn is None or self.netloc != u.netloc:
            self.close()
            self.conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=120)
            self.netloc = u.netloc
        path = u.path + ("?" + u.query if u.query else "")
        self.conn.request("GET", path)
        return self.conn.getresponse()

    def close(self):
        if self.conn is not None:
            self.conn.close()
        self.conn = None


def one(client, url, size, sha, buf, counted):
    """One download; returns None when good, else what was wrong."""
    r = client.get(url)
    if r.status in (301, 302, 303, 307, 308):
        location = urllib.parse.urljoin(url, r.getheader("Location") or "")
        r.read()
        r = client.get(location)
    if r.status != 200:
        r.read()
        return "HTTP %d" % r.status
    h = hashlib.sha256()
    got = 0
    view = memoryview(buf)
    while True:
        n = r.readinto(buf)
        if not n:
            break
        h.update(view[:n])
        got += n
        counted[0] += n
    if got != size:
        return "%d bytes, expected %d" % (got, size)
    if h.hexdigest() != sha:
        return "sha256 %s, expected %s" % (h.hexdigest(), sha)
    return None


def main():
    url, size, sha = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    start, seconds = float(sys.argv[4]), float(sys.argv[5])
    if not loopback(url):
        sys.exit("refusing non-loopback target %s" % url)
    buf = bytearray(CHUNK)
    client = Client()
    counted = [0]
    good = errors = 0
    first_error = None
    times = []
    time.sleep(max(0.0, start - time.time()))
    while True:
        t0 = time.time()
        try:
            wrong = one(client, url, size, sha, buf, counted)
        except (OSError, http.client.HTTPException, ValueError) as e:
            wrong = "%s: %s" % (type(e).__name__, e)
            client.close()
            time.sleep(0.1)  # a hub that refuses connections is not hammered
        if wrong is None:
            good += 1
            times.append(round(time.time() - t0, 3))
        else:
            errors += 1
            first_error = first_error or wrong[:200]
        if time.time() >= start + seconds:
            break
    client.close()
    print(json.dumps({"good": good, "errors": errors, "bytes": counted[0], "end": time.time(),
                      "download_seconds": times, "first_error": first_error}))


if __name__ == "__main__":
    main()
