"""``jsonbench drift-recheck``: drift judged on every recorded host it never saw, honest and planted.

What issue 37 asks of drift, on real runs: quiet on an honest night of a host, caught when a version or the harness
moved. For each host of ``recorded/`` (plus ``--results-dir`` folders) with two or more runs at a scale, the noise
record is built from the **other** hosts' runs only (leave one host out: the host is new to it, as every user's
machine is), and then:

* **honest**: each of the host's runs judged against its earlier runs, nothing planted; every drift verdict is a false
  alarm before confirmation (``drift``), counted per run with the families it fell in;
* **one version slower** (``--factor``, 1.25 by default): every timing of one engine of the last ``--nights`` runs
  slowed, judged night by night against the runs before the plant; the share of its judged series caught within
  those nights, and of the series whose noise allows it (their family's mds, over those nights and earlier runs, at
  most the planted change: a version is seen by its family's median, not by one series);
* **the harness slower**: every engine of the last run slowed at once, the canary untouched: caught the first night,
  and said as a harness or setting change.

The committed record is not read: each host's record is built here, from the others. Prints a table per host and
scale; exit 1 when an honest run raised more than ``--max-honest`` alarms.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class HostDrift:
    """One host's honest and planted outcome at one scale."""

    host: str
    scale: str
    runs: list[str]
    honest: list[dict[str, Any]] = field(default_factory=list)
    version: dict[str, Any] = field(default_factory=dict)
    harness: dict[str, Any] = field(default_factory=dict)
    record_hosts: list[str] = field(default_factory=list)


def _run_ref(df: Any, run_id: str) -> dict[str, Any]:
    import pandas as pd

    r = df[df["run_id"] == run_id]
    return {
        "run_id": run_id,
        "logical_date": pd.Timestamp(r["logical_date"].iloc[0]).isoformat(),
        "hardware_label": str(r["hardware_label"].iloc[0]),
        "scale": str(r["scale"].iloc[0]),
        "results_dir": "",
    }


def drift_recheck(
    folders: list[tuple[Path, dict[str, Any]]],
    scale: str,
    factor: float = 1.25,
    nights: int = 3,
    label: str = "local",
    only: set[str] | None = None,
) -> list[HostDrift]:
    """Every host with two or more runs at ``scale`` in ``folders`` (or those whose id starts with one of ``only``),
    judged by a record of the other hosts."""
    import pandas as pd

    from jsonbench.checks.library import load_library
    from jsonbench.checks.noise import build_record, family_mds, read_runs
    from jsonbench.dataset.measurement import HOST_SUITE
    from jsonbench.tools.checkcheck import _alarms, _drift_all, _judged, _keys, _slow

    lib = load_library()
    every = read_runs(folders, label, scale)
    if every.empty:
        return []
    out: list[HostDrift] = []
    for host, data in sorted(every.groupby("host"), key=lambda x: str(x[0])):
        order = data.groupby("run_id")["logical_date"].min().sort_values()
        runs = [str(r) for r in order.index]
        if len(runs) < 2 or (only and not any(str(host).startswith(o) for o in only)):
            continue
        others = sorted(set(every.loc[every["host"] != host, "run_id"].astype(str)))
        try:
            record = build_record(folders[0][0], scale, label, lib=lib, sources=folders, runs=others)
        except SystemExit:
            continue
        hd = HostDrift(str(host)[:8], scale, runs, record_hosts=sorted({str(r.get("host"))[:8] for r in record["runs"]}))
        by_run = {r: data[data["run_id"] == r] for r in runs}
        for i in range(1, len(runs)):
            tonight = by_run[runs[i]]
            dataset = pd.concat([by_run[r] for r in runs[: i + 1]], ignore_index=True)
            frame = _drift_all(tonight, dataset, _run_ref(data, runs[i]), lib, record)
            a = _alarms(frame)
            hd.honest.append(
                {
                    "run_id": runs[i],
                    "history": i,
                    "judged": len(_judged(frame)),
                    "alarms": len(a),
                    "families": sorted({f"{k[0]}/{k[1]}" for k in a}),
                }
            )
        # one version slower over the last nights (history: the runs before them)
        n = max(1, min(nights, len(runs) - 1))
        start = len(runs) - n
        engines = sorted({str(e) for e in data.loc[data["suite"] != HOST_SUITE, "engine_id"].unique()})
        planted_engine = max(engines, key=lambda e: sum(str(e) in set(by_run[r]["engine_id"].astype(str)) for r in runs[start:]))
        caught: set[tuple[str, ...]] = set()
        judged: set[tuple[str, ...]] = set()
        planted: set[tuple[str, ...]] = set()
        first_night: set[tuple[str, ...]] = set()
        planted_runs: dict[str, Any] = {}
        for k in range(n):
            rid = runs[start + k]
            df = by_run[rid].copy()
            moved = _slow(df, (df["engine_id"] == planted_engine) & (df["suite"] != HOST_SUITE), factor)
            planted |= _keys(df, moved)
            planted_runs[rid] = df
            dataset = pd.concat([*(by_run[r] for r in runs[:start]), *planted_runs.values()], ignore_index=True)
            frame = _drift_all(df, dataset, _run_ref(data, rid), lib, record)
            got = _alarms(frame) & planted
            caught |= got
            if k == 0:
                first_night = got
            judged |= _judged(frame) & planted
        # A version's regression is seen by its family (the median of its timings), so a series' noise allows it when
        # its family's between-starts noise does: the family's mds over these nights and earlier runs.
        fams = record.get("families") or {}
        allowed = {
            key
            for key in judged
            if family_mds(float((fams.get(f"{key[0]}/{key[1]}") or {}).get("sigma") or 99), ref_runs=start, nights=n) <= factor - 1
        }
        hd.version = {
            "engine": planted_engine,
            "nights": n,
            "history": start,
            "judged": len(judged),
            "caught_first_night": len(first_night & judged),
            "caught": len(caught & judged),
            "allowed": len(allowed),
            "caught_allowed": len(caught & allowed),
        }
        # the harness: every engine of the latest run of three engines or more slower, the canary as measured
        wide = [r for r in runs[1:] if by_run[r].loc[by_run[r]["suite"] != HOST_SUITE, "engine_id"].nunique() >= 3]
        if not wide:
            out.append(hd)
            continue
        rid = wide[-1]
        df = by_run[rid].copy()
        moved = _slow(df, df["suite"] != HOST_SUITE, factor)
        keys = _keys(df, moved)
        dataset = pd.concat([*(by_run[r] for r in runs[: runs.index(rid)]), df], ignore_index=True)
        frame = _drift_all(df, dataset, _run_ref(data, rid), lib, record)
        hit = _alarms(frame) & keys
        judged_h = _judged(frame) & keys
        notes = frame[(frame["verdict"] == "drift")]["note"].astype(str) if not frame.empty else pd.Series([], dtype=str)
        hd.harness = {
            "run_id": rid,
            "judged": len(judged_h),
            "caught": len(hit),
            "families": len({(k[0], k[1]) for k in hit}),
            "said_as_harness": int(notes.str.contains("a harness or setting change").sum()),
        }
        out.append(hd)
    return out


