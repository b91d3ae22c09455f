#!/usr/bin/env python3
"""Writes a deterministic CSV table for the dataset viewer benchmark (issue 15).

  gen_table.py OUT.csv ROWS

Columns: id (0…), name (two words), value (a float), category (one of 12), flag (a bool),
day (an ISO date), comment (six to ten words). About 110 bytes a row, so 10,000,000 rows
make a file over 1 GB. The same ROWS always give the same bytes (a seeded generator).
"""
import random
import sys

WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
         "november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee "
         "zulu amber basalt cobalt dune ember fjord glacier harbor iris jade kestrel lagoon "
         "meadow nebula onyx prairie quartz river summit tundra umber valley willow zephyr "
         "star wars trek galaxy comet orbit lunar solar").split()
CATEGORIES = ["cat%02d" % i for i in range(12)]


def main():
    out, rows = sys.argv[1], int(sys.argv[2])
    rng = random.Random(15)
    choice, rand = rng.choice, rng.random
    with open(out, "w", encoding="utf-8", newline="") as f:
        f.write("id,name,value,category,flag,day,comment\n")
        buf = []
        for i in range(rows):
            words = " ".join(choice(WORDS) for _ in range(6 + i % 5))
            buf.append(f"{i},{choice(WORDS)} {choice(WORDS)},{rand() * 1000:.4f},"
                       f"{CATEGORIES[i % 12]},{'true' if i % 3 == 0 else 'false'},"
                       f"20{10 + i % 15:02d}-{1 + i % 12:02d}-{1 + i % 28:02d},{words}\n")
            if len(buf) == 100_000:
                f.write("".join(buf))
                buf.clear()
        f.write("".join(buf))


if __name__ == "__main__":
    main()
