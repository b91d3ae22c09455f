#!/usr/bin/env python3
"""Times a full recursive tree listing, following Link rel="next" pagination.

  list_tree.py URL [--token T] [--runs N] [--keep-going]

URL is e.g. http://127.0.0.1:PORT/api/models/ns/name/tree/main?recursive=true.
One keep-alive connection per run (as huggingface_hub's requests.Session does); every
page is read and parsed as JSON, and entries are counted by type. Prints one JSON
object per run: {"seconds":..., "pages":..., "entries":..., "files":..., "dirs":...}.
--keep-going: a run that fails (an HTTP error, a broken connection) prints
{"error": "...", "seconds": ...} and the next run starts; without it the first failure
ends the program. Loopback targets only.
"""
import argparse
import http.client
import json
import re
import sys
import time
import urllib.parse

LINK_NEXT = re.compile(r'<([^>]+)>\s*;\s*rel="?next"?')
MAX_PAGES = 100_000  # bound: a broken server that loops is stopped


class RunFailed(Exception):
    pass


def one_run(url, token):
    u = urllib.parse.urlsplit(url)
    if not (u.hostname or "").startswith("127.") and u.hostname != "localhost":
        sys.exit("refusing non-loopback target %s" % u.hostname)
    headers = {"Authorization": "Bearer " + token} if token else {}
    conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=120)
    pages = entries = files = dirs = 0
    t0 = time.perf_counter()
    while url and pages < MAX_PAGES:
        u = urllib.parse.urlsplit(url)
        path = u.path + ("?" + u.query if u.query else "")
        conn.request("GET", path, headers=headers)
        r = conn.getresponse()
        body = r.read()
        if r.status != 200:
            raise RunFailed("HTTP %d on page %d: %s" % (r.status, pages + 1, body[:300]))
        items = json.loads(body)
        pages += 1
        entries += len(items)
        for it in items:
            if it.get("type") == "directory":
                dirs += 1
            else:
                files += 1
        link = r.getheader("Link") or ""
        m = LINK_NEXT.search(link)
        url = urllib.parse.urljoin(url, m.group(1)) if m else None
    t1 = time.perf_counter()
    conn.close()
    return {"seconds": round(t1 - t0, 4), "pages": pages, "entries": entries, "files": files, "dirs": dirs}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("--token", default="")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--keep-going", action="store_true")
    a = ap.parse_args()
    for _ in range(min(a.runs, 20)):
        t0 = time.perf_counter()
        try:
            print(json.dumps(one_run(a.url, a.token)), flush=True)
        except (RunFailed, OSError, http.client.HTTPException, ValueError) as e:
            if not a.keep_going:
                sys.exit(str(e))
            print(json.dumps({"error": str(e)[:300], "seconds": round(time.perf_counter() - t0, 4)}), flush=True)


if __name__ == "__main__":
    main()
