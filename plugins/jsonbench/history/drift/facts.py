"""What is judged exactly, not statistically: deterministic facts, polled peaks, and metrics a night lost.

* a **deterministic** metric (a count, a size, a plan fact) against the median of its history, within the rule's
  relative tolerance and absolute floor: one earlier run is enough; quiet or not makes no difference to a count;
* a figure that **did not move** (:func:`unmoved`): the same value in every one of at least ``UNMOVED_MIN`` earlier
  runs (a deterministic fact, or a sampled or timed figure with no spread at all) fails on any change, however small:
  nothing it ever did allows one, and a tolerance would only hide a +1 % datum size;
* a **polled peak** (a cell's ``disk_peak`` and ``peak_rss``) one-sided against its largest earlier read, beyond the
  plan's margin only (every read is a lower bound);
* a **missing** metric: one the engine's previous run of this build published and tonight's did not.

Each judge returns the row's fields it decides; the caller lays them over tonight's row.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Sequence
from typing import Any

import pandas as pd

from jsonbench.dataset.measurement import PLAN_MARGIN, PLAN_SLACK_BYTES, finite_float, plan_bound
from jsonbench.history.drift.policy import Settings
from jsonbench.history.drift.rows import SeriesKey, blank_row, iso, kind_of, relative
from jsonbench.history.drift.selection import quiet_runs
from jsonbench.history.rules import Rule

#: How many earlier runs a figure must have held still in before any change of it fails (:func:`unmoved`): one run
#: says nothing of a figure's spread, two that agree exactly say it has none.
UNMOVED_MIN = 2


def unmoved(values: Sequence[float]) -> float | None:
    """The value every one of ``values`` holds, when there are at least ``UNMOVED_MIN`` and they agree to the last
    digits a float keeps; None when the figure moved (or has too short a history to say)."""
    if len(values) < UNMOVED_MIN:
        return None
    first = values[0]
    return first if all(math.isclose(v, first, rel_tol=1e-12, abs_tol=0.0) for v in values[1:]) else None


def judge_unmoved(h: list[tuple[str, Any, float]], held: float, value: float) -> dict[str, Any]:
    """Tonight against a figure that held ``held`` in every earlier run of ``h`` (id, date, value): exact."""
    same = math.isclose(value, held, rel_tol=1e-12, abs_tol=0.0)
    return {
        "history_n": len(h),
        "history_runs": json.dumps([t[0] for t in h]),
        "reference": held,
        "lower": held,
        "upper": held,
        "relative_change": relative(held, value),
        "drift_score": 0.0 if same else 1e9,
        "judged": "yes",
        "verdict": "ok" if same else "drift",
        "method": "unmoved",
        "note": f"{held:.10g} in every one of {len(h)} earlier nights, tonight {value:.10g}"
        + ("" if same else ": a figure that never moved changed"),
    }


def judge_deterministic(g: list[Any], rule: Rule, value: float, run: dict[str, Any], s: Settings) -> dict[str, Any]:
    """Tonight against the median of the last ``window`` runs, within the rule's tolerance and floor; exactly when the
    fact never moved (:func:`unmoved`), since then no tolerance has been earned."""
    h = [(str(x.run_id), x.logical_date, v) for x in g[-s.window :] if (v := finite_float(x.value)) is not None]
    out: dict[str, Any] = {"history_n": len(h), "history_runs": json.dumps([t[0] for t in h])}
    if len(h) < s.det_min_history:
        out["note"] = f"{len(h)} earlier run(s); a deterministic metric needs {s.det_min_history}"
        return out
    cps = deterministic_change_points([*h, (run["run_id"], run.get("logical_date"), value)], rule)
    if (held := unmoved([t[2] for t in h])) is not None:
        return {**judge_unmoved(h, held, value), "change_points": json.dumps(cps, default=str)}
    ref = statistics.median([t[2] for t in h])
    allowed = max(rule.tolerance * abs(ref), rule.floor)
    score = abs(value - ref) / allowed if allowed > 0 else (0.0 if value == ref else 1e9)
    out.update(
        reference=ref,
        lower=ref - allowed,
        upper=ref + allowed,
        relative_change=relative(ref, value),
        drift_score=min(score, 1e9),
        judged="yes",
        verdict="drift" if score > 1 else "ok",
        change_points=json.dumps(cps, default=str),
    )
    return out


def deterministic_change_points(series: list[tuple[Any, Any, float]], rule: Rule) -> list[dict[str, Any]]:
    """Every run (id, date, value) whose value differs from the run before it beyond the rule's tolerance."""
    cps = []
    for (_, _, before), (rid, ld, after) in zip(series, series[1:], strict=False):
        if abs(after - before) > max(rule.tolerance * abs(before), rule.floor):
            cps.append(
                {
                    "run_id": rid,
                    "logical_date": iso(ld),
                    "metric_before": before,
                    "metric_after": after,
                    "relative_change": relative(before, after),
                    "pvalue": None,
                }
            )
    return cps


