"""``jsonbench-dev recheck``: the current reproduction library against every recorded run of every host.

A band must hold on every host of the machine type, not only on the one it was looked at on. This command
takes the honest runs the project keeps (``recorded/``: each folder one host's results in the project's own
layout, described in ``recorded/hosts.json``) and any results folder given with ``--results-dir``, computes
every finding of every run with today's expectation files, exactly as the nightly check does
(:func:`jsonbench.checks.findings.findings_per_run`), and counts, per host and scale, the reproduction checks
each band fails on the first measurement (no confirmation: a band that needs one on an honest host is wrong).

Not asked of a run, and counted apart:

* a finding whose inputs the run did not measure (a metric that did not exist yet at its commit);
* a timing finding measured while the host was busy (``quiet`` false): the nightly check does not judge it either;
* what ``hosts.json`` lists under ``not_asked`` for the folder: a suite, or the findings depending on one
  of ``depends_on``, whose data changed since the run (seed 001's documents before they were fitted).

Exit status 1 when any band fails an honest run, so a test over the committed rows catches a band that
breaks a host before a user's night does.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonbench import paths

MANIFEST = "hosts.json"


@dataclass
class HostScale:
    """One host at one scale: what was judged, what failed, what was not asked."""

    host: str
    scale: str
    runs: set[str] = field(default_factory=set)
    judged: int = 0
    not_asked: int = 0
    failures: list[dict[str, Any]] = field(default_factory=list)


def recorded_dir() -> Path:
    """The project's committed recorded runs."""
    return paths.RECORDED_DIR


def _manifest(root: Path) -> dict[str, Any]:
    path = root / MANIFEST
    return json.loads(path.read_text(encoding="utf-8")).get("folders", {}) if path.exists() else {}


def _not_asked(entry: dict[str, Any], suite: str, depends_on: list[str]) -> str | None:
    """Why the manifest says this folder's runs cannot judge a finding of ``suite`` depending on ``depends_on`` (None: they can)."""
    for rule in entry.get("not_asked", []):
        if rule.get("suite") not in (None, suite):
            continue
        needs = rule.get("depends_on")
        if needs and needs not in depends_on:
            continue
        return str(rule.get("why", "not asked"))
    return None


def recheck(folders: list[tuple[Path, dict[str, Any]]]) -> list[HostScale]:
    """Every finding of every run in ``folders`` (``(results folder, its manifest entry)``) against today's bands."""
    import pandas as pd

    from jsonbench.checks.findings import band_at, findings_per_run
    from jsonbench.checks.library import load_library
    from jsonbench.dataset.read import MEASUREMENTS, read_dataset_report

    lib = load_library()
    defs = {(s, f["id"]): f for s, d in lib.reproduction.items() for f in d.get("findings", [])}
    out: dict[tuple[str, str], HostScale] = {}
    for folder, entry in folders:
        df = read_dataset_report(folder, MEASUREMENTS).table.to_pandas()
        if df.empty:
            continue
        df = df[df["suite"] != "host"]
        for (run_id, scale), rdf in df.groupby(["run_id", "scale"], sort=True):
            boot = rdf["host_boot_id"].dropna() if "host_boot_id" in rdf else pd.Series([], dtype=object)
            host = str(boot.iloc[0])[:8] if len(boot) else str(entry.get("host") or folder.name)
            hs = out.setdefault((host, str(scale)), HostScale(host, str(scale)))
            hs.runs.add(str(run_id))
            for frame in findings_per_run(rdf, lib, None, str(scale)):
                for r in frame.itertuples(index=False):
                    f = defs[(r.suite, r.finding)]
                    band = band_at(f, str(scale))
                    if band.not_applicable or r.applicable != "yes":
                        continue
                    why = _not_asked(entry, str(r.suite), list(f.get("depends_on") or []))
                    if why or r.observed is None or pd.isna(r.observed) or r.disturbed == "yes":
                        hs.not_asked += 1
                        continue
                    hs.judged += 1
                    if not band.holds(float(r.observed)):
                        hs.failures.append(
                            {
                                "folder": folder.name,
                                "run_id": str(run_id),
                                "suite": r.suite,
                                "finding": r.finding,
                                "engine_id": r.engine_id,
                                "kind": f.get("kind", "timing"),
                                "observed": float(r.observed),
                                "band": [band.min, band.max],
                            }
                        )
    return sorted(out.values(), key=lambda h: (h.host, h.scale))


def folders_to_check(extra: list[str], recorded: Path | None = None) -> list[tuple[Path, dict[str, Any]]]:
    """The committed recorded folders (with their manifest entries) and every ``extra`` results folder."""
    root = recorded or recorded_dir()
    manifest = _manifest(root)
    out = [(p, manifest.get(p.name, {})) for p in paths.recorded_folders(root)]
    out += [(Path(d), {}) for d in extra]
    return out


def render(results: list[HostScale]) -> str:
    """Per host and scale: runs, reproduction checks judged, failed, not asked; then every failure."""
    lines = [f"{'host':<10} {'scale':<7} {'runs':>4} {'judged':>7} {'failed':>7} {'not asked':>10}"]
    for h in results:
        lines.append(f"{h.host:<10} {h.scale:<7} {len(h.runs):>4} {h.judged:>7} {len(h.failures):>7} {h.not_asked:>10}")
    fails = [f for h in results for f in h.failures]
    per_band: dict[tuple[str, str], int] = defaultdict(int)
    for f in fails:
        per_band[(f["suite"], f["finding"])] += 1
    if per_band:
        lines += ["", "failures per band:"] + [f"  {s}/{fid}: {n}" for (s, fid), n in sorted(per_band.items())]
        lines += ["", "each failure:"] + [
            f"  {f['folder']} {f['run_id']} {f['engine_id']} {f['finding']}: {f['observed']:.4g} outside {f['band']}" for f in fails
        ]
    lines.append(
        f"\n{len(fails)} failure(s) over {sum(h.judged for h in results)} reproduction check(s) of {sum(len(h.runs) for h in results)} run(s)"
    )
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    """The command; exit 1 when a band fails an honest recorded run."""
    results = recheck(folders_to_check(args.results_dir, Path(args.recorded) if args.recorded else None))
    if args.as_json:
        print(json.dumps([{**h.__dict__, "runs": sorted(h.runs)} for h in results], indent=1))
    else:
        print(render(results))
    return 1 if any(h.failures for h in results) else 0
