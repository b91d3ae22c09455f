#!/usr/bin/env python3
"""Page speed driver for bench/forge/page_bench.sh (issue #4, "Page speed benchmark").

  page_bench.py --hangar BIN --data-dir DIR --repo NS/NAME --git-dir BARE_REPO [options]

DIR must hold an imported copy of the forge repository (page_bench.sh does the import);
BARE_REPO is that copy's bare repository inside DIR, which the bare-git comparisons read,
so Hangar and git read the very same objects and commit-graph.

For every page it starts `hangar serve` on 127.0.0.1 (a free port), asks /healthz once
(process start-up is not a page's cost), then requests the page: the first request after
a start is the page's cold cost (ContentService's caches are per process, so a fresh
process has none). This is done --cold-runs times (one server start each) and the median
cold time is reported; after the last cold request the same connection makes --runs more
requests (keep-alive), whose median and p95 are the warm figures.

The time of each request is the server's own: the access log's duration field (from the
end of the request head to the last response byte written, src/http/server.cc). The
client's time (send to last byte read, keep-alive) is kept too and printed beside it.

Blame and archives are compared with the bare git command on the same repository, run
alternately with the page in the same minutes (medians of --blame-runs / --archive-runs).

Everything is bounded: fixed counts, a timeout on every request and git command, traffic
to 127.0.0.1 only, and every server started here is stopped here (SIGTERM, then SIGKILL).
"""
import argparse
import http.client
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ACCESS = re.compile(r"\[access\] \[req [^\]]*\] \S+ (\S+) (\S+) (\d+) (\d+) ([0-9.]+)ms")
GOAL_MS = 50.0
REQUEST_TIMEOUT_S = 120
GIT_TIMEOUT_S = 300


