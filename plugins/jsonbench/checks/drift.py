"""Drift: tonight's values against the history of the same hardware label, engine build and scale.

One row per (engine, workload, variant, metric) measured tonight. History is every earlier
published run of the same hardware label, scale and suite (status ok), at most ``window`` runs, of
the same engine id and engine build. How a metric is judged follows its kind
(:data:`jsonbench.dataset.measurement.MetricKind`), which the suite declares beside the metric: the
row's ``metric_kind`` column, or for rows written before that column existed the suite's
:meth:`~jsonbench.suites.base.Suite.metric_kind`. No pattern over names or units guesses it.

* **deterministic** (counts, sizes, plan facts, matched rows): tonight against the median of the
  history, within a tight relative ``tolerance`` (and an absolute ``floor``; a suite may set either
  per metric in ``<suite>.drift.json`` under ``tolerances``); one earlier run is enough
  (``deterministic_min_history``). ``change_points`` lists every run whose value differs from the
  run before it beyond the tolerance. Method ``relative_tolerance``.
* **statistical** (kinds ``timed`` and ``sampled``: timings, rates, ANALYZE's estimates, WAL volumes
  and HOT counts of timed runs; a metric whose kind nobody declares lands here too, with a note):
  Apache Otava's change-point detection
  (E-divisive means, Student's t-test significance, ``max_pvalue``, and a minimum relative
  magnitude per unit, ``min_magnitude``) over the series of history plus tonight, each run
  contributing its per-repetition samples (``points: "samples"``) or its published value
  (``"runs"``). A change point counts as drift when it starts at one of the last ``recent_runs``
  runs (tonight included): older ones were reported when they were new, and are listed, not
  alarmed. Method ``otava``.

Disturbed windows: a measurement row whose ``quiet`` column is false (the host was busy beyond the
matrix's ``quiet_window`` threshold during its measure windows) is left out of every statistical
history, and tonight's disturbed timing rows are reported as ``disturbed``, not judged: a busy hour
is not a regression. Deterministic metrics are judged either way (a busy hour changes no count).
Rows without the column (older runs) count as quiet.

Verdicts: ``ok``, ``drift``, ``insufficient_history`` (too few usable earlier runs; not judged),
``disturbed`` (see above), ``excluded`` (the policy leaves the metric out), ``missing`` (the engine's
previous run of this build published the metric, measured or not applicable, and tonight's did not:
completeness per variant, which the suite's ``expected_metrics()`` cannot express). ``drift_score`` is > 1
exactly when the verdict is ``drift``; the GX drift suite expects it in [0, 1] on every judged row.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from jsonbench.dataset.measurement import METRIC_KINDS, MetricKind

DRIFT_COLUMNS = [
    "suite",
    "engine_id",
    "engine_version",
    "engine_build",
    "workload",
    "variant",
    "metric",
    "unit",
    "value",
    "spread",
    "history_n",
    "reference",
    "lower",
    "upper",
    "relative_change",
    "drift_score",
    "judged",
    "verdict",
    "method",
    "metric_kind",
    "declared_kind",
    "history_runs",
    "change_points",
    "quiet",
    "host_other_cpu",
    "note",
]

_KEY = ["engine_id", "engine_build", "workload", "variant", "metric"]
VERDICTS = ("ok", "drift", "insufficient_history", "disturbed", "excluded", "missing")


@dataclass(frozen=True)
class Rule:
    """How one metric is judged: deterministic with a tolerance, or statistically with a minimum magnitude.

    ``declared`` is the metric's kind as its suite declares it (None: nobody declared one, judged
    statistically, which never raises an exact-comparison alarm on a guess).
    """

    kind: str  # deterministic | statistical
    tolerance: float = 0.0
    floor: float = 0.0
    min_magnitude: float = 0.5
    declared: MetricKind | None = None


def declared_kinds(suite: str) -> Callable[[str, str], MetricKind | None]:
    """``(workload, metric) -> kind`` as the suite declares it; None for what it does not declare (or an unknown suite)."""
    from jsonbench.errors import BenchmarkError
    from jsonbench.suites import get_suite

    try:
        declared = get_suite(suite)
    except BenchmarkError:
        return lambda workload, metric: None

    def kind(workload: str, metric: str) -> MetricKind | None:
        try:
            return declared.metric_kind(workload, metric)
        except BenchmarkError:
            return None

    return kind


def declared_kind(suite: str, workload: str, metric: str) -> MetricKind | None:
    """The suite's declaration of ``metric``'s kind, or None when the suite is unknown or does not declare it."""
    return declared_kinds(suite)(workload, metric)


def _kind_of(value: Any) -> MetricKind | None:
    """A row's ``metric_kind`` cell as a kind (None: null, or a value no kind has)."""
    return value if isinstance(value, str) and value in METRIC_KINDS else None


