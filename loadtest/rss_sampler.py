#!/usr/bin/env python3
"""Samples the VmRSS of processes PIDS (one pid, or several joined by commas: every replica
of a deployment) every MS milliseconds into OUT, one line per sample: "unix_seconds kib..."
with one KiB figure per pid in the order given (0 for a process that has gone), until the
file STOP exists, every process is gone, or 900 s have passed. FIELD (default VmRSS) names
another line of /proc/PID/status to sample instead, e.g. RssAnon: the private memory,
without the shared libraries' clean file pages that VmRSS counts too.
Usage: rss_sampler.py PIDS OUT STOP MS [FIELD]"""
import os
import sys
import time


def rss_kib(pid):
    try:
        with open("/proc/%d/status" % pid) as s:
            for line in s:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0  # gone (or a zombie, which has no VmRSS line)


pids = [int(p) for p in sys.argv[1].split(",") if p]
out, stop, ms = sys.argv[2], sys.argv[3], int(sys.argv[4])
field = sys.argv[5] if len(sys.argv) > 5 else "VmRSS"
t_end = time.time() + 900
with open(out, "w", buffering=1) as f:
    while not os.path.exists(stop) and time.time() < t_end:
        kib = [rss_kib(p) for p in pids]
        if not any(kib):
            break
        f.write("%.3f %s\n" % (time.time(), " ".join(map(str, kib))))
        time.sleep(ms / 1000.0)
