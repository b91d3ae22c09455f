#!/usr/bin/env python3
"""Checks every `#include "…"` under a source tree, and every `target_link_libraries(…)` of
its CMakeLists.txt files, against the layering table of docs/architecture.md (the rows
between its layering-table markers).

usage: check_layering.py ARCHITECTURE_MD SRC_DIR
Prints one line per forbidden edge ("src/db/x.cc:3: db may not include http/request.h",
"src/db/CMakeLists.txt:4: db may not link hangar_http") and exits 1 when there is any, 0
when there is none, 2 when the table cannot be read.

A hangar_* target belongs to the module of the folder whose CMakeLists.txt defines it
(hangar_app: cli); one defined elsewhere is named after its module (hangar_services_content:
services/content, hangar_api: api). Other libraries (Boost::json, PkgConfig::…) are not
the table's business. A folder that holds rows but is none (services) is a group: its
targets may link only the targets of its rows (hangar_services, every domain).
"""
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCE_SUFFIXES = {".h", ".cc", ".inc", ".def"}
DEFINE = re.compile(r"\badd_(?:library|executable)\s*\(\s*([A-Za-z0-9_.+-]+)", re.I)
LINK = re.compile(r"\btarget_link_libraries\s*\(", re.I)
# Words of target_link_libraries that are not libraries.
LINK_KEYWORDS = {"PUBLIC", "PRIVATE", "INTERFACE", "LINK_PUBLIC", "LINK_PRIVATE",
                 "LINK_INTERFACE_LIBRARIES", "debug", "optimized", "general"}


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


def strip_comments(text: str) -> str:
    """CMake text with its `# …` line comments blanked (quoted strings kept), so that
    offsets, and with them line numbers, stay as they were."""
    out, quoted, comment = [], False, False
    for i, ch in enumerate(text):
        if comment:
            comment = ch != "\n"
        elif ch == '"' and (i == 0 or text[i - 1] != "\\"):
            quoted = not quoted
        elif ch == "#" and not quoted:
            comment = True
        out.append(" " if comment and ch != "\n" else ch)
    return "".join(out)


def link_calls(text: str):
    """(target, [(library, offset)]) for each target_link_libraries call of `text`."""
    for m in LINK.finditer(text):
        end = text.find(")", m.end())
        if end < 0:
            continue
        words = [(w.group().strip('"'), m.end() + w.start())
                 for w in re.finditer(r'"[^"]*"|[^\s"]+', text[m.end():end])]
        if words:
            yield words[0][0], [w for w in words[1:] if w[0] not in LINK_KEYWORDS]


def cmake_files(src: pathlib.Path):
    """(path, module, text) of every CMakeLists.txt below the root of `src`."""
    for path in sorted(src.rglob("CMakeLists.txt")):
        parts = path.relative_to(src).parts[:-1]
        if parts:
            yield path, parts, strip_comments(path.read_text(encoding="utf-8", errors="replace"))


def is_group(table: dict, module: str) -> bool:
    return module not in table and any(k.startswith(module + "/") for k in table)


def link_allowed(table: dict, module: str, target_module: str) -> bool:
    if target_module == module or target_module.startswith(module + "/"):
        return True  # its own targets; a group's, its rows'
    rule = table.get(module)
    if rule is None:
        return module in table  # "any module"; a group links only its own rows
    # Only a module grants a link: a single header of a row (storage/byte_range.h) does not.
    return any(target_module == a or target_module.startswith(a + "/") for a in rule)


def check_links(table: dict, src: pathlib.Path) -> list:
    files = list(cmake_files(src))
    defined = {}  # hangar target -> module of the folder that defines it
    for _, parts, text in files:
        for m in DEFINE.finditer(text):
            defined[m.group(1)] = module_of(table, parts)
    problems = []
    for path, parts, text in files:
        here = module_of(table, parts)
        for target, libraries in link_calls(text):
            module = defined.get(target, here)
            if module not in table and not is_group(table, module):
                problems.append(f"{path}: module '{module}' is not in the layering table")
                continue
            for library, offset in libraries:
                if library in defined:
                    target_module = defined[library]
                elif library.startswith("hangar_"):
                    target_module = module_of(table, library[len("hangar_"):].split("_"))
                else:
                    continue  # another project's library
                line = text.count("\n", 0, offset) + 1
                if target_module not in table and not is_group(table, target_module):
                    problems.append(f"{path}:{line}: {library} is a target of no module of the "
                                    "layering table")
                elif not link_allowed(table, module, target_module):
                    problems.append(f"{path}:{line}: {module} may not link {library}")
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
    src = pathlib.Path(sys.argv[2])
    problems = check(table, src) + check_links(table, src)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
