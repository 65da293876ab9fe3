"""One suite judged as far as it can be before the run's false-discovery control, stage after stage.

1. its history (:func:`~jsonbench.history.drift.selection.select_history`);
2. each of tonight's rows by its kind: left out by the policy, a polled peak, a deterministic fact, a figure that never
   moved (judged exactly), a calibrated series
   (its history handed to Otava to find where its level starts), or an uncalibrated statistical one (handed to Otava
   to be judged); then the metrics tonight lost;
3. Otava's change points over every series handed to it, in one call;
4. the notes every row shares (an undeclared kind, a history that restarted);
5. each calibrated series beyond the host (the canary) and through its window test.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from jsonbench.compare.inherit import ComparedBuild
from jsonbench.dataset.measurement import MetricKind, finite_float, is_polled_peak
from jsonbench.history.drift.facts import judge_deterministic, judge_polled_peak, judge_still_series, missing_rows
from jsonbench.history.drift.otava_series import OtavaSeries, judge_by_change_points, segment_cuts, statistical_series
from jsonbench.history.drift.policy import Settings
from jsonbench.history.drift.rows import UNDECLARED, kind_of, series_key, tonight_row
from jsonbench.history.drift.selection import SuiteHistory, select_history
from jsonbench.history.drift.series import CalibratedSeries, calibrated_series, calibration_entry, learn_from_family, take_canary_out
from jsonbench.history.drift.window import WindowedSeries, window_test
from jsonbench.history.noise import tail_of
from jsonbench.history.rules import declared_kinds, rule_for
from jsonbench.history.stats import thresholds

#: What the detector is asked per series: its points and the minimum magnitude of a change.
Request = dict[str, tuple[list[float], float]]
#: A kind lookup, ``(workload, metric) -> kind``, as a suite declares them.
Kinds = Callable[[str, str], MetricKind | None]


@dataclass(frozen=True)
class Judging:
    """What every suite of a run is judged with: tonight's rows, the history, the run, the change-point detector, the
    calibration record (None: judged without one), the canary table of the dataset (tonight's run included) and the
    published comparisons a build without an entry of its own inherits its noise through (``compared``)."""

    tonight: pd.DataFrame
    dataset: pd.DataFrame
    run: dict[str, Any]
    detector: Any
    record: Any
    canary: Any = None
    compared: tuple[ComparedBuild, ...] = ()


@dataclass(frozen=True)
class PreparedSuite:
    """One suite's drift rows before the run's false-discovery control, and its calibrated series, tested."""

    rows: list[dict[str, Any]]
    tested: list[WindowedSeries] = field(default_factory=list)


@dataclass
class _FirstPass:
    """Tonight's rows judged by what needs no detector, and what the detector is asked (``request``): the uncalibrated
    series it judges (``otava``) and the calibrated ones it segments (``segments``), both by request id. Filled row
    by row within :func:`_first_pass`, and read, never changed, after it."""

    rows: list[dict[str, Any]]
    calibrated: list[CalibratedSeries]
    request: Request
    otava: dict[str, OtavaSeries]
    segments: dict[str, int]  # request id -> index into ``calibrated``


def prepare_suite(j: Judging, suite: str, policy: dict[str, Any], kinds: Kinds | None = None) -> PreparedSuite:
    """Every row of ``suite`` judged as far as it can be before the run's false-discovery control (see the module)."""
    s = Settings.of(policy)
    h = select_history(j.tonight, j.dataset, j.run, suite)
    first = _first_pass(j, suite, policy, kinds or declared_kinds(suite), s, h)
    rows = [*first.rows, *missing_rows(j.tonight, suite, h.series, s.window, s.retired)]
    calibrated = learn_from_family(first.calibrated)
    rows = _with_sigmas(rows, calibrated)
    if first.request:
        version, found = j.detector(
            first.request, window_len=int(policy.get("window_len", 30)), max_pvalue=float(policy.get("max_pvalue", 0.001))
        )
        rows = _judged_by_otava(rows, first.otava, found, version, s.recent)
        rows, calibrated = _segmented(rows, calibrated, first.segments, found, s.windows)
    rows = [_with_shared_notes(row, h.restarts) for row in rows]
    tail = (j.record or {}).get("tails") or {}
    tested = [
        window_test(
            take_canary_out(c, rows[c.row], j.canary, policy, (j.record or {}).get("canary_fit")),
            s.windows,
            s.calibrated_min_history,
            tail_of(tail, suite, c.kind),
        )
        for c in calibrated
    ]
    return PreparedSuite(rows, tested)


def _first_pass(j: Judging, suite: str, policy: dict[str, Any], ask: Kinds, s: Settings, h: SuiteHistory) -> _FirstPass:
    """Tonight's rows one by one, judged as far as no detector is needed (:func:`_judge_row`)."""
    first = _FirstPass([], [], {}, {}, {})
    declared: dict[tuple[str, str], MetricKind | None] = {}
    m = int(((j.record or {}).get("method") or {}).get("m_series") or 1)
    for r in h.now.itertuples(index=False):
        kind = kind_of(getattr(r, "metric_kind", None))
        if kind is None:
            if (r.workload, r.metric) not in declared:
                declared[(r.workload, r.metric)] = ask(r.workload, r.metric)
            kind = declared[(r.workload, r.metric)]
        _judge_row(j, suite, policy, s, r, kind, h.series.get(series_key(r)) or [], first, m)
    return first


def _judge_row(
    j: Judging, suite: str, policy: dict[str, Any], s: Settings, r: Any, kind: MetricKind | None, g: list[Any], first: _FirstPass, m: int
) -> None:
    """One of tonight's rows: judged at once by its kind, or handed to the detector (appended to ``first``)."""
    rule = rule_for(policy, suite, r.workload, r.variant, r.metric, r.unit, kind)
    row = tonight_row(suite, r, rule)
    idx, value = len(first.rows), row["value"]
    if s.leaves_out(r.metric) or value is None:
        first.rows.append({**row, "verdict": "excluded", "note": "left out by the drift policy" if value is not None else "no value"})
    elif is_polled_peak(str(r.workload), str(r.metric)):
        seen = calibration_entry(j.record, suite, r, j.compared) or {}
        typical, hosts = finite_float(seen.get("center")), int(seen.get("hosts") or 0)
        first.rows.append({**row, **judge_polled_peak(g, str(r.metric), value, s, typical, hosts)})
    elif rule.kind == "deterministic":
        first.rows.append({**row, **judge_deterministic(g, rule, value, j.run, s)})
    elif (still := judge_still_series(g, value, s, kind, calibration_entry(j.record, suite, r, j.compared))) is not None:
        first.rows.append({**row, **still})
    elif (entry := calibration_entry(j.record, suite, r, j.compared)) is not None:
        fields, c = calibrated_series(row, idx, g, r, entry, s)
        first.rows.append({**row, **fields})
        if c is not None:
            first.calibrated.append(c)
            if len(c.logs) >= s.min_history:  # Otava segments the history: where the current level starts
                sid = f"seg{len(first.calibrated)}"
                first.segments[sid] = len(first.calibrated) - 1
                thr, _ = thresholds(c.sigma, m)
                first.request[sid] = ([math.exp(v) for v in c.logs], max(thr, s.min_effect))
    else:
        fields, series = statistical_series(row, idx, g, r, rule, j.run, s)
        first.rows.append({**row, **fields})
        if series is not None:
            sid = str(len(first.request))
            first.request[sid] = (series.values, rule.min_magnitude)
            first.otava[sid] = series


def _with_sigmas(rows: list[dict[str, Any]], calibrated: list[CalibratedSeries]) -> list[dict[str, Any]]:
    """The rows with each calibrated series' sigma as this host's nights learned it."""
    out = list(rows)
    for c in calibrated:
        out[c.row] = {**out[c.row], "sigma": c.sigma}
    return out


def _judged_by_otava(
    rows: list[dict[str, Any]], otava: dict[str, OtavaSeries], found: dict[str, Any], version: str, recent: int
) -> list[dict[str, Any]]:
    """The uncalibrated statistical rows judged by the change points the detector found in them."""
    by_row = {otava[sid].row: judge_by_change_points(otava[sid], cps, version, recent) for sid, cps in found.items() if sid in otava}
    return [{**row, **by_row[i]} if i in by_row else row for i, row in enumerate(rows)]


def _segmented(
    rows: list[dict[str, Any]], calibrated: list[CalibratedSeries], segments: dict[str, int], found: dict[str, Any], windows: int
) -> tuple[list[dict[str, Any]], list[CalibratedSeries]]:
    """Each segmented calibrated series from where its current level starts (Otava's last change point in its history),
    and its row listing those change points."""
    rows, calibrated = list(rows), list(calibrated)
    for sid, at in segments.items():
        c = calibrated[at]
        cuts = segment_cuts(found.get(sid, []), len(c.logs), windows)
        calibrated[at] = replace(c, base=max(cuts) if cuts else 0)
        if cuts:
            rows[c.row] = {**rows[c.row], "change_points": json.dumps([{"index_in_history": i} for i in cuts])}
    return rows, calibrated


def _with_shared_notes(row: dict[str, Any], restarts: dict[str, str]) -> dict[str, Any]:
    """A row with the notes every kind of row may need: no declared kind, and why its history restarted."""
    note = row["note"]
    if row["declared_kind"] is None and row["verdict"] != "missing":
        note = f"{UNDECLARED}; {note}" if note else UNDECLARED
    if row["verdict"] == "insufficient_history" and str(row["engine_id"]) in restarts:
        note = f"{note}; {restarts[str(row['engine_id'])]}" if note else restarts[str(row["engine_id"])]
    return {**row, "note": note} if note != row["note"] else row