def judge_still_series(
    g: list[Any], value: float, s: Settings, kind: str | None, entry: dict[str, Any] | None = None
) -> dict[str, Any] | None:
    """A sampled or timed series whose quiet earlier runs all published the very same value, judged exactly
    (:func:`judge_unmoved`); None when it moved, has fewer than ``UNMOVED_MIN`` quiet runs, or may hold still by chance.

    A figure rounded to a coarse step holds still without being still: pgbench's latencies are printed to 0.001 ms, and a
    p50 of 0.057 ms read the same on two nights and 0.058 on the third (the recorded nights raised 102 such rows).
    So a series still on this host is judged exactly only where nothing says it ever moved: the calibration record's
    entry saw no spread between runs nor hosts (``run_sd``, ``host_sd``), or, without an entry, it is a sampled figure
    whose every repetition of every night read that same value.
    """
    quiet = quiet_runs(g, s.window)
    h = [(str(x.run_id), x.logical_date, v) for x in quiet if (v := finite_float(x.value)) is not None]
    held = unmoved([t[2] for t in h])
    if held is None or not _never_moved(quiet, held, kind, entry):
        return None
    return judge_unmoved(h, held, value)


def _never_moved(quiet: list[Any], held: float, kind: str | None, entry: dict[str, Any] | None) -> bool:
    """Whether nothing but this host's nights says the figure moves (:func:`judge_still_series`)."""
    if entry is not None:
        return not float(entry.get("run_sd") or 0.0) and not float(entry.get("host_sd") or 0.0)
    if kind != "sampled":
        return False
    samples = [finite_float(v) for x in quiet for v in (x.samples if x.samples is not None else [])]
    return bool(samples) and unmoved([held, *(v for v in samples if v is not None)]) is not None


