"""Calibration: what recorded runs of one scale say about each finding's band.

``jsonbench-dev calibrate --scale laptop --results-dir DIR`` reads every published run of
that scale (and, with ``--hardware-label``, of one machine), computes each finding per engine per run
exactly as the check does, and prints per finding and engine the observed min / median / max with
the runs they come from, the band in force at that scale, how many runs it would fail, and the band
it proposes under the stated rule:

* ``deterministic`` findings: the observed range widened by ``--fact-tolerance`` (default 1 %) on
  each side; if the runs themselves spread more than 2 %, the finding is flagged as not
  deterministic at that scale instead (a fact that varies is a mechanism to look at, not a band to widen);
* ``timing`` findings: no proposal from runs. Their bands are set by the band rule from the seed's own
  evidence (:mod:`jsonbench.checks.bandrule`, ``jsonbench-dev bands``); this command shows what hosts measured
  against them, and ``jsonbench-dev recheck`` judges them on every recorded host.

It also reports the width of each band around the seed's figure (``max / min`` and the larger of
``max / seed`` and ``seed / min``) against the issue's target of 4x at ``laptop``. ``--json`` writes
the proposals as JSON (per suite, finding and scale) to paste into the reproduction files, each
with the run ids that support it.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from jsonbench.checks.bandrule import round_out
from jsonbench.checks.findings import band_at, findings_per_run
from jsonbench.checks.library import Library, load_library


@dataclass
class Calibration:
    """One finding on one engine over the recorded runs of one scale."""

    suite: str
    finding: str
    kind: str
    engine_id: str
    scale: str
    n: int
    runs: list[str] = field(default_factory=list)
    observed: list[float] = field(default_factory=list)
    min: float | None = None
    min_run: str | None = None
    median: float | None = None
    max: float | None = None
    max_run: str | None = None
    not_applicable: int = 0
    disturbed: int = 0
    band: tuple[float | None, float | None] = (None, None)
    band_fails: int = 0
    proposed: tuple[float | None, float | None] = (None, None)
    rule: str = ""
    seed: float | None = None
    span: float | None = None
    seed_span: float | None = None
    flag: str = ""


def propose(finding: dict[str, Any], values: list[float], fact_tolerance: float) -> tuple[tuple[float | None, float | None], str, str]:
    """``((min, max), rule, flag)`` for one finding's observed values at one scale."""
    if not values:
        return (None, None), "no observations", ""
    lo, hi = min(values), max(values)
    med = statistics.median(values)
    if finding.get("kind") == "deterministic":
        spread = (hi - lo) / abs(med) if med else (0.0 if hi == lo else math.inf)
        flag = f"spread {spread:.1%} between runs: not deterministic at this scale" if spread > 0.02 else ""
        if med == 0 and hi == lo:
            return (0.0, 0.0), "deterministic: exactly the observed value", flag
        return (
            (round_out(lo - abs(lo) * fact_tolerance, False), round_out(hi + abs(hi) * fact_tolerance, True)),
            f"deterministic: observed range +/- {fact_tolerance:.0%}",
            flag,
        )
    return (None, None), "timing: set by the band rule from the seed's evidence (jsonbench-dev bands), not from runs", ""


def _spans(band: tuple[float | None, float | None], seed: float | None) -> tuple[float | None, float | None]:
    lo, hi = band
    span = hi / lo if lo and hi and lo > 0 else None
    seed_span = max(hi / seed, seed / lo) if seed and lo and hi and lo > 0 and seed > 0 else None
    return span, seed_span


def calibrate(
    results_dir: str | Path,
    scale: str,
    hardware_label: str | None = None,
    suites: list[str] | None = None,
    fact_tolerance: float = 0.01,
    lib: Library | None = None,
    include_disturbed: bool = False,
) -> list[Calibration]:
    """Every finding per engine over the recorded runs of ``scale`` under ``results_dir``.

    A timing finding measured in a disturbed window (``quiet`` false) is left out of the
    observations unless ``include_disturbed`` (and counted as ``disturbed``).
    """
    from jsonbench.dataset.read import MEASUREMENTS, read_dataset_report

    lib = lib or load_library()
    filters = {"hardware_label": hardware_label} if hardware_label else {}
    df = read_dataset_report(results_dir, MEASUREMENTS, **filters).table.to_pandas()
    df = df[df["scale"] == scale]
    out: list[Calibration] = []
    if df.empty:
        return out
    frames = findings_per_run(df, lib, suites, scale)
    if not frames:
        return out
    all_f = pd.concat(frames, ignore_index=True).sort_values(["logical_date", "run_id"])
    defs = {(s, f["id"]): f for s, d in lib.reproduction.items() for f in d.get("findings", [])}
    for (suite, finding, engine_id), g in all_f.groupby(["suite", "finding", "engine_id"], sort=True):
        out.append(_calibration(suite, finding, engine_id, g, defs[(suite, finding)], scale, fact_tolerance, include_disturbed))
    return out


