"""The validation rows of one run's checks, one function a check kind: sanity, reproduction, drift.

Each turns Great Expectations' outcomes on a frame (:class:`~jsonbench.checks.gxrun.Outcome`) into rows of
``VALIDATION_SCHEMA``: a row per finding and engine, per drift series, per raw expectation of a file,
and a failed sanity row per dataset file that could not be read. Apart from :mod:`jsonbench.checks.examine`
because the confirmation of suspects (:mod:`jsonbench.checks.confirm`) judges its fresh measurements
with the same reproduction and drift rows.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from jsonbench.cell import Cell, RunRef
from jsonbench.checks.findings import finding_expectations, findings_frame, promised_metrics
from jsonbench.checks.gxrun import GXSession, Outcome
from jsonbench.checks.library import Library
from jsonbench.checks.sanity import cells_in_rows, completeness_frame, measurements_frame, schema_expectations
from jsonbench.compare.inherit import ComparedBuild, compared_builds
from jsonbench.dataset.read import read_dataset
from jsonbench.dataset.schema import COMPARISONS, ValidationRow
from jsonbench.history.drift import drift_expectations, drift_frame

MAX_DETAIL_ROWS = 50


def aggregate_rows(kind: str, suite: str | None, outcomes: list[Outcome], run: RunRef) -> list[dict[str, Any]]:
    """One validation row per expectation (sanity, and raw extra expectations of other kinds)."""
    rows = []
    for o in outcomes:
        observed = o.result.get("unexpected_count", o.result.get("observed_value"))
        rows.append(
            row(
                run,
                check_kind=kind,
                suite=suite,
                expectation=o.label,
                description=str(o.meta.get("notes", "")),
                observed=_num(observed),
                min_value=_num(o.kwargs.get("min_value")),
                max_value=_num(o.kwargs.get("max_value")),
                success=o.success,
                verdict="pass" if o.success else "fail",
                gx_suite=o.suite_name,
                details={
                    "unexpected": o.unexpected[:MAX_DETAIL_ROWS],
                    "unexpected_count": o.result.get("unexpected_count"),
                    "error": o.error,
                    "kwargs": o.kwargs,
                },
            )
        )
    return rows


def row(run: RunRef, **fields: Any) -> dict[str, Any]:
    """One validation row of this run (its id, logical date and scale), as publishing stores it."""
    return ValidationRow(run_id=run.run_id, logical_date=_logical_date(run.logical_date), scale=run.scale, **fields).to_row()


def _logical_date(value: str | None) -> datetime | None:
    """The run's logical date (ISO text in the plan) as the schema's UTC timestamp."""
    if not value:
        return None
    dt = datetime.fromisoformat(value)
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    """A string column value, or None (pandas 3 holds a missing string as NaN)."""
    return value if isinstance(value, str) and value else None


def _engine_of(r: Any) -> dict[str, Any]:
    """The engine columns of a validation row, from a frame row that has them (a finding's or a drift series')."""
    return {"engine_id": r.engine_id, "engine_version": _str(r.engine_version), "engine_build": _str(r.engine_build)}


def _failed_keys(outcomes: list[Outcome], keys: list[str]) -> set[tuple[Any, ...]]:
    return {tuple(u.get(k) for k in keys) for o in outcomes if not o.success for u in o.unexpected}


def _split(outcomes: list[Outcome]) -> tuple[list[Outcome], list[Outcome]]:
    """``(generated, extra)``: outcomes of the per-row expectations the check builds, and of a file's raw ones.

    A generated expectation that failed without naming its unexpected rows (GX raised, say) joins
    the extras, so it is stored and fails the check as a whole instead of passing every row.
    """
    generated = [o for o in outcomes if o.meta.get("generated")]
    extra = [o for o in outcomes if not o.meta.get("generated")]
    broken = [o for o in generated if not o.success and not o.unexpected]
    return [o for o in generated if o not in broken], broken + extra


def sanity_check(lib: Library, gxs: GXSession, run: RunRef, published: pd.DataFrame, cells: Sequence[Cell] | None) -> list[dict[str, Any]]:
    """Schema and per-suite sanity of the published rows, and completeness of ``cells`` (the plan's; None: the cells in the rows)."""
    frames = lib.sanity.get("frames", {})
    mframe = measurements_frame(published)
    ran = [(c.suite, c.engine_id) for c in cells] if cells is not None else cells_in_rows(published)
    cframe = completeness_frame(ran, published)
    rows: list[dict[str, Any]] = []
    spec = frames.get("measurements", {})
    outs = gxs.validate("sanity.measurements", mframe, schema_expectations() + spec.get("expectations", []), spec.get("index_columns", []))
    rows += aggregate_rows("sanity", None, outs, run)
    spec = frames.get("completeness", {})
    outs = gxs.validate("sanity.completeness", cframe, spec.get("expectations", []), spec.get("index_columns", []))
    rows += aggregate_rows("sanity", None, outs, run)
    for suite, extra in sorted(lib.suite_sanity.items()):
        sub = mframe[mframe["suite"] == suite]
        if sub.empty:
            continue
        spec = extra.get("frames", {}).get("measurements", extra)
        outs = gxs.validate(
            f"{suite}.sanity", sub, spec.get("expectations", []), spec.get("index_columns", ["engine_id", "workload", "variant", "metric"])
        )
        rows += aggregate_rows("sanity", suite, outs, run)
    return rows


def reproduction_check(lib: Library, gxs: GXSession, run: RunRef, published: pd.DataFrame, suite: str) -> list[dict[str, Any]]:
    definition = lib.reproduction[suite]
    scale = run.scale
    frame = findings_frame(published, suite, definition, scale=scale, promised=promised_metrics(suite))
    if frame.empty:
        return []
    keys = ["finding", "engine_id"]
    entries = finding_expectations(definition, scale)
    generated, extra = _split(gxs.validate(f"{suite}.reproduction", frame, entries, keys))
    failed = _failed_keys(generated, keys)
    reasons = {f["id"]: f for f in definition.get("findings", [])}
    rows = []
    for r in frame.itertuples(index=False):
        applicable = r.applicable == "yes"
        problem = r.problem if isinstance(r.problem, str) else None  # pandas 3 stores a missing str as NaN
        disturbed = applicable and r.disturbed == "yes" and not pd.isna(r.observed)
        ok = not applicable or disturbed or (problem is None and (r.finding, r.engine_id) not in failed)
        f = reasons.get(r.finding, {})
        rows.append(
            row(
                run,
                check_kind="reproduction",
                suite=suite,
                **_engine_of(r),
                expectation=r.finding,
                description=r.description,
                observed=None if pd.isna(r.observed) else float(r.observed),
                min_value=None if pd.isna(r.band_min) else float(r.band_min),
                max_value=None if pd.isna(r.band_max) else float(r.band_max),
                success=ok,
                verdict=("disturbed" if disturbed else "pass" if ok else "fail") if applicable else "not_applicable",
                unit=r.unit,
                gx_suite=f"{suite}.reproduction",
                details={
                    "inputs": json.loads(r.inputs),
                    "problem": problem,
                    "seed": f.get("seed"),
                    "band_reason": r.band_reason,
                    "finding_reason": f.get("band_reason"),
                    "scale": scale,
                    "finding_kind": r.finding_kind,
                    "scope": r.scope,
                    "derived_from": json.loads(r.derived_from),
                    "not_derived": r.not_derived if isinstance(r.not_derived, str) else None,
                },
            )
        )
    rows += aggregate_rows("reproduction", suite, extra, run)
    return rows


def compared_of(run: RunRef) -> tuple[ComparedBuild, ...]:
    """The published comparisons of the run's hardware label and scale that can lend a compared build the noise of the
    build it was found alike with (:mod:`jsonbench.compare.inherit`); a damaged comparisons file lends nothing."""
    rows = read_dataset(run.results_dir, COMPARISONS, hardware_label=run.hardware_label).to_pylist()
    return tuple(compared_builds(rows, run.scale))


def drift_check(
    lib: Library, gxs: GXSession, run: RunRef, published: pd.DataFrame, dataset: pd.DataFrame, suite: str
) -> tuple[list[dict[str, Any]], list[str]]:
    policy = lib.drift_policy(suite)
    frame = drift_frame(published, dataset, run.to_json(), suite, policy, policies=lib.drift_policy, compared=compared_of(run))
    notes: list[str] = []
    if frame.empty:
        return [], notes
    keys = ["engine_id", "workload", "variant", "metric"]
    entries = drift_expectations(policy)
    generated, extra = _split(gxs.validate(f"{suite}.drift", frame, entries, keys))
    failed = _failed_keys(generated, keys)
    need = int(policy.get("min_history", 4))
    for engine_id, g in frame.groupby("engine_id"):
        timing = g[g["metric_kind"].isin(["timing", "timed", "sampled"]) & ~g["method"].astype(str).str.startswith("calibrated")]
        have = int(timing["history_n"].max()) if not timing.empty else need
        if have < need:
            notes.append(
                f"{suite} on {engine_id}: only {have} quiet earlier run(s) of hardware {run.hardware_label!r}, this build "
                f"and scale {run.scale!r}; change-point detection needs {need}, so timings are not judged yet"
            )
        disturbed = int((g["verdict"] == "disturbed").sum())
        if disturbed:
            notes.append(f"{suite} on {engine_id}: {disturbed} metric(s) measured while the host was busy; not judged")
    rows = [_drift_row(r, suite, (r.engine_id, r.workload, r.variant, r.metric) not in failed, run) for r in frame.itertuples(index=False)]
    rows += aggregate_rows("drift", suite, extra, run)
    return rows, notes


def _drift_row(r: Any, suite: str, ok: bool, run: RunRef) -> dict[str, Any]:
    """The validation row of one drift-frame row; ``ok`` is whether GX passed its expectations."""
    return row(
        run,
        check_kind="drift",
        suite=suite,
        **_engine_of(r),
        workload=r.workload,
        variant=r.variant,
        metric=r.metric,
        unit=r.unit,
        expectation=f"no_drift:{r.workload}/{r.variant}/{r.metric}",
        description=f"{r.metric} of {r.workload}: {r.method} over {r.history_n} earlier run(s) and tonight",
        observed=None if pd.isna(r.value) else float(r.value),
        min_value=None if pd.isna(r.lower) else float(r.lower),
        max_value=None if pd.isna(r.upper) else float(r.upper),
        success=ok,
        verdict=r.verdict if ok else ("missing" if r.verdict == "missing" else "drift"),
        gx_suite=f"{suite}.drift",
        details={
            "method": r.method,
            "metric_kind": r.metric_kind,
            "history_runs": json.loads(r.history_runs),
            "history_n": int(r.history_n),
            "change_points": json.loads(r.change_points),
            "reference": None if pd.isna(r.reference) else float(r.reference),
            "history_median": None if pd.isna(r.reference) else float(r.reference),  # the report's name for it
            "relative_change": None if pd.isna(r.relative_change) else float(r.relative_change),
            "drift_score": None if pd.isna(r.drift_score) else float(r.drift_score),
            "quiet": r.quiet,
            "host_other_cpu": None if pd.isna(r.host_other_cpu) else float(r.host_other_cpu),
            "pvalue": None if pd.isna(r.pvalue) else float(r.pvalue),
            "p_adjusted": None if pd.isna(r.p_adjusted) else float(r.p_adjusted),
            "sigma": None if pd.isna(r.sigma) else float(r.sigma),
            "threshold": None if pd.isna(r.threshold) else float(r.threshold),
            "mds": None if pd.isna(r.mds) else float(r.mds),
            "host_nights": None if pd.isna(r.host_nights) else int(r.host_nights),
            "hearing": json.loads(r.hearing) if isinstance(r.hearing, str) else None,
            "note": r.note or None,
            "scale": run.scale,
        },
    )


def damaged_rows(damaged: Any, run: RunRef, table: str) -> list[dict[str, Any]]:
    """One failed sanity row per dataset file that could not be read, naming it."""
    rows = []
    for d in damaged:
        try:
            where = str(Path(d.path).relative_to(Path(run.results_dir)))
        except ValueError:
            where = str(d.path)
        rows.append(
            row(
                run,
                check_kind="sanity",
                expectation=f"dataset_file_readable:{where}",
                description=f"every {table} file of the dataset is readable; this one is not and was skipped by every check, drift judgement and report",
                success=False,
                verdict="fail",
                details={"file": where, "table": table, "error": d.error, "check": "damaged_file"},
            )
        )
    return rows


def detector_row(run: RunRef, suite: str, error: str) -> dict[str, Any]:
    """A failed drift row when the change-point detector cannot run: drift must not pass unjudged in silence."""
    return row(
        run,
        check_kind="drift",
        suite=suite,
        expectation="change_point_detector_available",
        description="Apache Otava's environment runs (./bin/setup installs it)",
        success=False,
        verdict="fail",
        gx_suite=f"{suite}.drift",
        details={"error": error, "metric_kind": "deterministic"},
    )
