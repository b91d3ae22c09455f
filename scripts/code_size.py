#!/usr/bin/env python3
"""Reports the size limits of issue 14 over src/: files over 600 lines, and functions over
80 lines, longest first. A function's length is the span universal-ctags gives it (its
`line` to its `end`, both included: signature, body and closing brace; comments above it
not counted), for every C++ function definition ctags finds (kind `f`, lambdas inside
count toward their function). Needs universal-ctags (Debian: universal-ctags).

usage: scripts/code_size.py [SRC_DIR]     exit 1 when anything is over a limit
"""
import json
import pathlib
import subprocess
import sys

FILE_LIMIT = 600
FUNCTION_LIMIT = 80


def main() -> int:
    src = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "src")
    files = sorted(p for p in src.rglob("*") if p.suffix in {".cc", ".h"})
    over_files = []
    for p in files:
        n = sum(1 for _ in p.open(encoding="utf-8", errors="replace"))
        if n > FILE_LIMIT:
            over_files.append((n, str(p)))
    out = subprocess.run(
        ["ctags", "--output-format=json", "--fields=+ne", "--kinds-C++=f", "--languages=C++",
         "--language-force=C++", "-f", "-"] + [str(p) for p in files],
        check=True, capture_output=True, text=True).stdout
    over_functions = []
    for line in out.splitlines():
        tag = json.loads(line)
        if tag.get("_type") != "tag" or "end" not in tag:
            continue
        length = tag["end"] - tag["line"] + 1
        if length > FUNCTION_LIMIT:
            scope = tag.get("scope", "")
            name = f"{scope}::{tag['name']}" if scope else tag["name"]
            over_functions.append((length, f"{tag['path']}:{tag['line']} {name}"))
    print(f"{len(files)} files in {src}; over {FILE_LIMIT} lines: {len(over_files)}")
    for n, p in sorted(over_files, reverse=True):
        print(f"  {n:5d}  {p}")
    print(f"functions over {FUNCTION_LIMIT} lines: {len(over_functions)}")
    for n, what in sorted(over_functions, reverse=True):
        print(f"  {n:5d}  {what}")
    return 1 if over_files or over_functions else 0


if __name__ == "__main__":
    sys.exit(main())
