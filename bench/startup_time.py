#!/usr/bin/env python3
"""Measures `hangar serve` start-to-ready: from just before exec to the moment its
"listening on http://..." line is read from its output (stdout+stderr).

  startup_time.py HANGAR_BIN DATA_DIR [--runs N] [--fresh]

--fresh: every run gets a new empty data dir (first start: creates the DB, runs
migrations); otherwise all runs reuse DATA_DIR (a restart). Each server is sent
SIGTERM once ready and waited for (SIGKILL after 5 s). Prints one JSON object:
{"runs_ms": [...], "median_ms": ..., "min_ms": ..., "rss_ready_kib": [...]}.
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time


def rss_kib(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def one(binary, data):
    args = [binary, "serve", "--data-dir", data, "--listen", "127.0.0.1:0"]
    t0 = time.perf_counter()
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    ready = None
    deadline = t0 + 30
    try:
        for line in p.stdout:
            if b"listening on http://" in line:
                ready = time.perf_counter()
                break
            if time.perf_counter() > deadline:
                break
        rss = rss_kib(p.pid)
    finally:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    if ready is None:
        sys.exit("no 'listening on' line from hangar serve (exit %s)" % p.returncode)
    return (ready - t0) * 1000, rss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("data")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--fresh", action="store_true")
    a = ap.parse_args()
    times, rss = [], []
    for i in range(min(a.runs, 50)):
        data = a.data
        if a.fresh:
            data = os.path.join(a.data, "fresh%d" % i)
            shutil.rmtree(data, ignore_errors=True)
            os.makedirs(data)
        ms, r = one(a.binary, data)
        times.append(round(ms, 2))
        rss.append(r)
        if a.fresh:
            shutil.rmtree(data, ignore_errors=True)
    print(json.dumps({"runs_ms": times, "median_ms": round(statistics.median(times), 2),
                      "min_ms": min(times), "rss_ready_kib": rss}))


if __name__ == "__main__":
    main()
