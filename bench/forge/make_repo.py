#!/usr/bin/env python3
"""Writes the `git fast-import` stream of the forge benchmark repository (issue #4 point 3).

  make_repo.py [--commits N] | git fast-import

The history is deterministic (fixed seeds, fixed dates, fixed identities), so every run on
every machine gives the same commit ids. With the default N = 80,000 mainline commits:

  - main: N commits, one every 10 minutes; every 200th is a merge of a feature branch that
    forked 6 commits earlier and has 2 commits of its own (about N/100 more commits);
  - refs: 600 branches (the merged feature/* branches, release/* and exp/* branches, some
    exp/* with an unmerged commit) and 500 tags (every 5th annotated);
  - README.md with model-card front matter; src/, configs/, data/, tests/, scripts/, notes/
    with a few hundred small text files, 1-2 of them edited per commit;
  - src/big.py, a 7,000+ line file edited in every 20th commit (N/20 versions: long blame);
  - LICENSE and setup.cfg touched once or a few times; some renames (files, and notes/ to
    docs/notes/ as a directory) and deletions; a binary file assets/logo.png.

bench/forge/make_repo.sh runs it and prints the counts.
"""
import argparse
import random
import sys

EPOCH = 1_600_000_000
STEP_S = 600
AUTHORS = [b"Ada Lovelace <ada@forge.invalid>", b"Alan Turing <alan@forge.invalid>",
           b"Grace Hopper <grace@forge.invalid>", b"Edsger Dijkstra <edsger@forge.invalid>",
           b"Barbara Liskov <barbara@forge.invalid>", b"Donald Knuth <don@forge.invalid>",
           b"Frances Allen <fran@forge.invalid>", b"Ken Thompson <ken@forge.invalid>"]
BIG = b"src/big.py"
BIG_EVERY = 20
MERGE_EVERY = 200
FEATURE_FORK_BACK = 6
TAG_COUNT = 500
BRANCH_COUNT = 600
WORDS = (b"alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi "
         b"rho sigma tau upsilon phi chi psi omega tensor layer weight bias grad loss step").split()

README = b"""---
license: apache-2.0
language:
- en
tags:
- forge-benchmark
- text-classification
library_name: transformers
pipeline_tag: text-classification
datasets:
- hangar/forge-corpus
base_model: hangar/forge-base
---
# Forge benchmark model

A generated repository with a long history, many refs and a large, much-edited file,
used to measure Hangar's web pages (blame, history, tree, diff) and imports.

| metric | value |
| --- | --- |
| accuracy | 0.91 |
| f1 | 0.89 |
"""


class Stream:
    """A fast-import stream writer with marks."""

    def __init__(self, out):
        self.out = out
        self.mark = 0
        self.commits = 0

    def blob(self, data: bytes) -> int:
        self.mark += 1
        self.out.write(b"blob\nmark :%d\ndata %d\n" % (self.mark, len(data)))
        self.out.write(data)
        self.out.write(b"\n")
        return self.mark

    def commit(self, ref, when, author, msg, parents, ops):
        """parents: list of marks (first = from). ops: fast-import file commands (bytes)."""
        self.mark += 1
        self.commits += 1
        w = self.out.write
        w(b"commit %s\nmark :%d\n" % (ref, self.mark))
        w(b"author %s %d +0000\ncommitter %s %d +0000\n" % (author, when, author, when))
        w(b"data %d\n%s\n" % (len(msg), msg))
        if parents:
            w(b"from :%d\n" % parents[0])
            for p in parents[1:]:
                w(b"merge :%d\n" % p)
        for op in ops:
            w(op + b"\n")
        w(b"\n")
        return self.mark

    def reset(self, ref, mark):
        self.out.write(b"reset %s\nfrom :%d\n\n" % (ref, mark))

    def tag(self, name, mark, when, author, msg):
        self.out.write(b"tag %s\nfrom :%d\ntagger %s %d +0000\ndata %d\n%s\n" %
                       (name, mark, author, when, len(msg), msg))


def words(rng, n):
    return b" ".join(rng.choice(WORDS) for _ in range(n))


