#!/usr/bin/env python3
"""Writes a git fast-import stream for one of Hangar's benchmark repositories.

  gen_repo.py many-files [--files N]     one commit, N files (default 100,000) in nested dirs
  gen_repo.py history    [--commits N]   N commits (default 10,000), a few files changing per
                                         commit plus one long-lived file changed in every commit

The output is deterministic (fixed seed, fixed dates), so every run and every machine
gets byte-identical repositories. Pipe it into `git fast-import` in a bare repo;
bench/gen_repo.sh does that and caches the result.
"""
import argparse
import random
import sys

AUTHOR = b"Hangar Bench <bench@hangar.invalid>"
EPOCH = 1_700_000_000


class Stream:
    def __init__(self, out):
        self.out = out
        self.mark = 0

    def w(self, b: bytes):
        self.out.write(b)

    def blob(self, data: bytes) -> int:
        self.mark += 1
        self.w(b"blob\nmark :%d\ndata %d\n" % (self.mark, len(data)))
        self.w(data)
        self.w(b"\n")
        return self.mark

    def commit(self, ref: bytes, when: int, msg: bytes, parent, changes):
        """changes: list of (path, mark). parent: mark or None."""
        self.mark += 1
        m = self.mark
        self.w(b"commit %s\nmark :%d\n" % (ref, m))
        self.w(b"author %s %d +0000\ncommitter %s %d +0000\n" % (AUTHOR, when, AUTHOR, when))
        self.w(b"data %d\n%s\n" % (len(msg), msg))
        if parent is not None:
            self.w(b"from :%d\n" % parent)
        for path, mark in changes:
            self.w(b"M 100644 :%d %s\n" % (mark, path))
        self.w(b"\n")
        return m


def many_files(s: Stream, n: int):
    # 100 top-level dirs x 100 subdirs x 10 files for n = 100,000; other n fill in order.
    rng = random.Random(1)
    changes = []
    for i in range(n):
        d, rest = divmod(i, 1000)
        sd, f = divmod(rest, 10)
        path = b"data/d%03d/s%02d/file%d.txt" % (d, sd, f)
        body = b"file %d\n%s\n" % (i, bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(64)))
        changes.append((path, s.blob(body)))
    readme = b"# many-files\n\nBenchmark repository: %d files in one commit.\n" % n
    changes.append((b"README.md", s.blob(readme)))
    s.commit(b"refs/heads/main", EPOCH, b"Add %d files" % n, None, changes)


def history(s: Stream, commits: int):
    rng = random.Random(2)
    pool = [b"src/mod%02d/part%02d.py" % (d, f) for d in range(30) for f in range(10)]
    lines = {p: [b"# %s line %d\n" % (p, k) for k in range(40)] for p in pool}
    parent = None
    for c in range(commits):
        changes = []
        if c == 0:
            # First commit adds every file.
            for p in pool:
                changes.append((p, s.blob(b"".join(lines[p]))))
            changes.append((b"README.md", s.blob(b"# history\n\nBenchmark repository with %d commits.\n" % commits)))
        else:
            for p in rng.sample(pool, 3):
                k = rng.randrange(40)
                lines[p][k] = b"# %s line %d changed in commit %d value %d\n" % (p, k, c, rng.randrange(1 << 30))
                changes.append((p, s.blob(b"".join(lines[p]))))
        # Long-lived file: changes in every commit.
        cfg = b'{\n  "model_type": "bench",\n  "step": %d,\n  "loss": %.6f,\n  "hidden_size": 768\n}\n' % (
            c, 10.0 / (1 + c))
        changes.append((b"config.json", s.blob(cfg)))
        parent = s.commit(b"refs/heads/main", EPOCH + c * 60, b"Commit %d" % c, parent, changes)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["many-files", "history"])
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--commits", type=int, default=10_000)
    a = ap.parse_args()
    s = Stream(sys.stdout.buffer)
    if a.kind == "many-files":
        many_files(s, a.files)
    else:
        history(s, a.commits)
    s.w(b"done\n")


if __name__ == "__main__":
    main()