def rule_for(
    policy: dict[str, Any], suite: str, workload: str, variant: str, metric: str, unit: str, kind: MetricKind | None = None
) -> Rule:
    """The rule of a metric of ``kind`` (default: the suite's declaration, :func:`declared_kind`).

    ``deterministic`` is judged within the policy's ``tolerance``, or the suite's own for this metric
    (``tolerances`` in ``<suite>.drift.json``: ``{"<metric>" or "<workload>/<metric>": number or
    {"tolerance", "floor"}}``); ``sampled`` and ``timed`` statistically, with the unit's minimum magnitude.
    """
    if kind is None:
        kind = declared_kind(suite, workload, metric)
    if kind == "deterministic":
        tolerances = policy.get("tolerances") or {}
        own = tolerances.get(f"{workload}/{metric}", tolerances.get(metric))
        spec = own if isinstance(own, dict) else ({} if own is None else {"tolerance": own})
        return Rule(
            "deterministic",
            tolerance=float(spec.get("tolerance", policy.get("tolerance", 0.02))),
            floor=float(spec.get("floor", 0.0)),
            declared=kind,
        )
    mags = policy.get("min_magnitude") or {}
    units = mags.get("units") or {}
    return Rule("statistical", min_magnitude=float(units.get(unit, mags.get("default", 0.5))), declared=kind)


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


def _quiet(row: Any) -> bool | None:
    """The row's ``quiet`` flag, or None when the run did not record one (read defensively)."""
    q = getattr(row, "quiet", None)
    if q is None or (isinstance(q, float) and math.isnan(q)) or q is pd.NA:
        return None
    return bool(q)


def _fill_quiet(df: pd.DataFrame) -> pd.DataFrame:
    """A row whose ``quiet`` is null in a cell that recorded it elsewhere takes the cell's verdict.

    The measure windows record ``quiet``; rows timed outside them (the setup task's load, index and
    vacuum times) come back null. They ran on the same host during the same cell, so they are as
    disturbed as the cell's worst window: leaving them "unknown" (judged as quiet) would let a busy
    hour's load times raise drift alarms. Runs that recorded no ``quiet`` at all stay null (quiet).
    """
    if "quiet" not in df.columns or df.empty:
        return df
    cell: dict[tuple[Any, Any], bool] = {}
    for rid, eid, q in zip(df["run_id"], df["engine_id"], df["quiet"], strict=True):
        if q is None or q is pd.NA or (isinstance(q, float) and math.isnan(q)):
            continue
        cell[(rid, eid)] = cell.get((rid, eid), True) and bool(q)
    if not cell:
        return df
    filled = [
        q if not (q is None or q is pd.NA or (isinstance(q, float) and math.isnan(q))) else cell.get((rid, eid))
        for rid, eid, q in zip(df["run_id"], df["engine_id"], df["quiet"], strict=True)
    ]
    df = df.copy()
    df["quiet"] = pd.Series(filled, index=df.index, dtype="object")
    return df


def _num(x: Any) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


#: Units where larger is better (a busy machine lowers them); every other timing unit is a duration.
RATE_UNITS = {"tps"}
DURATION_UNITS = {"ms", "s", "us", "ns", "ns/row"}