def judge_polled_peak(g: list[Any], metric: str, value: float, s: Settings, typical: float | None = None, hosts: int = 0) -> dict[str, Any]:
    """A cell's polled peak against the largest of its earlier reads: drift only when it grew beyond the plan's margin.

    A poll reads what the engine holds between measure windows, so every read is a lower bound of the peak and a low
    read is a missed transient, not a change (:data:`~jsonbench.dataset.measurement.POLLED_PEAKS`). Judged as a
    sampled value, one missed read became the reference, and the next night's true peak (+11 %, SQLite 3.54.1 on
    one recorded host) read as drift against a near-exact sigma. So the reference is the history's largest read, only a rise
    counts, and the rise must exceed the plan's margin (:func:`~jsonbench.dataset.measurement.plan_bound`, what
    the plan already allows beyond the last figure: x1.25 and one WAL segment): within it no plan goes wrong. Beyond
    it the read is certain (the engine held at least that much), so it fails at once, as a fact does: measuring again
    cannot take a lower bound back. Quiet or not makes no difference to what an engine held.

    ``typical``: what the cell holds on this hardware type (the calibration record's figure over every host), when
    the record serves the series. A host whose polls all miss the peak has only low reads: one recorded host's first night
    read PostgreSQL 16's large_document_update at 158 MB, its second at 219 MB, which failed against the first (bound
    214 MB) while eight hosts read 329 MB. So the reference is the larger of the two, and a host new to the record is
    judged from its first night.
    """
    h = [(str(x.run_id), v) for x in g[-s.window :] if (v := finite_float(x.value)) is not None and v > 0]
    typical = typical if typical is not None and typical > 0 else None
    out: dict[str, Any] = {
        "history_n": len(h),
        "history_runs": json.dumps([t[0] for t in h]),
        "method": "polled_peak",
        "metric_kind": "deterministic",
    }
    if len(h) < s.det_min_history and typical is None:
        out["note"] = f"{len(h)} earlier run(s); a polled peak needs {s.det_min_history}"
        return out
    ref = max([v for _, v in h] + ([typical] if typical is not None else []))
    upper = plan_bound(metric, ref)
    score = max(0.0, (value - ref) / (upper - ref))
    against = f"the largest of {len(h)} earlier read(s)"
    if typical is not None:
        against += f" and this hardware type's figure ({typical / 1e6:.1f} MB over {hosts} host(s) of the record)"
    out.update(
        reference=ref,
        upper=upper,
        relative_change=relative(ref, value),
        drift_score=min(score, 1e9),
        judged="yes",
        verdict="drift" if score > 1 else "ok",
        note=f"a polled peak (a lower bound): tonight {relative(ref, value):+.1%} against {against}; "
        f"only a rise beyond the plan's margin (x{PLAN_MARGIN:g} and {PLAN_SLACK_BYTES >> 20} MiB) counts",
    )
    return out


def missing_rows(
    tonight: pd.DataFrame,
    suite: str,
    groups: dict[SeriesKey, list[Any]],
    window: int,
    retired: dict[tuple[str, str, str], str] | None = None,
) -> list[dict[str, Any]]:
    """A metric the engine's previous run published (measured or not applicable) and tonight's did not: lost.

    Completeness (sanity) knows the suite's (workload, metric) pairs; this also sees a lost variant. A variant the
    policy lists as retired (``retired``) is not lost: its row says so, not judged.
    """
    tonight_keys = {
        (r.engine_id, r.engine_build, r.workload, r.variant, r.metric)
        for r in tonight[tonight["suite"] == suite].assign(engine_build=lambda f: f["engine_build"].fillna("")).itertuples(index=False)
    }
    last_run = _last_runs(groups, {(k[0], k[1]) for k in tonight_keys})
    rows: list[dict[str, Any]] = []
    for key, series in groups.items():
        e = (key[0], key[1])
        if e not in last_run or key in tonight_keys or not series or series[-1].run_id != last_run[e].run_id:
            continue
        x = series[-1]
        why = (retired or {}).get((suite, str(x.workload), str(x.variant)))
        rows.append(
            blank_row(
                suite,
                x,
                history_n=len(series),
                reference=finite_float(x.value),
                drift_score=None if why else 1e9,
                judged="no" if why else "yes",
                verdict="excluded" if why else "missing",
                method="published_before",
                declared_kind=kind_of(getattr(x, "metric_kind", None)),
                history_runs=json.dumps([str(y.run_id) for y in series[-window:]]),
                note=why or f"published by the previous run of this build ({x.run_id}) and missing tonight",
            )
        )
    return rows


def _last_runs(groups: dict[SeriesKey, list[Any]], engines: set[tuple[Any, Any]]) -> dict[tuple[Any, Any], Any]:
    """Per engine id and build of tonight, its latest earlier run's record (by date, then run id)."""
    last_run: dict[tuple[Any, Any], Any] = {}
    for key, series in groups.items():
        e = (key[0], key[1])
        if e in engines and series:
            x = series[-1]
            if e not in last_run or (x.logical_date, x.run_id) > (last_run[e].logical_date, last_run[e].run_id):
                last_run[e] = x
    return last_run
