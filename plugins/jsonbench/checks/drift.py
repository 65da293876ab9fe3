"""The drift frame: tonight's values against the history of the same hardware, engine build and scale.

One row per (engine, workload, variant, metric) measured tonight, with the history it is compared
with and a verdict:

* ``insufficient_history``: fewer than ``min_history`` earlier runs; not judged (and said so);
* ``unstable``: the metric's own relative spread (``spread / |value|`` tonight, or its median
  over tonight and the history when larger) exceeds ``unstable_relative_spread``; reported, not judged;
* ``drift``: the change from the historical median exceeds all of the relative threshold
  (symmetric: ``|v - m| / min(|v|, |m|)``, so doubling and halving count alike), ``spread_factor``
  times the historical spread (the range of the history's values, or the typical within-run spread
  when larger) and the unit's absolute floor;
* ``ok`` otherwise.

``drift_score`` is > 1 exactly when the verdict is ``drift``; the GX drift suite expects it to be
at most 1 on every judged row. The policy comes from ``drift.json`` (see
:meth:`jsonbench.checks.library.Library.drift_policy`).
"""

from __future__ import annotations

import math
import statistics
from typing import Any

import pandas as pd

DRIFT_COLUMNS = [
    "suite", "engine_id", "engine_version", "engine_build", "workload", "variant", "metric", "unit",
    "value", "spread", "history_n", "history_median", "history_spread", "relative_spread",
    "relative_change", "lower", "upper", "drift_score", "judged", "verdict", "history_runs",
]

_KEY = ["engine_id", "engine_build", "workload", "variant", "metric"]
_BIG = 1e9  # stands for "infinitely far past this bound" in a finite, Parquet-friendly column


def _unit_policy(policy: dict[str, Any], unit: str) -> dict[str, float]:
    units = policy.get("units", {})
    spec = units.get(unit) or units.get("default") or {}
    return {"relative_threshold": float(spec.get("relative_threshold", 0.25)), "absolute_floor": float(spec.get("absolute_floor", 0.0))}


def history_of(dataset: pd.DataFrame, run: dict[str, Any], suite: str) -> pd.DataFrame:
    """Earlier published rows comparable with ``run``: same hardware label, scale and suite, status ok."""
    tonight = pd.Timestamp(run["logical_date"]) if run.get("logical_date") else None
    if tonight is not None and tonight.tzinfo is None:
        tonight = tonight.tz_localize("UTC")
    h = dataset[
        (dataset["run_id"] != run["run_id"])
        & (dataset["hardware_label"] == run["hardware_label"])
        & (dataset["scale"] == run["scale"])
        & (dataset["suite"] == suite)
        & (dataset["status"] == "ok")
    ]
    if tonight is not None:
        h = h[h["logical_date"] <= tonight]
    return h


def _score(v: float, m: float, rel_thr: float, spread: float, floor: float) -> tuple[float, float]:
    """``(relative_change, drift_score)``: the score is the smallest of the three exceedance ratios."""
    diff = abs(v - m)
    base = min(abs(v), abs(m))
    rel = diff / base if base > 0 else (0.0 if diff == 0 else _BIG)
    ratios = [rel / rel_thr if rel_thr > 0 else _BIG]
    ratios.append(diff / spread if spread > 0 else (_BIG if diff > 0 else 0.0))
    ratios.append(diff / floor if floor > 0 else (_BIG if diff > 0 else 0.0))
    return min(rel, _BIG), min(min(ratios), _BIG)


def _bounds(m: float, rel_thr: float, spread: float, floor: float) -> tuple[float, float]:
    """The band around the median inside which a value is never flagged."""
    up = max(abs(m) * rel_thr, spread, floor)
    down = max((abs(m) - abs(m) / (1 + rel_thr)) if rel_thr > 0 else 0.0, spread, floor)
    # A non-negative quantity (every metric so far) has no room below zero.
    return (max(m - down, 0.0) if m >= 0 else m - down), m + up


