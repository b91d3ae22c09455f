#!/usr/bin/env python3
"""Checks dataset viewer answers against the source tables themselves (issue 15).

  viewer_check.py rows KIND SOURCE ANSWER.json   every row of a /rows, /first-rows or
                                                  /filter answer equals the source row of
                                                  its row_idx, cell by cell
  viewer_check.py count KIND SOURCE              prints the source's number of rows
  viewer_check.py search KIND SOURCE WORDS...    prints the row indexes of the rows holding
                                                  any of the words' terms in their text
                                                  cells, ranked by BM25 as /search ranks
  viewer_check.py stats KIND SOURCE COLUMN       prints min max mean (5 decimals) of COLUMN
  viewer_check.py where KIND SOURCE COLUMN OP VALUE
                                                  prints the row indexes (one per line) of
                                                  the rows where COLUMN OP VALUE holds,
                                                  numerically when VALUE is a number
KIND is csv, tsv or json (an array of objects). Exit 1 with a message on a mismatch.
"""
import csv
import json
import math
import sys
import unicodedata


def load(kind, path):
    """The source as (columns, rows of cells as strings or JSON values)."""
    if kind in ("csv", "tsv"):
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.reader(f, delimiter="\t" if kind == "tsv" else ",")
            header = next(reader)
            return header, [r + [""] * (len(header) - len(r)) for r in reader]
    with open(path, encoding="utf-8") as f:
        records = json.load(f)
    columns = []
    for rec in records:
        for k in rec:
            if k not in columns:
                columns.append(k)
    return columns, [[rec.get(c) for c in columns] for rec in records]


def same(src, got):
    """Whether a source cell and the viewer's JSON cell hold the same value."""
    if src is None or src == "":
        return got is None or got == ""
    if isinstance(got, bool):
        return str(src).lower() == str(got).lower()
    if isinstance(got, (int, float)):
        try:
            want = float(src)
        except (TypeError, ValueError):
            return False
        return math.isclose(want, float(got), rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(src, (int, float)) and isinstance(got, str):
        return False
    return str(src) == str(got)


def check_rows(kind, path, answer):
    columns, rows = load(kind, path)
    with open(answer, encoding="utf-8") as f:
        body = json.load(f)
    if not body.get("rows"):
        sys.exit("no rows in the answer")
    for r in body["rows"]:
        idx = r["row_idx"]
        if idx >= len(rows):
            sys.exit(f"row_idx {idx} past the source's {len(rows)} rows")
        for c, name in enumerate(columns):
            if name not in r["row"]:
                sys.exit(f"row {idx}: no column {name!r} in {sorted(r['row'])}")
            if not same(rows[idx][c], r["row"][name]):
                sys.exit(f"row {idx} column {name!r}: source {rows[idx][c]!r}, viewer {r['row'][name]!r}")
    print(len(body["rows"]))


def where(kind, path, column, op, value):
    columns, rows = load(kind, path)
    c = columns.index(column)
    try:
        want = float(value)
        numeric = True
    except ValueError:
        want = value
        numeric = False
    for i, row in enumerate(rows):
        cell = row[c]
        if cell is None or cell == "":
            continue  # NULL: unknown, never matches
        if numeric:
            try:
                cell = float(cell)
            except ValueError:
                continue
        else:
            cell = str(cell)
        ok = {"=": cell == want, ">": cell > want, "<": cell < want, ">=": cell >= want,
              "<=": cell <= want, "!=": cell != want}[op]
        if ok:
            print(i)


def terms(text, stemmer):
    """The terms of `text` as the viewer cuts them (src/services/viewer/text_terms.h): case
    folded, marks stripped, runs of letters and digits, each stemmed; long words dropped."""
    folded = unicodedata.normalize("NFD", text)
    folded = "".join(c for c in folded if not unicodedata.category(c).startswith("M"))
    folded = unicodedata.normalize("NFC", folded.casefold())
    words, word = [], []
    for c in folded + " ":
        if unicodedata.category(c)[0] in "LN":
            word.append(c)
        elif word:
            words.append("".join(word))
            word = []
    return [stemmer.stemWord(w) for w in words if len(w.encode()) <= 64]


def search(kind, path, words):
    """BM25 (k1 1.2, b 0.75) over the text cells of each row, computed here from the source:
    the matching rows in rank order, ties by row index."""
    try:
        import snowballstemmer
    except ImportError:  # Debian's package, when python3 is not Debian's own
        sys.path.append("/usr/lib/python3/dist-packages")
        import snowballstemmer
    stemmer = snowballstemmer.stemmer("porter")
    columns, rows = load(kind, path)
    docs = []
    for row in rows:
        texts = [c for c in row if isinstance(c, str) and c != ""]
        if kind != "json":  # a CSV cell is text; the viewer searches only its text columns
            texts = [t for t in texts if not _number(t)]
        docs.append([t for text in texts for t in terms(text, stemmer)])
    n = len(docs)
    average = sum(len(d) for d in docs) / n
    query = sorted(set(t for w in words for t in terms(w, stemmer)))
    scores = {}
    for term in query:
        holding = [(i, d.count(term), len(d)) for i, d in enumerate(docs) if term in d]
        df = len(holding)
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        for i, tf, length in holding:
            s = idf * tf * (1.2 + 1) / (tf + 1.2 * (1 - 0.75 + 0.75 * length / average))
            scores[i] = scores.get(i, 0.0) + s
    for i in sorted(scores, key=lambda i: (-scores[i], i)):
        print(i)


def _number(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


def stats(kind, path, column):
    columns, rows = load(kind, path)
    c = columns.index(column)
    values = [float(r[c]) for r in rows if r[c] not in (None, "")]
    print(f"{round(min(values), 5)} {round(max(values), 5)} {round(sum(values) / len(values), 5)}")


def main():
    cmd = sys.argv[1]
    if cmd == "rows":
        check_rows(*sys.argv[2:5])
    elif cmd == "count":
        print(len(load(*sys.argv[2:4])[1]))
    elif cmd == "search":
        search(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif cmd == "stats":
        stats(*sys.argv[2:5])
    elif cmd == "where":
        where(*sys.argv[2:7])
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