def _points(row: Any, mode: str) -> list[float]:
    """The points one run adds to a statistical series.

    ``samples``: every repetition; ``runs``: the published value; ``best``: the best repetition
    (the fastest duration, the highest rate), which noise on a shared machine moves least.
    """
    if mode == "best" and getattr(row, "unit", "") in RATE_UNITS | DURATION_UNITS:
        samples = getattr(row, "samples", None)
        pts = [float(x) for x in samples if x is not None and math.isfinite(float(x))] if samples is not None and len(samples) else []
        if pts:
            return [max(pts) if getattr(row, "unit", "") in RATE_UNITS else min(pts)]
    if mode == "samples":
        samples = getattr(row, "samples", None)
        if samples is not None and len(samples):
            pts = [float(s) for s in samples if s is not None and math.isfinite(float(s))]
            if pts:
                return pts
    v = _num(row.value)
    return [] if v is None else [v]


def _iso(ts: Any) -> str | None:
    if ts is None or (isinstance(ts, float) and math.isnan(ts)) or ts is pd.NaT:
        return None
    return pd.Timestamp(ts).isoformat()


def _rel(before: float, after: float) -> float | None:
    return (after - before) / abs(before) if before else None


@dataclass(frozen=True)
class _Settings:
    """The policy's knobs for one drift frame, read once before any row is judged."""

    min_history: int
    det_min_history: int
    window: int
    recent: int
    mode: str
    include: Any
    exclude: set[Any]

    @classmethod
    def of(cls, policy: dict[str, Any]) -> _Settings:
        return cls(
            min_history=int(policy.get("min_history", 4)),
            det_min_history=int(policy.get("deterministic_min_history", 1)),
            window=int(policy.get("window", 30)),
            recent=int(policy.get("recent_runs", 3)),
            mode=str(policy.get("points", "samples")),
            include=policy.get("include_metrics"),
            exclude=set(policy.get("exclude_metrics") or []),
        )


#: One statistical series handed to the detector: its points and the rule's minimum magnitude.
_Series = tuple[list[float], float]
#: Where a series' change points land: the row's index in ``rows``, the run each point belongs to, and the runs' ids and dates.
_SeriesMeta = tuple[int, list[int], list[dict[str, Any]]]


def _history_series(hist: pd.DataFrame) -> dict[tuple[Any, ...], list[Any]]:
    """One pass over the history, oldest first: per series key, one record per run (the last one wins)."""
    groups: dict[tuple[Any, ...], list[Any]] = {}
    if not hist.empty:
        for x in hist.sort_values(["logical_date", "run_id"]).itertuples(index=False):
            series = groups.setdefault((x.engine_id, x.engine_build, x.workload, x.variant, x.metric), [])
            if series and series[-1].run_id == x.run_id:
                series[-1] = x
            else:
                series.append(x)
    return groups


def _tonight_row(suite: str, r: Any, rule: Rule) -> dict[str, Any]:
    """Tonight's row as it stands before judging: not judged, ``insufficient_history`` until a check says otherwise."""
    return {
        "suite": suite,
        "engine_id": r.engine_id,
        "engine_version": r.engine_version,
        "engine_build": r.engine_build,
        "workload": r.workload,
        "variant": r.variant,
        "metric": r.metric,
        "unit": r.unit,
        "value": _num(r.value),
        "spread": _num(r.spread),
        "history_n": 0,
        "reference": None,
        "lower": None,
        "upper": None,
        "relative_change": None,
        "drift_score": None,
        "judged": "no",
        "verdict": "insufficient_history",
        "method": "relative_tolerance" if rule.kind == "deterministic" else "otava",
        # How it is judged (the checks' tag: exact facts vs statistical), and the kind its suite declares.
        "metric_kind": "deterministic" if rule.kind == "deterministic" else "timing",
        "declared_kind": rule.declared,
        "history_runs": "[]",
        "change_points": "[]",
        "quiet": _quiet(r),
        "host_other_cpu": _num(getattr(r, "host_other_cpu", None)),
        "note": "",
    }


