"""Merge pip constraint files: later files override earlier ones package by package (names normalised).

python3 merge-constraints.py constraints.txt constraints-stack.txt > merged.txt
"""

import re
import sys

pins: dict[str, str] = {}
for path in sys.argv[1:]:
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            name = re.split(r"[=<>!~;\[ ]", line, maxsplit=1)[0]
            pins[re.sub(r"[-_.]+", "-", name).lower()] = line
sys.stdout.write("".join(f"{pins[k]}\n" for k in sorted(pins)))