def drift_frame(tonight: pd.DataFrame, dataset: pd.DataFrame, run: dict[str, Any], suite: str, policy: dict[str, Any]) -> pd.DataFrame:
    """Judge every measured metric of ``suite`` in tonight's rows against ``dataset``'s history."""
    min_history = int(policy.get("min_history", 3))
    window = int(policy.get("window", 10))
    factor = float(policy.get("spread_factor", 1.0))
    unstable = float(policy.get("unstable_relative_spread", 0.25))
    include = policy.get("include_metrics")
    exclude = set(policy.get("exclude_metrics") or [])

    now = tonight[(tonight["suite"] == suite) & (tonight["status"] == "ok")].copy()
    if include:
        now = now[now["metric"].isin(include)]
    now = now[~now["metric"].isin(exclude)]
    hist = history_of(dataset, run, suite).copy()
    for df in (now, hist):
        df["engine_build"] = df["engine_build"].fillna("")
    groups = {k: g for k, g in hist.groupby(_KEY, sort=False)} if not hist.empty else {}

    rows: list[dict[str, Any]] = []
    for r in now.itertuples(index=False):
        key = (r.engine_id, r.engine_build, r.workload, r.variant, r.metric)
        g = groups.get(key)
        if g is not None:
            g = g.sort_values("logical_date").drop_duplicates("run_id", keep="last").tail(window)
        h = [] if g is None else [float(x) for x in g["value"] if pd.notna(x)]
        hs = [] if g is None else [float(x) for x in g["spread"].fillna(0.0)]
        value = float(r.value)
        spread = 0.0 if pd.isna(r.spread) else float(r.spread)
        pol = _unit_policy(policy, r.unit)
        row: dict[str, Any] = {
            "suite": suite, "engine_id": r.engine_id, "engine_version": r.engine_version, "engine_build": r.engine_build,
            "workload": r.workload, "variant": r.variant, "metric": r.metric, "unit": r.unit,
            "value": value, "spread": spread, "history_n": len(h),
            "history_median": None, "history_spread": None, "relative_spread": None, "relative_change": None,
            "lower": None, "upper": None, "drift_score": None, "judged": "no", "verdict": "insufficient_history",
            "history_runs": ",".join([] if g is None else [str(x) for x in g["run_id"]]),
        }
        # Own noise: tonight's relative spread, or the typical one of its history when larger. A
        # noisy night (one slow sample of two) is then "unstable", not drift.
        rel_spreads = [s / abs(v) for v, s in zip([value, *h], [spread, *hs]) if v != 0 and math.isfinite(v)]
        tonight_rel = spread / abs(value) if value != 0 else 0.0
        row["relative_spread"] = max(tonight_rel, statistics.median(rel_spreads)) if rel_spreads else tonight_rel
        if len(h) >= min_history:
            m = statistics.median(h)
            hist_spread = max(max(h) - min(h), statistics.median(hs) if hs else 0.0) * factor
            rel, score = _score(value, m, pol["relative_threshold"], hist_spread, pol["absolute_floor"])
            lower, upper = _bounds(m, pol["relative_threshold"], hist_spread, pol["absolute_floor"])
            row.update(history_median=m, history_spread=hist_spread, relative_change=rel, lower=lower, upper=upper, drift_score=score)
            if row["relative_spread"] > unstable:
                row["verdict"] = "unstable"
            else:
                row["judged"] = "yes"
                row["verdict"] = "drift" if score > 1 else "ok"
        rows.append(row)
    frame = pd.DataFrame(rows, columns=DRIFT_COLUMNS)
    for col in ("value", "spread", "history_median", "history_spread", "relative_spread", "relative_change", "lower", "upper", "drift_score"):
        frame[col] = pd.to_numeric(frame[col], errors="coerce").astype("float64")
    frame["history_n"] = frame["history_n"].astype("int64")
    return frame


def drift_expectations(policy: dict[str, Any]) -> list[dict[str, Any]]:
    """Expectation entries (library format) for a drift frame."""
    return [
        {
            "type": "expect_column_values_to_be_between",
            "kwargs": {"column": "drift_score", "min_value": 0, "max_value": 1},
            "where": {"judged": "yes"},
            "meta": {
                "notes": "no judged metric moved past its drift bounds (relative threshold, historical spread and absolute floor all exceeded)",
                "policy": {k: policy.get(k) for k in ("min_history", "window", "spread_factor", "unstable_relative_spread")},
                "generated": True,
            },
        },
        *(policy.get("expectations") or []),
    ]