#: The note of a row whose kind neither its row nor its suite declares.
UNDECLARED = "no declared kind (neither the row nor the suite names one): judged statistically"


def _judge_deterministic(row: dict[str, Any], g: list[Any], rule: Rule, value: float, run: dict[str, Any], s: _Settings) -> None:
    """Tonight against the median of the last ``window`` runs, within the rule's tolerance and floor (updates ``row``)."""
    h = [(str(x.run_id), x.logical_date, v) for x in g[-s.window :] if (v := _num(x.value)) is not None]
    row["history_n"] = len(h)
    row["history_runs"] = json.dumps([t[0] for t in h])
    if len(h) < s.det_min_history:
        row["note"] = f"{len(h)} earlier run(s); a deterministic metric needs {s.det_min_history}"
        return
    ref = statistics.median([t[2] for t in h])
    allowed = max(rule.tolerance * abs(ref), rule.floor)
    row.update(reference=ref, lower=ref - allowed, upper=ref + allowed, relative_change=_rel(ref, value))
    score = abs(value - ref) / allowed if allowed > 0 else (0.0 if value == ref else 1e9)
    cps = _deterministic_change_points([*h, (run["run_id"], run.get("logical_date"), value)], rule)
    row.update(
        drift_score=min(score, 1e9),
        judged="yes",
        verdict="drift" if score > 1 else "ok",
        change_points=json.dumps(cps, default=str),
    )


def _deterministic_change_points(series: list[tuple[Any, Any, float]], rule: Rule) -> list[dict[str, Any]]:
    """Every run (id, date, value) whose value differs from the run before it beyond the rule's tolerance."""
    cps = []
    for (_, _, before), (rid, ld, after) in zip(series, series[1:], strict=False):
        if abs(after - before) > max(rule.tolerance * abs(before), rule.floor):
            cps.append(
                {
                    "run_id": rid,
                    "logical_date": _iso(ld),
                    "metric_before": before,
                    "metric_after": after,
                    "relative_change": _rel(before, after),
                    "pvalue": None,
                }
            )
    return cps


def _statistical_series(
    row: dict[str, Any], g: list[Any], r: Any, rule: Rule, value: float, run: dict[str, Any], s: _Settings
) -> tuple[list[float], list[int], list[dict[str, Any]]] | None:
    """The points, their runs and the runs' ids and dates for change-point detection, or None when not judged.

    Quiet history only, and tonight only if quiet. Updates ``row`` with the history and the reference band
    (the median of the history's published values, widened by the unit's minimum magnitude).
    """
    usable = [x for x in g if _quiet(x) is not False]
    usable = usable[-s.window :]
    row["history_n"] = len(usable)
    row["history_runs"] = json.dumps([str(x.run_id) for x in usable])
    if row["quiet"] is False:
        row.update(
            verdict="disturbed",
            note=f"measured while the host was busy (host_other_cpu {row['host_other_cpu']}); not judged, left out of later histories",
        )
        return None
    if len(usable) < s.min_history:
        row["note"] = f"{len(usable)} quiet earlier run(s); change-point detection needs {s.min_history}"
        return None
    runs_meta: list[dict[str, Any]] = []
    values: list[float] = []
    owner: list[int] = []
    for i, x in enumerate([*usable, r]):
        pts = _points(x, s.mode)
        values += pts
        owner += [i] * len(pts)
        runs_meta.append(
            {
                "run_id": str(x.run_id) if i < len(usable) else run["run_id"],
                "logical_date": _iso(x.logical_date) if i < len(usable) else _iso(run.get("logical_date")),
            }
        )
    ref = statistics.median([v for x in usable if (v := _num(x.value)) is not None] or [value])
    row.update(reference=ref, lower=ref / (1 + rule.min_magnitude), upper=ref * (1 + rule.min_magnitude), relative_change=_rel(ref, value))
    return values, owner, runs_meta