def _calibration(
    suite: str,
    finding: str,
    engine_id: Any,
    g: pd.DataFrame,
    fdef: dict[str, Any],
    scale: str,
    fact_tolerance: float,
    include_disturbed: bool,
) -> Calibration:
    """One finding on one engine: what its runs observed (quiet ones unless ``include_disturbed``), its band, and the proposal."""
    usable = (g["applicable"] == "yes") & g["observed"].notna()
    busy = usable & (g["disturbed"] == "yes") if not include_disturbed else usable & False
    ok = g[usable & ~busy]
    vals = [float(v) for v in ok["observed"]]
    runs = [str(r) for r in ok["run_id"]]
    band = band_at(fdef, scale)
    c = Calibration(
        suite=suite,
        finding=finding,
        kind=fdef.get("kind", "timing"),
        engine_id=str(engine_id),
        scale=scale,
        n=len(vals),
        runs=runs,
        observed=vals,
        not_applicable=int((g["applicable"] == "no").sum()),
        disturbed=int(busy.sum()),
        band=(band.min, band.max),
        seed=(fdef.get("seed") or {}).get("value"),
    )
    if vals:
        i_lo, i_hi = vals.index(min(vals)), vals.index(max(vals))
        c.min, c.min_run, c.max, c.max_run, c.median = vals[i_lo], runs[i_lo], vals[i_hi], runs[i_hi], statistics.median(vals)
        c.band_fails = (
            sum(1 for v in vals if (band.min is not None and v < band.min) or (band.max is not None and v > band.max))
            if not band.not_applicable
            else 0
        )
    c.proposed, c.rule, c.flag = propose(fdef, vals, fact_tolerance)
    if c.kind == "timing" and not band.not_applicable:
        c.proposed = (band.min, band.max)
        c.flag = f"{c.band_fails} observed value(s) outside the rule's band" if c.band_fails else ""
    if band.not_applicable:
        c.rule = f"not applied at {scale}: {band.reason}"
    c.span, c.seed_span = _spans(c.proposed if c.kind == "timing" else c.band, c.seed)
    return c


def render(cals: list[Calibration], scale: str, fact_tolerance: float) -> str:
    """A plain-text table of :func:`calibrate`'s results."""
    if not cals:
        return f"no recorded runs of scale {scale!r} with reproduction findings"
    runs = sorted({r for c in cals for r in c.runs})
    lines = [
        f"calibration at scale {scale}: {len(runs)} run(s): {', '.join(runs)}",
        f"rule: deterministic = observed range +/- {fact_tolerance:.0%} (flagged if runs spread > 2 %); timing = "
        "set by the band rule from the seed's evidence (jsonbench-dev bands; the column shows the rule's band)",
        "",
    ]
    header = (
        f"{'suite/finding':<58} {'engine':<22} {'n':>3} {'min':>10} {'median':>10} {'max':>10}  {'band now':<22} "
        f"{'fails':>5}  {'proposed':<22} {'span':>6} {'vs seed':>7}  notes"
    )
    lines.append(header)
    for c in cals:
        band = f"[{_f(c.band[0])}, {_f(c.band[1])}]"
        prop = f"[{_f(c.proposed[0])}, {_f(c.proposed[1])}]"
        note = "; ".join(
            x
            for x in (
                c.flag,
                f"min {c.min_run}" if c.min_run else "",
                f"max {c.max_run}" if c.max_run else "",
                f"{c.not_applicable} n/a" if c.not_applicable else "",
                f"{c.disturbed} disturbed, left out" if c.disturbed else "",
            )
            if x
        )
        lines.append(
            f"{(c.suite + '/' + c.finding)[:58]:<58} {c.engine_id[:22]:<22} {c.n:>3} {_f(c.min):>10} {_f(c.median):>10} "
            f"{_f(c.max):>10}  {band:<22} {c.band_fails:>5}  {prop:<22} {_f(c.span):>6} {_f(c.seed_span):>7}  {note}"
        )
    return "\n".join(lines)


def as_json(cals: list[Calibration]) -> str:
    """Proposals per suite, finding and engine, with the runs behind them."""
    out: dict[str, Any] = {}
    for c in cals:
        d = asdict(c)
        out.setdefault(c.suite, {}).setdefault(c.finding, {})[c.engine_id] = d
    return json.dumps(out, indent=1, default=str)


def _f(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.4g}"
