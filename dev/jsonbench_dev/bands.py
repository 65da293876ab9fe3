"""``jsonbench-dev bands``: the band rule (:mod:`jsonbench.checks.bandrule`) applied to every reproduction file.

``jsonbench-dev bands`` prints, per suite, finding and scale, the band the rule computes and whether the file
holds it; ``--write`` writes the rule's bands into ``include/expectations/<suite>.reproduction.json`` (or
``--expectations DIR``), keeping every other field. The rule's inputs are in the files and the mechanisms
files, never in runs: a finding's ``seed.range`` (the seed's own spread), a band's ``gate`` or
``mechanism`` (a name under ``arithmetic:`` in ``<suite>.mechanisms.yaml``). Change those, then write.

The plan step's validator refuses a file whose rule-governed band differs from what this prints, so a band
edited by hand, or fitted to a machine, cannot reach a night.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from jsonbench.checks.bandrule import band_spec, differs, governed, load_arithmetic
from jsonbench.checks.library import expectations_dir


def apply_rule(root: Path) -> list[tuple[str, str, str, dict[str, Any], str | None]]:
    """Every governed finding's bands as the rule writes them: ``(suite, finding, scale, band, why the file differs)``."""
    out: list[tuple[str, str, str, dict[str, Any], str | None]] = []
    for path in sorted(root.glob("*.reproduction.json")):
        suite = path.name.split(".")[0]
        arithmetic = load_arithmetic(root, suite)
        data = json.loads(path.read_text(encoding="utf-8"))
        for f in data.get("findings", []):
            if not governed(f):
                continue
            for scale, spec in (f.get("bands") or {}).items():
                computed = band_spec(f, scale, spec, arithmetic)
                out.append((suite, f["id"], scale, computed, differs(spec, computed)))
    return out


def _indent(text: str) -> int:
    """The file's own indentation (its second line's), so a rewrite changes only what the rule changed."""
    lines = text.splitlines()
    return len(lines[1]) - len(lines[1].lstrip()) if len(lines) > 1 else 2


#: The first key of every reproduction file: which of its parts a command regenerates (its readers ignore the key).
GENERATED_BY = (
    "bin/jsonbench-dev bands --write (the timing findings' bands); the deterministic findings' bands from the runs "
    "bin/jsonbench-dev calibrate proposes them from (and bin/jsonbench-dev derive-facts, fit-documents for the facts "
    "they derive); the rest by hand"
)


def write_rule(root: Path) -> int:
    """Write the rule's bands into every reproduction file under ``root``; returns how many bands changed."""
    changed = 0
    for path in sorted(root.glob("*.reproduction.json")):
        suite = path.name.split(".")[0]
        arithmetic = load_arithmetic(root, suite)
        text = path.read_text(encoding="utf-8")
        data = json.loads(text)
        data = {"_generated_by": GENERATED_BY, **{k: v for k, v in data.items() if k != "_generated_by"}}
        for f in data.get("findings", []):
            if not governed(f):
                continue
            for scale, spec in list((f.get("bands") or {}).items()):
                computed = band_spec(f, scale, spec, arithmetic)
                changed += spec != computed
                f["bands"][scale] = computed
        new = json.dumps(data, indent=_indent(text), ensure_ascii=False) + "\n"
        if new != text:
            path.write_text(new, encoding="utf-8")
    return changed


def main(args: argparse.Namespace) -> int:
    """The command; exit 1 when a file's band is not the rule's (and ``--write`` was not given)."""
    root = Path(args.expectations) if args.expectations else expectations_dir()
    if args.write:
        print(f"{write_rule(root)} band(s) written under {root}")
        return 0
    bad = 0
    for suite, fid, scale, band, why in apply_rule(root):
        shown = (
            f"gate: {band['gate']}"
            if "gate" in band
            else f"[{band['min']}, {band['max']}]" + (f" mechanism {band['mechanism']}" if band.get("mechanism") else "")
        )
        print(f"{suite:<22} {fid:<44} {scale:<7} {shown}" + (f"   DIFFERS: {why}" if why else ""))
        bad += why is not None
    print(f"{bad} band(s) differ from the rule" + ("; run `jsonbench-dev bands --write`" if bad else ""))
    return 1 if bad else 0
