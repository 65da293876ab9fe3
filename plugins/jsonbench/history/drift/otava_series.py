"""Series handed to Apache Otava's change-point detection, and rows judged by the change points it finds.

A statistical series without a calibration entry is judged by Otava alone: E-divisive means with Student's t-test
significance (``max_pvalue``) and a minimum relative magnitude per unit (``min_magnitude``), over the series of
history plus tonight, each run contributing its per-repetition samples (``points: "samples"``), its best repetition
(``"best"``) or its published value (``"runs"``). A change point counts as drift when it starts at one of the last
``recent_runs`` runs (tonight included): older ones were reported when they were new, and are listed, not alarmed.

A calibrated series' history is handed to Otava too, only to find where its current level starts (:func:`segment_cuts`).
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass
from typing import Any

from jsonbench.dataset.measurement import finite_float
from jsonbench.history.drift.policy import Settings
from jsonbench.history.drift.rows import iso, relative
from jsonbench.history.drift.selection import not_judgeable, quiet_runs
from jsonbench.history.hostspeed import DURATION_UNITS, RATE_UNITS
from jsonbench.history.noise import statistic
from jsonbench.history.rules import Rule


@dataclass(frozen=True)
class OtavaSeries:
    """One statistical row's series for the detector: its points, the run each point belongs to (an index into
    ``runs``), the runs' ids and dates, and the rule's minimum magnitude."""

    row: int
    values: list[float]
    owner: list[int]
    runs: list[dict[str, Any]]
    min_magnitude: float


def points(row: Any, mode: str) -> list[float]:
    """The points one run adds to a statistical series.

    ``samples``: every repetition; ``runs``: the published value; ``best``: the best repetition
    (the fastest duration, the highest rate), which noise on a shared machine moves least; of a figure that rests on
    several engine starts, each start's best averaged (:func:`jsonbench.history.noise.statistic`, the one statistic).
    """
    if mode == "best" and getattr(row, "unit", "") in RATE_UNITS | DURATION_UNITS:
        best = statistic(str(row.unit), None, getattr(row, "samples", None), getattr(row, "extra", None))
        if best is not None:
            return [best]
    if mode == "samples":
        samples = getattr(row, "samples", None)
        if samples is not None and len(samples):
            pts = [float(s) for s in samples if s is not None and math.isfinite(float(s))]
            if pts:
                return pts
    v = finite_float(row.value)
    return [] if v is None else [v]


def statistical_series(
    row: dict[str, Any], idx: int, g: list[Any], r: Any, rule: Rule, run: dict[str, Any], s: Settings
) -> tuple[dict[str, Any], OtavaSeries | None]:
    """The row's fields (its history and reference band: the median of the history's published values, widened by the
    unit's minimum magnitude) and its series for the detector, or None when it is not judged.

    Quiet history only, and tonight only if quiet.
    """
    usable = quiet_runs(g, s.window)
    out: dict[str, Any] = {"history_n": len(usable), "history_runs": json.dumps([str(x.run_id) for x in usable])}
    why_not = not_judgeable({**row, **out}, len(usable), s.min_history, "change-point detection")
    if why_not is not None:
        return {**out, **why_not}, None
    runs: list[dict[str, Any]] = []
    values: list[float] = []
    owner: list[int] = []
    for i, x in enumerate([*usable, r]):
        pts = points(x, s.mode)
        values += pts
        owner += [i] * len(pts)
        earlier = i < len(usable)
        runs.append(
            {
                "run_id": str(x.run_id) if earlier else run["run_id"],
                "logical_date": iso(x.logical_date) if earlier else iso(run.get("logical_date")),
            }
        )
    value = row["value"]
    ref = statistics.median([v for x in usable if (v := finite_float(x.value)) is not None] or [value])
    out.update(
        reference=ref, lower=ref / (1 + rule.min_magnitude), upper=ref * (1 + rule.min_magnitude), relative_change=relative(ref, value)
    )
    return out, OtavaSeries(idx, values, owner, runs, rule.min_magnitude)


def judge_by_change_points(series: OtavaSeries, cps: list[Any], version: str, recent: int) -> dict[str, Any]:
    """A statistical row judged by the detector's change points: drift when one starts in the last ``recent`` runs."""
    n_runs = len(series.runs)
    listed = []
    score = 0.0
    for cp in cps:
        run_i = series.owner[cp.index] if 0 <= cp.index < len(series.owner) else n_runs - 1
        listed.append(
            {
                **series.runs[run_i],
                "metric_before": cp.mean_before,
                "metric_after": cp.mean_after,
                "relative_change": cp.forward_change,
                "pvalue": cp.pvalue,
                "magnitude": cp.magnitude,
            }
        )
        if run_i >= n_runs - recent:
            min_mag = series.min_magnitude
            score = max(score, cp.magnitude / min_mag if min_mag > 0 else 1e9)
    out: dict[str, Any] = {
        "change_points": json.dumps(listed, default=str),
        "drift_score": score if score else 0.0,
        "judged": "yes",
        "verdict": "drift" if score > 1 else "ok",
        "method": f"otava {version}".strip(),
    }
    if score <= 1 and listed:
        out["note"] = f"{len(listed)} earlier change point(s), none in the last {recent} runs"
    return out


def segment_cuts(cps: list[Any], history: int, windows: int) -> list[int]:
    """Where the change points Otava found in a calibrated series' ``history`` runs start a new level, leaving the last
    ``windows - 1`` runs to the window test (each cut is an index into the history)."""
    return [cp.index for cp in cps if 0 < cp.index < history - (windows - 1)]
