#!/usr/bin/env python3
"""Samples the VmRSS of process PID every MS milliseconds into OUT ("unix_seconds kib" per
line) until the file STOP exists, the process is gone, or 900 s have passed.
Usage: rss_sampler.py PID OUT STOP MS"""
import os
import sys
import time

pid, out, stop, ms = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
t_end = time.time() + 900
with open(out, "w", buffering=1) as f:
    while not os.path.exists(stop) and time.time() < t_end:
        try:
            with open("/proc/%d/status" % pid) as s:
                for line in s:
                    if line.startswith("VmRSS:"):
                        f.write("%.3f %s\n" % (time.time(), line.split()[1]))
                        break
        except OSError:
            break
        time.sleep(ms / 1000.0)