def _missing_rows(tonight: pd.DataFrame, suite: str, groups: dict[tuple[Any, ...], list[Any]], window: int) -> list[dict[str, Any]]:
    """A metric the engine's previous run published (measured or not applicable) and tonight's did not: lost.

    Completeness (sanity) knows the suite's (workload, metric) pairs; this also sees a lost variant.
    """
    tonight_keys = {
        (r.engine_id, r.engine_build, r.workload, r.variant, r.metric)
        for r in tonight[tonight["suite"] == suite].assign(engine_build=lambda f: f["engine_build"].fillna("")).itertuples(index=False)
    }
    engines = {(k[0], k[1]) for k in tonight_keys}
    last_run: dict[tuple[str, str], Any] = {}
    for key, series in groups.items():
        e = (key[0], key[1])
        if e in engines and series:
            x = series[-1]
            if e not in last_run or (x.logical_date, x.run_id) > (last_run[e].logical_date, last_run[e].run_id):
                last_run[e] = x
    rows: list[dict[str, Any]] = []
    for key, series in groups.items():
        e = (key[0], key[1])
        if e not in last_run or key in tonight_keys or not series or series[-1].run_id != last_run[e].run_id:
            continue
        x = series[-1]
        rows.append(
            {
                "suite": suite,
                "engine_id": x.engine_id,
                "engine_version": x.engine_version,
                "engine_build": x.engine_build,
                "workload": x.workload,
                "variant": x.variant,
                "metric": x.metric,
                "unit": x.unit,
                "value": None,
                "spread": None,
                "history_n": len(series),
                "reference": _num(x.value),
                "lower": None,
                "upper": None,
                "relative_change": None,
                "drift_score": 1e9,
                "judged": "yes",
                "verdict": "missing",
                "method": "published_before",
                "metric_kind": "deterministic",
                "declared_kind": _kind_of(getattr(x, "metric_kind", None)),
                "history_runs": json.dumps([str(y.run_id) for y in series[-window:]]),
                "change_points": "[]",
                "quiet": None,
                "host_other_cpu": None,
                "note": f"published by the previous run of this build ({x.run_id}) and missing tonight",
            }
        )
    return rows


def _apply_change_points(
    rows: list[dict[str, Any]],
    pending: dict[str, _Series],
    pending_meta: dict[str, _SeriesMeta],
    found: dict[str, Any],
    version: str,
    recent: int,
) -> None:
    """Judge each statistical row by the detector's change points: drift when one starts in the last ``recent`` runs."""
    for sid, cps in found.items():
        idx, owner, runs_meta = pending_meta[sid]
        row = rows[idx]
        n_runs = len(runs_meta)
        listed = []
        score = 0.0
        for cp in cps:
            run_i = owner[cp.index] if 0 <= cp.index < len(owner) else n_runs - 1
            meta = runs_meta[run_i]
            listed.append(
                {
                    **meta,
                    "metric_before": cp.mean_before,
                    "metric_after": cp.mean_after,
                    "relative_change": cp.forward_change,
                    "pvalue": cp.pvalue,
                    "magnitude": cp.magnitude,
                }
            )
            if run_i >= n_runs - recent:
                min_mag = pending[sid][1]
                score = max(score, cp.magnitude / min_mag if min_mag > 0 else 1e9)
        row.update(
            change_points=json.dumps(listed, default=str),
            drift_score=score if score else 0.0,
            judged="yes",
            verdict="drift" if score > 1 else "ok",
            method=f"otava {version}".strip(),
        )
        if score <= 1 and listed:
            row["note"] = f"{len(listed)} earlier change point(s), none in the last {recent} runs"


