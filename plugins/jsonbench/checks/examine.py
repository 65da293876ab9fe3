"""``check_run``: sanity, reproduction and drift checks of one published run, stored as validation rows.

Named *examine* (it was ``run.py``) because "run" already means a DAG run, ``tools/rerun.py`` and the
scheduler trial: this module examines the published results of one DAG run and publishes the
validation rows that say what it found; nothing else in the package is named after examining.

Order of work: read the run's published rows (never written to), build the frames, validate each
with Great Expectations (Data Docs under ``<results>/data_docs/<run_key>/``), turn the outcomes
into rows of ``VALIDATION_SCHEMA`` and publish them beside the measurements, and only then raise
:class:`ChecksFailed` if a check that alerts failed, or the run is ``not_judged``.

A timing finding out of its band and a statistical drift verdict are ``suspect`` on this first
pass (:mod:`jsonbench.checks.verdicts`): they are stored, listed in the summary's ``suspects`` (lines), and
alert only once a confirmation measures the same (:func:`jsonbench.checks.confirm.confirm_run`,
the DAG's ``confirm_check``). Deterministic facts and sanity alert here, at once.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from jsonbench.cell import Cell, RunRef
from jsonbench.checks.findings import finding_expectations, findings_frame, promised_metrics
from jsonbench.checks.gxrun import GXSession, Outcome
from jsonbench.checks.library import Library, load_library
from jsonbench.checks.sanity import cells_in_rows, completeness_frame, measurements_frame, schema_expectations
from jsonbench.checks.verdicts import alerting, describe_share, judged_share, judgement, mark_suspects, unjudged
from jsonbench.dataset.measurement import HOST_SUITE
from jsonbench.dataset.schema import ValidationRow
from jsonbench.history.changepoints import DetectorUnavailable
from jsonbench.history.cleared import read_as_history
from jsonbench.history.drift import drift_expectations, drift_frame

log = logging.getLogger(__name__)

MAX_DETAIL_ROWS = 50


class ChecksFailed(Exception):
    """Some expectation of the run failed; ``summary`` says which (the rows are already stored)."""

    def __init__(self, summary: dict[str, Any]) -> None:
        self.summary = summary
        lines = list(summary.get("failures", []))
        more = summary["failed"] - len(lines)
        if summary.get("not_judged"):
            lines.insert(0, f"NOT JUDGED: {summary.get('judged_line')}")
        super().__init__(
            f"{summary['failed']} of {summary['checked']} checks failed for run {summary['run_id']}"
            + (" and the run is not judged" if summary.get("not_judged") else "")
            + f" (validation rows: {summary.get('validations')}):\n  "
            + "\n  ".join(lines)
            + (f"\n  ... and {more} more" if more > 0 else "")
        )


def _docs_enabled() -> bool:
    """Data Docs are built unless ``$JSONBENCH_DATA_DOCS`` is ``0`` (rendering takes seconds)."""
    return os.environ.get("JSONBENCH_DATA_DOCS", "1") != "0"


def _now() -> datetime:
    return datetime.now(UTC)


def _aggregate_rows(kind: str, suite: str | None, outcomes: list[Outcome], run: RunRef) -> list[dict[str, Any]]:
    """One validation row per expectation (sanity, and raw extra expectations of other kinds)."""
    rows = []
    for o in outcomes:
        observed = o.result.get("unexpected_count", o.result.get("observed_value"))
        rows.append(
            _row(
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


def _row(run: RunRef, **fields: Any) -> dict[str, Any]:
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


def _sanity(lib: Library, gxs: GXSession, run: RunRef, published: pd.DataFrame, cells: Sequence[Cell] | None) -> list[dict[str, Any]]:
    """Schema and per-suite sanity of the published rows, and completeness of ``cells`` (the plan's; None: the cells in the rows)."""
    frames = lib.sanity.get("frames", {})
    mframe = measurements_frame(published)
    ran = [(c.suite, c.engine_id) for c in cells] if cells is not None else cells_in_rows(published)
    cframe = completeness_frame(ran, published)
    rows: list[dict[str, Any]] = []
    spec = frames.get("measurements", {})
    outs = gxs.validate("sanity.measurements", mframe, schema_expectations() + spec.get("expectations", []), spec.get("index_columns", []))
    rows += _aggregate_rows("sanity", None, outs, run)
    spec = frames.get("completeness", {})
    outs = gxs.validate("sanity.completeness", cframe, spec.get("expectations", []), spec.get("index_columns", []))
    rows += _aggregate_rows("sanity", None, outs, run)
    for suite, extra in sorted(lib.suite_sanity.items()):
        sub = mframe[mframe["suite"] == suite]
        if sub.empty:
            continue
        spec = extra.get("frames", {}).get("measurements", extra)
        outs = gxs.validate(
            f"{suite}.sanity", sub, spec.get("expectations", []), spec.get("index_columns", ["engine_id", "workload", "variant", "metric"])
        )
        rows += _aggregate_rows("sanity", suite, outs, run)
    return rows


def _reproduction(lib: Library, gxs: GXSession, run: RunRef, published: pd.DataFrame, suite: str) -> list[dict[str, Any]]:
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
            _row(
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
    rows += _aggregate_rows("reproduction", suite, extra, run)
    return rows


def _drift(
    lib: Library, gxs: GXSession, run: RunRef, published: pd.DataFrame, dataset: pd.DataFrame, suite: str
) -> tuple[list[dict[str, Any]], list[str]]:
    policy = lib.drift_policy(suite)
    frame = drift_frame(published, dataset, run.to_json(), suite, policy, policies=lib.drift_policy)
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
    rows += _aggregate_rows("drift", suite, extra, run)
    return rows, notes


def _drift_row(r: Any, suite: str, ok: bool, run: RunRef) -> dict[str, Any]:
    """The validation row of one drift-frame row; ``ok`` is whether GX passed its expectations."""
    return _row(
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
            "note": r.note or None,
            "scale": run.scale,
        },
    )


def _damaged_rows(damaged: Any, run: RunRef, table: str) -> list[dict[str, Any]]:
    """One failed sanity row per dataset file that could not be read, naming it."""
    rows = []
    for d in damaged:
        try:
            where = str(Path(d.path).relative_to(Path(run.results_dir)))
        except ValueError:
            where = str(d.path)
        rows.append(
            _row(
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


def _published(dataset: pd.DataFrame, run: RunRef, damaged: Any) -> pd.DataFrame:
    """The run's rows of the dataset; a run with none has nothing to check (an error naming the damaged files the read skipped)."""
    published = dataset[dataset["run_id"] == run.run_id].copy()
    if published.empty:
        skipped = "; ".join(d.path for d in damaged)
        raise RuntimeError(
            f"run {run.run_id!r} has no published rows under {run.results_dir}; nothing to check"
            + (f" (damaged files skipped: {skipped})" if skipped else "")
        )
    return published


def _suite_checks(
    lib: Library, gxs: GXSession, run: RunRef, published: pd.DataFrame, dataset: pd.DataFrame
) -> tuple[list[dict[str, Any]], list[str]]:
    """Reproduction and drift of each suite in the run; without Otava, drift is one failed row per suite, not an exception."""
    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    for suite in sorted(published["suite"].unique()):
        if suite == HOST_SUITE:  # the canary measures the host: drift reads it as the host's move, never judges it as a suite
            notes += host_notes(run, published)
            continue
        if suite in lib.reproduction:
            rows += _reproduction(lib, gxs, run, published, suite)
        else:
            notes.append(f"{suite}: no {suite}.reproduction.json, so no reproduction expectations")
        try:
            drift_rows, drift_notes = _drift(lib, gxs, run, published, dataset, suite)
        except DetectorUnavailable as exc:
            drift_rows, drift_notes = [_detector_row(run, suite, str(exc))], [f"{suite}: drift not judged: {exc}"]
        rows += drift_rows
        notes += drift_notes
    return rows, notes


def host_notes(run: RunRef, published: pd.DataFrame) -> list[str]:
    """Tonight's host speed against the one the noise record was calibrated at: a note per canary component outside it."""
    from jsonbench.history.noise import load_record

    record = load_record(run.hardware_label, run.scale, run.results_dir) or {}
    calibrated = record.get("canary") or {}
    notes = []
    known = {str(h.get("host_boot_id")) for h in record.get("hosts") or [] if h.get("host_boot_id")}
    tonight_hosts = {str(b) for b in published.get("host_boot_id", pd.Series(dtype=str)).dropna().unique() if b}
    if record and tonight_hosts and not tonight_hosts & known:
        notes.append(
            f"host: tonight's host ({', '.join(sorted(tonight_hosts))}) is not one the noise record was measured on "
            f"({len(known)} known host(s){'' if known else ': the record predates host ids'})"
        )
    host = published[(published["suite"] == HOST_SUITE) & (published["unit"] == "ms") & (published["status"] == "ok")]
    if host.empty:
        return [*notes, "host: no canary in this run (its timings are judged as measured, the engines' median as the host's move)"]
    for comp, g in host.groupby("metric"):
        tonight = float(g["value"].median())
        span = calibrated.get(str(comp))
        if not span:
            notes.append(f"host: canary {comp} {tonight:.1f} ms tonight; the noise record has no canary (calibrated before it existed)")
        elif not (0.95 * float(span["min_ms"]) <= tonight <= 1.05 * float(span["max_ms"])):
            notes.append(
                f"host: canary {comp} {tonight:.1f} ms tonight, outside the {span['min_ms']:.1f}-{span['max_ms']:.1f} ms "
                f"the noise record was calibrated at: tonight's host is not one the record knows"
            )
    return notes


def check_run(run: RunRef, cells: Sequence[Cell] | None = None) -> dict[str, Any]:
    """Check one published run; store its validation rows; raise :class:`ChecksFailed` if any failed.

    ``run`` is the plan's run (its scale picks the bands and the history); ``cells`` are the plan's
    cells, whose promised metrics the completeness check looks for. Only a caller without the plan
    (the check of checks, re-checking a copy of an old run) leaves ``cells`` out: the cells are then
    the (suite, engine) pairs the published rows hold. Returns a summary (counts per kind and per
    finding kind, drift notes, damaged files, paths).
    """
    from jsonbench.dataset.publish import MEASUREMENTS, publish_validations, read_dataset_report
    from jsonbench.dataset.schema import run_key

    results_dir = run.results_dir
    lib = load_library()
    read = read_dataset_report(results_dir, MEASUREMENTS, hardware_label=run.hardware_label)
    measured = read.table.to_pandas()
    published = _published(measured, run, read.damaged)
    # earlier nights as drift reads them: a value their confirmation cleared reads as its re-measurement
    dataset, cleared = read_as_history(results_dir, measured, tonight=run.run_id, hardware_label=run.hardware_label)

    # One file-backed GX context under <results>/gx/: each validation runs through a Checkpoint whose
    # UpdateDataDocsAction adds its page, so Data Docs keep every run's (and every attempt's) results.
    gxs = GXSession(results_dir if _docs_enabled() else None, run_name=run_key(run.run_id))
    rows = _damaged_rows(read.damaged, run, MEASUREMENTS)
    rows += _sanity(lib, gxs, run, published, cells)
    notes: list[str] = [f"skipped unreadable dataset file {d.path}: {d.error}" for d in read.damaged]
    notes += [n for n in [cleared.note()] if n]
    suite_rows, suite_notes = _suite_checks(lib, gxs, run, published, dataset)
    rows += suite_rows
    notes += suite_notes
    suspects = mark_suspects(rows)

    pages = gxs.finish() if _docs_enabled() else {}
    docs_index = gxs.build_docs() if _docs_enabled() else None
    index_page = _relative(docs_index, results_dir) if docs_index else None
    _stamp(rows, _now(), pages, index_page)
    target = publish_validations(results_dir, run, rows)

    failed = alerting(rows)
    share = judged_share(rows)
    summary = {
        "run_id": run.run_id,
        "scale": run.scale,
        "checked": len(rows),
        "failed": len(failed),
        "suspect": len(suspects),
        "judged": share,
        "judged_line": describe_share(share),
        "judgement": judgement(rows, share),
        "not_judged": unjudged(share),
        **_counts(rows),
        "damaged_files": [d.path for d in read.damaged],
        "notes": notes,
        "failures": [_failure_line(r) for r in failed[:20]],
        "suspects": [f"suspect: {_failure_line(r)}" for r in suspects[:20]],
        "validations": str(target),
        "data_docs": str(docs_index) if docs_index else None,
        "data_docs_pages": pages,
        "results_dir": str(results_dir),
    }
    _log_summary(summary)
    if failed or summary["not_judged"]:
        raise ChecksFailed(summary)
    return summary


#: What a validation row is about, for tests and alerts: "sanity" (schema, completeness, damaged
#: files), "deterministic" (a fact of the data: counts, sizes, plans; reproduction or drift),
#: "timing" (a measured speed: its band or its change points).
TAGS = ("sanity", "deterministic", "timing")


def _log_summary(summary: dict[str, Any]) -> None:
    for note in summary["notes"]:
        log.info("check: %s", note)
    log.info("check: %s; run %s", summary.get("judged_line"), summary.get("judgement"))
    log.info(
        "check of run %s: %d checks, %d failed; %s; Data Docs %s",
        summary["run_id"],
        summary["checked"],
        summary["failed"],
        summary["by_kind"],
        summary["data_docs"],
    )


def _stamp(rows: list[dict[str, Any]], validated_at: datetime, pages: dict[str, str], index_page: str | None) -> None:
    """Give every row the check's time, and in its details (JSON text) its check kind and its Data Docs page (else the index)."""
    for r in rows:
        r["validated_at"] = validated_at
        details = r.get("details")
        details = dict(details) if isinstance(details, dict) else (json.loads(details) if isinstance(details, str) and details else {})
        details.setdefault("check", r["check_kind"])
        details["data_docs_page"] = pages.get(r.get("gx_suite") or "") or index_page
        r["details"] = json.dumps(details, default=str)


def _counts(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The summary's counts: passed and failed per check kind (``by_kind``) and per finding tag (``by_tag``), drift verdicts."""
    by_kind: dict[str, dict[str, int]] = {}
    by_finding_kind: dict[str, dict[str, int]] = {}
    for r in rows:
        k = by_kind.setdefault(r["check_kind"], {"passed": 0, "failed": 0})
        k["passed" if r["success"] else "failed"] += 1
        tag = row_tag(r)
        t = by_finding_kind.setdefault(tag, {"passed": 0, "failed": 0})
        t["passed" if r["success"] else "failed"] += 1
    verdicts: dict[str, int] = {}
    for r in rows:
        if r["check_kind"] == "drift" and r.get("verdict"):
            verdicts[r["verdict"]] = verdicts.get(r["verdict"], 0) + 1
    return {"by_kind": by_kind, "by_tag": by_finding_kind, "drift_verdicts": verdicts}


def row_tag(row: dict[str, Any] | pd.Series) -> str:
    """``sanity``, ``deterministic`` or ``timing`` for one validation row (a dict, or a row read back)."""
    kind = row["check_kind"]
    if kind == "sanity":
        return "sanity"
    details = row.get("details")
    if isinstance(details, str):
        try:
            details = json.loads(details)
        except ValueError:
            details = {}
    details = details or {}
    tag = details.get("finding_kind") or details.get("metric_kind")
    if tag in ("deterministic", "timing"):
        return tag
    if tag in ("timed", "sampled"):  # the metric kinds (C1): both vary run to run, and are judged statistically
        return "timing"
    # A raw expectation of a reproduction file or a broken detector: as strict as a fact.
    return "deterministic"


def _relative(path: Path | None, results_dir: str | Path) -> str | None:
    if path is None:
        return None
    try:
        return str(Path(path).resolve().relative_to(Path(results_dir).resolve()))
    except ValueError:
        return str(path)


def _detector_row(run: RunRef, suite: str, error: str) -> dict[str, Any]:
    """A failed drift row when the change-point detector cannot run: drift must not pass unjudged in silence."""
    return _row(
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


def _failure_line(r: dict[str, Any]) -> str:
    where = "/".join(str(x) for x in (r.get("suite"), r.get("engine_id")) if x)
    details = json.loads(r.get("details") or "{}")
    if details.get("file"):
        return f"{r['check_kind']}: damaged dataset file {details['file']}: {details.get('error')}"
    if r.get("engine_id") is None and (details.get("unexpected") or details.get("error")):
        # An expectation over many rows: say how many failed and which, not a row count as "observed".
        shown = [
            "/".join(str(u[k]) for k in ("engine_id", "workload", "metric") if k in u) + (f"={u['value']}" if "value" in u else "")
            for u in details.get("unexpected", [])[:3]
        ]
        more = f" (+{details['unexpected_count'] - len(shown)} more)" if (details.get("unexpected_count") or 0) > len(shown) else ""
        what = (
            f"{details.get('unexpected_count')} unexpected row(s): {', '.join(shown)}{more}" if shown else f"error: {details.get('error')}"
        )
        return f"{r['check_kind']}: {where + ': ' if where else ''}{r['expectation']}: {what}"
    bounds = f"[{_g(r.get('min_value'))}, {_g(r.get('max_value'))}]"
    extra = ""
    if r["check_kind"] == "drift" and details.get("change_points"):
        cp = details["change_points"][-1]
        extra = (
            f" ({details.get('method')}: change point at run {cp.get('run_id')}, {_g(cp.get('metric_before'))} -> "
            f"{_g(cp.get('metric_after'))}, p={_g(cp.get('pvalue'))})"
        )
    elif r["check_kind"] == "drift" and details.get("reference") is not None:
        extra = f" (reference from {details.get('history_n')} earlier runs: {_g(details['reference'])})"

    return (
        f"{r['check_kind']}: {where + ': ' if where else ''}{r['expectation']} observed {_g(r.get('observed'))}, expected {bounds}{extra}"
    )


def _g(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def check_outcome(results_dir: str | Path, run_id: str) -> dict[str, Any]:
    """What a run's stored validation rows say, by tag: for tests that must not depend on timing.

    Returns ``{"rows": n, "by_tag": {"sanity"|"deterministic"|"timing": {"passed", "failed"}},
    "failed": [lines], "only_timing_failed": bool, "sanity_ok": bool, "facts_ok": bool, "verdicts":
    {verdict: n}, "judged": share (see :func:`jsonbench.checks.verdicts.judged_share`), "judgement":
    passed | suspect | failed | not_judged}``:
    ``sanity_ok`` is true when schema, completeness and dataset files all passed, ``facts_ok`` when
    every deterministic finding and deterministic drift judgement passed too. A DAG test asserts
    those, and accepts a failed check only when ``only_timing_failed`` (a timing band or a timing
    drift judgement missed on a busy machine).
    """
    from jsonbench.dataset.read import VALIDATIONS, read_dataset

    v = read_dataset(results_dir, VALIDATIONS, run_id=run_id).to_pandas()
    by_tag: dict[str, dict[str, int]] = {t: {"passed": 0, "failed": 0} for t in TAGS}
    failed: list[str] = []
    for _, r in v.iterrows():
        tag = row_tag(r)
        ok = bool(r["success"])
        by_tag[tag]["passed" if ok else "failed"] += 1
        if not ok:
            failed.append(
                f"[{tag}] {r['check_kind']}: {r['engine_id'] or ''} {r['expectation']} observed {r['observed']} expected [{r['min_value']}, {r['max_value']}]"
            )
    records = [dict(r) for r in v.to_dict("records")]
    share = judged_share(records)
    return {
        "rows": len(v),
        "by_tag": by_tag,
        "verdicts": {str(k): int(n) for k, n in v["verdict"].value_counts().items()} if len(v) else {},
        "judged": share,
        "judgement": judgement(records, share) if len(v) else "not_checked",
        "failed": failed,
        "sanity_ok": len(v) > 0 and by_tag["sanity"]["passed"] > 0 and by_tag["sanity"]["failed"] == 0,
        "facts_ok": by_tag["deterministic"]["failed"] == 0,
        "only_timing_failed": by_tag["sanity"]["failed"] == 0 and by_tag["deterministic"]["failed"] == 0,
    }