def big_versions(s: Stream, count: int):
    """Writes `count` versions of src/big.py back to back (so fast-import stores each as a
    delta of the one before) and returns their marks."""
    rng = random.Random(4)
    lines = []
    for i in range(7200):
        if i % 12 == 0:
            lines.append(b"def step_%d(x, scale=%d):\n" % (i // 12, rng.randrange(100)))
        else:
            lines.append(b"    x = x * %d + %s  # %s\n" % (rng.randrange(1000), words(rng, 1), words(rng, 3)))
    marks = [s.blob(b"".join(lines))]
    for v in range(1, count):
        for _ in range(rng.randint(1, 4)):
            k = rng.randrange(len(lines))
            lines[k] = b"    x = x - %d  # v%d %s\n" % (rng.randrange(1000), v, words(rng, 2))
        if rng.random() < 0.3 or len(lines) < 7050:
            lines.insert(rng.randrange(len(lines)), b"    # note v%d: %s\n" % (v, words(rng, 4)))
        elif rng.random() < 0.3:
            del lines[rng.randrange(len(lines))]
        marks.append(s.blob(b"".join(lines)))
    return marks


class Tree:
    """The text files of main as lists of lines, plus the paths' current names."""

    def __init__(self, rng):
        self.rng = rng
        self.files = {}
        groups = [(b"src/models", 60, b"py"), (b"src/utils", 50, b"py"), (b"configs", 40, b"yaml"),
                  (b"data/splits", 40, b"txt"), (b"tests", 50, b"py"), (b"scripts", 30, b"sh"),
                  (b"notes", 30, b"md")]
        for d, n, ext in groups:
            for i in range(n):
                path = b"%s/%s_%03d.%s" % (d, d.split(b"/")[-1], i, ext)
                self.files[path] = [b"%s line %d: %s\n" % (path, k, words(rng, 5))
                                    for k in range(rng.randint(15, 40))]

    def edit(self, path, c):
        lines = self.files[path]
        lines[self.rng.randrange(len(lines))] = b"edited in %d: %s\n" % (c, words(self.rng, 5))
        if self.rng.random() < 0.2:
            lines.append(b"added in %d: %s\n" % (c, words(self.rng, 4)))

    def content(self, path):
        return b"".join(self.files[path])


def generate(s: Stream, mainline: int):
    rng = random.Random(7)
    big_marks = big_versions(s, mainline // BIG_EVERY)
    tree = Tree(rng)
    paths = sorted(tree.files)
    ops = [b"M 100644 :%d %s" % (s.blob(tree.content(p)), p) for p in paths]
    ops.append(b"M 100644 :%d README.md" % s.blob(README))
    ops.append(b"M 100644 :%d LICENSE" % s.blob(b"Apache License 2.0 (placeholder text)\n"))
    ops.append(b"M 100644 :%d setup.cfg" % s.blob(b"[metadata]\nname = forge\nversion = 0.0.0\n"))
    ops.append(b"M 100644 :%d %s" % (big_marks[0], BIG))
    logo = random.Random(9).randbytes(8192)
    ops.append(b"M 100644 :%d assets/logo.png" % s.blob(b"\x89PNG\r\n\x1a\n" + logo))
    main_marks = [s.commit(b"refs/heads/main", EPOCH, AUTHORS[0], b"Initial import", [], ops)]
    features = []  # (name, tip mark)
    big_next = 1
    renames = {mainline * k // 9: k for k in range(1, 8)}  # commit index -> rename number
    for c in range(1, mainline):
        when = EPOCH + c * STEP_S
        author = AUTHORS[c % len(AUTHORS)]
        ops, parents = [], [main_marks[-1]]
        msg = b"Commit %d: %s" % (c, words(rng, 4))
        if c % MERGE_EVERY == 0:
            # A feature branch forked a few commits back, with two commits of its own.
            name = b"feature/f%04d" % (c // MERGE_EVERY)
            path = b"src/experiments/%s.py" % name.split(b"/")[1]
            tip = main_marks[-FEATURE_FORK_BACK]
            for k in range(2):
                body = b"# %s step %d\n%s\n" % (name, k, words(rng, 12))
                mark = s.blob(body)
                tip = s.commit(b"refs/heads/" + name, when - STEP_S // 2 + k, AUTHORS[(c + k + 3) % 8],
                               b"%s: step %d" % (name, k), [tip], [b"M 100644 :%d %s" % (mark, path)])
            features.append((name, tip))
            parents.append(tip)
            ops.append(b"M 100644 :%d %s" % (mark, path))
            msg = b"Merge branch '%s'" % name
        elif c in renames:
            k = renames[c]
            if k == 4:  # a directory rename
                ops.append(b"R notes docs/notes")
                for p in [p for p in tree.files if p.startswith(b"notes/")]:
                    tree.files[b"docs/" + p] = tree.files.pop(p)
                msg = b"Move notes/ to docs/notes/"
            else:
                old = sorted(p for p in tree.files if p.startswith(b"src/utils/utils_"))[0]
                new = old.replace(b"src/utils/utils_", b"src/utils/helpers/h_")
                tree.files[new] = tree.files.pop(old)
                ops.append(b"R %s %s" % (old, new))
                msg = b"Rename %s to %s" % (old, new)
            paths = sorted(tree.files)
        elif c == mainline // 3 + 1 or c == 2 * mainline // 3 + 1:
            gone = sorted(p for p in tree.files if p.startswith(b"scripts/"))[-1]
            del tree.files[gone]
            ops.append(b"D %s" % gone)
            msg = b"Remove %s" % gone
            paths = sorted(tree.files)
        else:
            for p in rng.sample(paths, rng.choice((1, 1, 2))):
                tree.edit(p, c)
                ops.append(b"M 100644 :%d %s" % (s.blob(tree.content(p)), p))
            if c % 997 == 0:
                ops.append(b"M 100644 :%d setup.cfg" % s.blob(
                    b"[metadata]\nname = forge\nversion = 0.%d.0\n" % (c // 997)))
            if c % 16001 == 0:
                logo = random.Random(c).randbytes(8192)
                ops.append(b"M 100644 :%d assets/logo.png" % s.blob(b"\x89PNG\r\n\x1a\n" + logo))
        if c % BIG_EVERY == 0 and big_next < len(big_marks):
            ops.append(b"M 100644 :%d %s" % (big_marks[big_next], BIG))
            big_next += 1
        main_marks.append(s.commit(b"refs/heads/main", when, author, msg, parents, ops))

    branches = len(features) + 1  # + main
    for i, (name, tip) in enumerate(features):
        s.reset(b"refs/heads/" + name, tip)
    rest = BRANCH_COUNT - branches
    for i in range(rest):
        base = main_marks[(i * 7919) % len(main_marks)]
        if i % 3 == 0:
            name = b"refs/heads/exp/e%04d" % i
            mark = s.blob(b"experiment %d: %s\n" % (i, words(rng, 8)))
            s.commit(name, EPOCH + (i * 7919 % mainline) * STEP_S + 1, AUTHORS[i % 8],
                     b"exp %d" % i, [base], [b"M 100644 :%d src/experiments/exp_%04d.txt" % (mark, i)])
        else:
            s.reset(b"refs/heads/release/r%04d" % i, base)
    for t in range(TAG_COUNT):
        idx = (t + 1) * (len(main_marks) - 1) // TAG_COUNT
        name = b"v%d.%d.%d" % (t // 100, (t // 10) % 10, t % 10)
        if t % 5 == 0:
            s.tag(name, main_marks[idx], EPOCH + idx * STEP_S + 5, AUTHORS[t % 8], b"Release %s\n" % name)
        else:
            s.reset(b"refs/tags/" + name, main_marks[idx])
    s.out.write(b"done\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commits", type=int, default=80_000, help="mainline commits (>= 2000)")
    a = ap.parse_args()
    if a.commits < 2000:
        ap.error("--commits must be at least 2000")
    out = sys.stdout.buffer
    generate(Stream(out), a.commits)
    out.flush()


if __name__ == "__main__":
    main()
