"""A drift row: its columns, tonight's row before it is judged, and the typed frame the checks validate."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from jsonbench.dataset.measurement import MEASURED_COLUMNS, METRIC_KINDS, MetricKind, finite_float
from jsonbench.history.rules import Rule

#: A drift row's numbers besides the measured value and spread (float64 in the frame, see :func:`typed_frame`):
#: what it is judged against, and the calibrated window test's figures with the machine's other load.
_AGAINST = ("reference", "lower", "upper", "relative_change", "drift_score")
#: ``host_nights``: how many quiet earlier nights of tonight's host a calibrated series' sigma learned from. ``hearing``
#: (JSON, calibrated timings): what its version and its workload judged as a whole could see
#: (:meth:`~jsonbench.history.drift.families.FamilyJudgement.unit_hearing`).
_TESTED = ("host_other_cpu", "pvalue", "p_adjusted", "sigma", "threshold", "mds", "host_nights")
DRIFT_COLUMNS = [
    "suite",
    "engine_id",
    "engine_version",
    "engine_build",
    *MEASURED_COLUMNS,
    "history_n",
    *_AGAINST,
    "judged",
    "verdict",
    "method",
    "metric_kind",
    "declared_kind",
    "history_runs",
    "change_points",
    "quiet",
    *_TESTED,
    "hearing",
    "note",
]
VERDICTS = ("ok", "drift", "insufficient_history", "disturbed", "excluded", "missing")
#: A series of one engine build: what names a row in the history and tonight.
SeriesKey = tuple[Any, Any, Any, Any, Any]
#: The note of a row whose kind neither its row nor its suite declares.
UNDECLARED = "no declared kind (neither the row nor the suite names one): judged statistically"


def kind_of(value: Any) -> MetricKind | None:
    """A row's ``metric_kind`` cell as a kind (None: null, or a value no kind has)."""
    return value if isinstance(value, str) and value in METRIC_KINDS else None


def quiet_of(row: Any) -> bool | None:
    """The row's ``quiet`` flag, or None when the run did not record one (read defensively)."""
    q = getattr(row, "quiet", None)
    if q is None or (isinstance(q, float) and math.isnan(q)) or q is pd.NA:
        return None
    return bool(q)


def series_key(r: Any) -> SeriesKey:
    """The key of a measurement row's series: engine id and build, workload, variant, metric."""
    return (r.engine_id, r.engine_build, r.workload, r.variant, r.metric)


def blank_row(suite: str, r: Any, **fields: Any) -> dict[str, Any]:
    """A drift row of ``r``'s series with nothing judged yet: every column, ``fields`` laid over the blanks."""
    row: dict[str, Any] = {
        "suite": suite,
        "engine_id": r.engine_id,
        "engine_version": r.engine_version,
        "engine_build": r.engine_build,
        "workload": r.workload,
        "variant": r.variant,
        "metric": r.metric,
        "unit": r.unit,
        "value": None,
        "spread": None,
        "history_n": 0,
        **dict.fromkeys(_AGAINST),
        "judged": "no",
        "verdict": "insufficient_history",
        "method": "",
        "metric_kind": "deterministic",
        "declared_kind": None,
        "history_runs": "[]",
        "change_points": "[]",
        "quiet": None,
        **dict.fromkeys(_TESTED),
        "hearing": None,
        "note": "",
    }
    row.update(fields)
    return row


def tonight_row(suite: str, r: Any, rule: Rule) -> dict[str, Any]:
    """Tonight's row as it stands before judging: not judged, ``insufficient_history`` until a check says otherwise."""
    return blank_row(
        suite,
        r,
        value=finite_float(r.value),
        spread=finite_float(r.spread),
        method="relative_tolerance" if rule.kind == "deterministic" else "otava",
        # How it is judged (the checks' tag: exact facts vs statistical), and the kind its suite declares.
        metric_kind="deterministic" if rule.kind == "deterministic" else "timing",
        declared_kind=rule.declared,
        quiet=quiet_of(r),
        host_other_cpu=finite_float(getattr(r, "host_other_cpu", None)),
    )


def typed_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The rows as a frame of ``DRIFT_COLUMNS`` with numeric columns as float64 and ``quiet`` as yes/no/unknown."""
    frame = pd.DataFrame(rows, columns=DRIFT_COLUMNS)
    for col in ("value", "spread", *_AGAINST, *_TESTED):
        frame[col] = pd.to_numeric(frame[col], errors="coerce").astype("float64")
    frame["history_n"] = frame["history_n"].astype("int64")
    frame["quiet"] = frame["quiet"].map(lambda v: "unknown" if v is None else ("yes" if v else "no"))
    return frame


def iso(ts: Any) -> str | None:
    """A timestamp as ISO text for a row's JSON columns (None for a missing one)."""
    if ts is None or (isinstance(ts, float) and math.isnan(ts)) or ts is pd.NaT:
        return None
    return pd.Timestamp(ts).isoformat()


def relative(before: float, after: float) -> float | None:
    """The relative change from ``before`` to ``after`` (None from 0)."""
    return (after - before) / abs(before) if before else None