def p95(values):
    """Nearest-rank 95th percentile."""
    s = sorted(values)
    k = max(0, -(-95 * len(s) // 100) - 1)
    return s[k]


class Server:
    def __init__(self, hangar, data_dir, log_dir):
        self.hangar, self.data_dir, self.log_dir = hangar, data_dir, log_dir
        self.proc = None
        self.log_path = None
        self.host = self.port = None
        self.starts = 0

    def start(self):
        self.starts += 1
        self.log_path = os.path.join(self.log_dir, "serve-%03d.log" % self.starts)
        log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [self.hangar, "serve", "--data-dir", self.data_dir, "--listen", "127.0.0.1:0"],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with open(self.log_path, "rb") as f:
                m = re.search(rb"listening on http://([0-9.]+):([0-9]+)", f.read())
            if m:
                self.host, self.port = m.group(1).decode(), int(m.group(2))
                assert self.host == "127.0.0.1"
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        self.stop()
        raise RuntimeError("hangar serve did not start; log: " + self.log_path)

    def stop(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)
        self.proc = None

    def cpu_ms(self):
        """CPU time of the server and its waited-for children (git), in ms (10 ms ticks)."""
        with open("/proc/%d/stat" % self.proc.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return sum(int(x) for x in fields[11:15]) * 1000.0 / os.sysconf("SC_CLK_TCK")

    def log_size(self):
        return os.path.getsize(self.log_path)

    def access_times(self, offset, target, count, timeout=15):
        """Server durations (ms) of the next `count` access-log lines for `target`."""
        deadline = time.monotonic() + timeout
        while True:
            with open(self.log_path, "rb") as f:
                f.seek(offset)
                text = f.read().decode("utf-8", "replace")
            found = [(int(m.group(3)), float(m.group(5))) for m in ACCESS.finditer(text)
                     if m.group(2) == target]
            if len(found) >= count or time.monotonic() > deadline:
                return found[:count]
            time.sleep(0.02)


class Client:
    def __init__(self, server):
        self.conn = http.client.HTTPConnection(server.host, server.port, timeout=REQUEST_TIMEOUT_S)

    def get(self, target):
        t0 = time.perf_counter()
        self.conn.request("GET", target, headers={"Accept-Encoding": "identity"})
        r = self.conn.getresponse()
        n = 0
        while True:
            chunk = r.read(1 << 16)
            if not chunk:
                break
            n += len(chunk)
        ms = (time.perf_counter() - t0) * 1000
        return r.status, n, ms

    def close(self):
        self.conn.close()


def timed_git(args, git_dir, runs_out):
    t0 = time.perf_counter()
    subprocess.run(["git", "--git-dir", git_dir] + args, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True, timeout=GIT_TIMEOUT_S)
    runs_out.append((time.perf_counter() - t0) * 1000)


def git_out(git_dir, *args):
    return subprocess.run(["git", "--git-dir", git_dir] + list(args), capture_output=True,
                          text=True, check=True, timeout=GIT_TIMEOUT_S).stdout.strip()


def measure_page(server, name, target, cold_runs, runs):
    cold, cold_client, warm, warm_client, cold_cpu, warm_cpu = [], [], [], [], [], None
    status_seen, size = set(), 0
    for i in range(cold_runs):
        server.start()
        try:
            c = Client(server)
            c.get("/healthz")
            off = server.log_size()
            cpu0 = server.cpu_ms()
            st, size, ms = c.get(target)
            cpu1 = server.cpu_ms()
            status_seen.add(st)
            cold_client.append(ms)
            cold_cpu.append(cpu1 - cpu0)
            n = 1
            if i == cold_runs - 1:
                for _ in range(runs):
                    st, size, ms = c.get(target)
                    status_seen.add(st)
                    warm_client.append(ms)
                n += runs
                if runs:
                    warm_cpu = (server.cpu_ms() - cpu1) / runs
            c.close()
            lines = server.access_times(off, target, n)
            if len(lines) != n:
                raise RuntimeError("%s: %d of %d access-log lines found" % (target, len(lines), n))
            for s, _ in lines:
                status_seen.add(s)
            cold.append(lines[0][1])
            warm += [ms for _, ms in lines[1:]]
        finally:
            server.stop()
    return {
        "page": name, "target": target, "status": sorted(status_seen), "bytes": size,
        "cold_ms": statistics.median(cold), "cold_all": cold,
        "median_ms": statistics.median(warm) if warm else None,
        "p95_ms": p95(warm) if warm else None,
        "client_cold_ms": statistics.median(cold_client),
        "cold_cpu_ms": statistics.median(cold_cpu), "warm_cpu_ms": warm_cpu,
        "client_median_ms": statistics.median(warm_client) if warm_client else None,
    }


def versus_git(server, name, target, git_args, git_dir, runs, fresh_server_each, warm_runs=0):
    """The page and the bare git command, alternately; server and client times. With
    fresh_server_each, every page request is a cold one (a new server: no cached result);
    then warm_runs more requests on the last server measure the cached page."""
    page_srv, page_cli, git_ms, status_seen, size = [], [], [], set(), 0
    warm, cpu = [], None
    if not fresh_server_each:
        server.start()
    try:
        for i in range(runs):
            if fresh_server_each:
                server.start()
            c = Client(server)
            c.get("/healthz")
            off = server.log_size()
            st, size, ms = c.get(target)
            status_seen.add(st)
            page_cli.append(ms)
            n = 1
            if fresh_server_each and i == runs - 1 and warm_runs:
                cpu0 = server.cpu_ms()
                for _ in range(warm_runs):
                    status_seen.add(c.get(target)[0])
                cpu = (server.cpu_ms() - cpu0) / warm_runs
                n += warm_runs
            c.close()
            lines = server.access_times(off, target, n)
            if len(lines) != n:
                raise RuntimeError("%s: %d of %d access-log lines found" % (target, len(lines), n))
            page_srv.append(lines[0][1])
            warm += [ms for _, ms in lines[1:]]
            if fresh_server_each:
                server.stop()
            timed_git(git_args, git_dir, git_ms)
    finally:
        server.stop()
    cached = None
    if warm:
        cached = {"page": name + " (cached, warm)", "target": target,
                  "status": sorted(status_seen), "bytes": size,
                  "cold_ms": statistics.median(page_srv), "cold_all": page_srv,
                  "median_ms": statistics.median(warm), "p95_ms": p95(warm),
                  "client_cold_ms": statistics.median(page_cli), "client_median_ms": None,
                  "cold_cpu_ms": None, "warm_cpu_ms": cpu}
    return cached, {
        "page": name, "target": target, "status": sorted(status_seen), "bytes": size,
        "git": "git " + " ".join(git_args),
        "page_server_ms": page_srv, "page_client_ms": page_cli, "git_ms": git_ms,
        "ratio_server": statistics.median(page_srv) / statistics.median(git_ms),
        "ratio_client": statistics.median(page_cli) / statistics.median(git_ms),
    }


def fmt(v):
    return "-" if v is None else ("%.1f" % v if v < 100 else "%.0f" % v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hangar", required=True)
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--repo", required=True, help="NS/NAME of the imported repo")
    ap.add_argument("--git-dir", required=True, help="its bare repository")
    ap.add_argument("--user", required=True, help="a user whose profile page is measured")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--cold-runs", type=int, default=3)
    ap.add_argument("--blame-runs", type=int, default=3)
    ap.add_argument("--archive-runs", type=int, default=5)
    ap.add_argument("--json", help="write all figures here too")
    ap.add_argument("--only", help="measure only pages whose name contains this")
    a = ap.parse_args()

    g = a.git_dir
    head = git_out(g, "rev-parse", "main^{commit}")
    big_commit = git_out(g, "log", "-1", "--format=%H", "main", "--", "src/big.py")
    annotated = [l.split()[1][len("refs/tags/"):] for l in
                 git_out(g, "for-each-ref", "--format=%(objecttype) %(refname)",
                         "refs/tags").splitlines() if l.startswith("tag ")]
    tag = annotated[len(annotated) // 2]
    rare = "LICENSE"
    base = "/" + a.repo
    pages = [
        ("repo home", base),
        ("tree root", base + "/tree/main"),
        ("tree of a directory (src)", base + "/tree/main/src"),
        ("blob src/big.py (7,603 lines)", base + "/blob/main/src/big.py"),
        ("blob small file", base + "/blob/main/configs/configs_000.yaml"),
        ("raw src/big.py", base + "/raw/main/src/big.py"),
        ("commits, page 1", base + "/commits/main"),
        ("commits, page 2", base + "/commits/main?p=1"),
        ("commits, page 101 (?p=100)", base + "/commits/main?p=100"),
        ("commits of src/big.py", base + "/commits/main/src/big.py"),
        ("commits of " + rare + " (1 commit)", base + "/commits/main/" + rare),
        ("commits of a directory (configs)", base + "/commits/main/configs"),
        ("commit page, head of main", base + "/commit/" + head),
        ("commit page, touching src/big.py", base + "/commit/" + big_commit),
        ("refs (1,100 refs)", base + "/refs"),
        ("annotated tag " + tag, base + "/tag/" + tag),
        ("search, fixed string", base + "/search/main?q=omega+step"),
        ("search, regex", base + "/search/main?q=v3%5B0-9%5D%7B3%7D+tensor&regex=1"),
        ("home /", "/"),
        ("listing /models", "/models"),
        ("profile /" + a.user, "/" + a.user),
        ("login", "/login"),
    ]
    if a.only:
        pages = [p for p in pages if a.only in p[0]]

    log_dir = tempfile.mkdtemp(prefix="hangar-page-bench-logs.")
    server = Server(a.hangar, a.data_dir, log_dir)
    results = {"head": head, "big_commit": big_commit, "tag": tag, "runs": a.runs,
               "cold_runs": a.cold_runs, "pages": [], "versus_git": []}
    try:
        print("pages: %d, each: %d cold requests (a fresh server each), then %d warm "
              "requests on one keep-alive connection; server time from the access log"
              % (len(pages), a.cold_runs, a.runs), flush=True)
        for name, target in pages:
            r = measure_page(server, name, target, a.cold_runs, a.runs)
            results["pages"].append(r)
            print("  %-36s %s cold %s ms, median %s ms, p95 %s ms (%d bytes, HTTP %s)"
                  % (name, target[:60], fmt(r["cold_ms"]), fmt(r["median_ms"]),
                     fmt(r["p95_ms"]), r["bytes"], r["status"]), flush=True)

        cmp = [
            ("blame src/big.py", base + "/blame/" + head + "/src/big.py",
             ["blame", "--porcelain", head, "--", "src/big.py"], a.blame_runs, True),
            ("archive main .tar.gz", base + "/archive/main.tar.gz",
             ["archive", "--format=tar.gz", "main"], a.archive_runs, False),
            ("archive main .zip", base + "/archive/main.zip",
             ["archive", "--format=zip", "main"], a.archive_runs, False),
        ]
        if a.only:
            cmp = [c for c in cmp if a.only in c[0]]
        for name, target, git_args, runs, fresh in cmp:
            cached, r = versus_git(server, name, target, git_args, g, runs, fresh,
                                   a.runs if fresh else 0)
            results["versus_git"].append(r)
            if cached:
                results["pages"].append(cached)
            print("  %-36s page %s ms (client %s ms) vs %s %s ms: %.2fx"
                  % (name, fmt(statistics.median(r["page_server_ms"])),
                     fmt(statistics.median(r["page_client_ms"])), r["git"],
                     fmt(statistics.median(r["git_ms"])), r["ratio_server"]), flush=True)
    finally:
        server.stop()

    print()
    print("| page | cold ms (median of %d) | median ms | p95 ms | goal | verdict "
          "| CPU ms cold / warm | bytes |" % a.cold_runs)
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in results["pages"]:
        worst = max(r["cold_ms"], r["p95_ms"] or 0)
        verdict = "ok" if worst < GOAL_MS else (
            "OVER (cold)" if (r["p95_ms"] or 0) < GOAL_MS else "OVER")
        if any(s != 200 for s in r["status"]):
            verdict += " (HTTP %s)" % r["status"]
        print("| %s `%s` | %s | %s | %s | < 50 ms | %s | %s / %s | %d |"
              % (r["page"], r["target"].replace(base, "…", 1) if r["target"] != base else base,
                 fmt(r["cold_ms"]), fmt(r["median_ms"]), fmt(r["p95_ms"]), verdict,
                 fmt(r["cold_cpu_ms"]), fmt(r["warm_cpu_ms"]), r["bytes"]))
    print("(cold = first request to a freshly started server; median and p95 over the %d "
          "requests after it, on one keep-alive connection; server times from the access log; "
          "CPU = server + its git children per request, 10 ms ticks)" % a.runs)
    print()
    print("| against git | page, server ms (median) | page, client ms | git ms (median) | ratio |")
    print("| --- | --- | --- | --- | --- |")
    for r in results["versus_git"]:
        print("| %s (%d runs) | %s | %s | `%s`: %s | %.2fx |"
              % (r["page"], len(r["git_ms"]), fmt(statistics.median(r["page_server_ms"])),
                 fmt(statistics.median(r["page_client_ms"])), r["git"],
                 fmt(statistics.median(r["git_ms"])), r["ratio_server"]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    subprocess.run(["rm", "-rf", log_dir], check=False)


if __name__ == "__main__":
    main()