def _typed_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The rows as a frame of ``DRIFT_COLUMNS`` with numeric columns as float64 and ``quiet`` as yes/no/unknown."""
    frame = pd.DataFrame(rows, columns=DRIFT_COLUMNS)
    for col in ("value", "spread", "reference", "lower", "upper", "relative_change", "drift_score", "host_other_cpu"):
        frame[col] = pd.to_numeric(frame[col], errors="coerce").astype("float64")
    frame["history_n"] = frame["history_n"].astype("int64")
    frame["quiet"] = frame["quiet"].map(lambda v: "unknown" if v is None else ("yes" if v else "no"))
    return frame


def drift_frame(
    tonight: pd.DataFrame,
    dataset: pd.DataFrame,
    run: dict[str, Any],
    suite: str,
    policy: dict[str, Any],
    detector: Any = None,
    kinds: Callable[[str, str], MetricKind | None] | None = None,
) -> pd.DataFrame:
    """Judge every measured metric of ``suite`` in tonight's rows against ``dataset``'s history.

    A row's kind is its ``metric_kind`` column, else ``kinds(workload, metric)`` (default: the
    suite's declaration, :func:`declared_kind`; a test may pass another).
    ``detector`` is :func:`jsonbench.checks.changepoints.detect` unless a test passes another. Deterministic
    metrics are judged row by row; statistical ones are collected and handed to the detector in one call
    (Otava runs in its own venv: one subprocess serves every series), then judged by its change points.
    """
    if detector is None:
        from jsonbench.checks.changepoints import detect as detector
    s = _Settings.of(policy)
    now = _fill_quiet(tonight[(tonight["suite"] == suite) & (tonight["status"] == "ok")].copy())
    hist = _fill_quiet(history_of(dataset, run, suite).copy())
    for df in (now, hist):
        df["engine_build"] = df["engine_build"].fillna("")
    groups = _history_series(hist)

    rows: list[dict[str, Any]] = []
    pending: dict[str, _Series] = {}
    pending_meta: dict[str, _SeriesMeta] = {}
    ask = kinds or declared_kinds(suite)
    declared: dict[tuple[str, str], MetricKind | None] = {}
    for r in now.itertuples(index=False):
        kind = _kind_of(getattr(r, "metric_kind", None))
        if kind is None:
            if (r.workload, r.metric) not in declared:
                declared[(r.workload, r.metric)] = ask(r.workload, r.metric)
            kind = declared[(r.workload, r.metric)]
        rule = rule_for(policy, suite, r.workload, r.variant, r.metric, r.unit, kind)
        row = _tonight_row(suite, r, rule)
        rows.append(row)
        value = row["value"]
        if (s.include and r.metric not in s.include) or r.metric in s.exclude or value is None:
            row.update(verdict="excluded", note="left out by the drift policy" if value is not None else "no value")
            continue
        g = groups.get((r.engine_id, r.engine_build, r.workload, r.variant, r.metric)) or []
        if rule.kind == "deterministic":
            _judge_deterministic(row, g, rule, value, run, s)
            continue
        series = _statistical_series(row, g, r, rule, value, run, s)
        if series is not None:
            values, owner, runs_meta = series
            sid = str(len(pending))
            pending[sid] = (values, rule.min_magnitude)
            pending_meta[sid] = (len(rows) - 1, owner, runs_meta)

    rows += _missing_rows(tonight, suite, groups, s.window)
    if pending:
        version, found = detector(pending, window_len=int(policy.get("window_len", 30)), max_pvalue=float(policy.get("max_pvalue", 0.001)))
        _apply_change_points(rows, pending, pending_meta, found, version, s.recent)
    for row in rows:
        if row["declared_kind"] is None and row["verdict"] != "missing":
            row["note"] = f"{UNDECLARED}; {row['note']}" if row["note"] else UNDECLARED
    return _typed_frame(rows)


def drift_expectations(policy: dict[str, Any]) -> list[dict[str, Any]]:
    """Expectation entries (library format) for a drift frame."""
    return [
        {
            "type": "expect_column_values_to_be_between",
            "kwargs": {"column": "drift_score", "min_value": 0, "max_value": 1},
            "where": {"judged": "yes"},
            "meta": {
                "notes": "no judged metric drifted: no significant change point (Otava, p < max_pvalue, magnitude > "
                "min_magnitude) starts in the last recent_runs runs, and no deterministic metric left its tolerance",
                "policy": {
                    k: policy.get(k) for k in ("min_history", "deterministic_min_history", "window", "recent_runs", "max_pvalue", "points")
                },
                "generated": True,
            },
        },
        *(policy.get("expectations") or []),
    ]
