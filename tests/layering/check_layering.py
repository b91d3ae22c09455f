#!/usr/bin/env python3
"""Checks every `#include "…"` under a source tree against the layering table of
docs/architecture.md (the rows between its layering-table markers).

usage: check_layering.py ARCHITECTURE_MD SRC_DIR
Prints one line per forbidden edge ("src/db/x.cc:3: db may not include http/request.h")
and exits 1 when there is any, 0 when there is none, 2 when the table cannot be read.
"""
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCE_SUFFIXES = {".h", ".cc", ".inc", ".def"}


def read_table(doc: pathlib.Path) -> dict:
    """{module: set of allowed modules or headers, or None for "any module"}."""
    text = doc.read_text(encoding="utf-8")
    m = re.search(r"<!-- layering-table.*?-->(.*?)<!-- end layering-table -->", text, re.S)
    if not m:
        raise ValueError(f"{doc}: no layering-table markers")
    table = {}
    for line in m.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue  # the header row, the separator, blank lines
        module = cells[0].strip("`")
        allowed = cells[2]
        if allowed == "any module":
            table[module] = None
        elif allowed == "—":
            table[module] = set()
        else:
            table[module] = {a.strip().strip("`") for a in allowed.split(",")}
    if not table:
        raise ValueError(f"{doc}: the layering table has no rows")
    return table


def module_of(table: dict, parts) -> str:
    """The longest table row that is a leading part of `parts` ("services/auth" before
    "services"), or the first part when none is."""
    for n in range(len(parts), 0, -1):
        name = "/".join(parts[:n])
        if name in table:
            return name
    return parts[0]


def allowed(table: dict, module: str, target: str) -> bool:
    rule = table[module]
    if rule is None:
        return True
    target_module = module_of(table, target.split("/")[:-1])
    # "services" in a row allows every services/<domain>.
    return (target_module == module or target in rule or
            any(target_module == a or target_module.startswith(a + "/") for a in rule))


def check(table: dict, src: pathlib.Path) -> list:
    problems = []
    for path in sorted(src.rglob("*")):
        if path.suffix not in SOURCE_SUFFIXES or not path.is_file():
            continue
        module = module_of(table, path.relative_to(src).parts[:-1] or path.relative_to(src).parts)
        if module not in table:
            problems.append(f"{path}: module '{module}' is not in the layering table")
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m or "/" not in m.group(1):
                continue  # system headers, and same-directory includes
            target = m.group(1)
            if not any(k.split("/")[0] == target.split("/", 1)[0] for k in table):
                continue  # a third-party header with a path ("boost/…" is <…>, but be safe)
            if not allowed(table, module, target):
                problems.append(f"{path}:{n}: {module} may not include {target}")
    return problems


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        table = read_table(pathlib.Path(sys.argv[1]))
    except (OSError, ValueError) as e:
        print(f"check_layering: {e}", file=sys.stderr)
        return 2
    problems = check(table, pathlib.Path(sys.argv[2]))
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