def _pct(a: int, b: int) -> str:
    return "-" if not b else f"{a / b:.0%}"


def render(results: list[HostDrift], factor: float) -> str:
    """Per host: the record's hosts, each honest night's alarms, and the planted outcomes."""
    lines = []
    for h in results:
        lines.append(f"host {h.host} @ {h.scale}: {len(h.runs)} runs; record from {', '.join(h.record_hosts)}")
        for r in h.honest:
            fams = f" ({', '.join(r['families'][:6])}{', ...' if len(r['families']) > 6 else ''})" if r["families"] else ""
            lines.append(f"  honest {r['run_id']} against {r['history']} earlier: {r['alarms']} alarm(s) of {r['judged']} judged{fams}")
        v = h.version
        if v:
            lines.append(
                f"  {v['engine']} {factor:g}x slower for {v['nights']} night(s) after {v['history']}: caught "
                f"{v['caught_first_night']} of {v['judged']} the first night, {v['caught']} ({_pct(v['caught'], v['judged'])}) within; "
                f"of the {v['allowed']} its noise allows: {_pct(v['caught_allowed'], v['allowed'])}"
            )
        m = h.harness
        if m:
            lines.append(
                f"  every engine {factor:g}x slower in {m['run_id']}, the canary as measured: caught {m['caught']} of {m['judged']} "
                f"({_pct(m['caught'], m['judged'])}) in {m['families']} families the first night; said as a harness change: {m['said_as_harness']}"
            )
    return "\n".join(lines) if lines else "no host with two or more runs at this scale"


def main(argv: list[str]) -> int:
    """The command; exit 1 when an honest run raised more alarms than ``--max-honest``."""
    parser = argparse.ArgumentParser(
        prog="jsonbench drift-recheck", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scale", default="laptop")
    parser.add_argument("--results-dir", action="append", default=[], help="another folder of honest runs (repeatable)")
    parser.add_argument("--factor", type=float, default=1.25, help="the planted slowdown (default 1.25)")
    parser.add_argument("--nights", type=int, default=3, help="how many of a host's last runs the version plant lasts (default 3)")
    parser.add_argument("--max-honest", type=int, default=0, help="alarms an honest run may raise before the exit is 1 (default 0)")
    args = parser.parse_args(argv)
    if not math.isfinite(args.factor) or args.factor <= 1:
        parser.error("--factor must be a number above 1")
    from jsonbench.tools.recheck import folders_to_check

    results = drift_recheck(folders_to_check(args.results_dir), args.scale, args.factor, args.nights)
    print(render(results, args.factor))
    worst = max((r["alarms"] for h in results for r in h.honest), default=0)
    return 1 if worst > args.max_honest else 0
