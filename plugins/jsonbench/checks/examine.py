"""``check_run``: sanity, reproduction and drift checks of one published run, stored as validation rows.

Named *examine* because "run" already means a DAG run and a rerun (``orchestration/rerun.py``): this module
examines the published results of one DAG run and publishes the validation rows that say what it found.

Order of work: read the run's published rows (never written to), build the frames, validate each
with Great Expectations (Data Docs under ``<results>/data_docs/<run_key>/``), turn the outcomes
into rows of ``VALIDATION_SCHEMA`` and publish them beside the measurements, and only then raise
:class:`ChecksFailed` if a check that alerts failed, or the run is ``not_judged``. The rows of each
check kind come from :mod:`jsonbench.checks.validation_rows`; the summary's counts and failure lines
from :mod:`jsonbench.checks.outcome`, which also reads a stored run's rows back (:func:`~jsonbench.checks.outcome.check_outcome`).

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
from jsonbench.checks.gxrun import GXSession
from jsonbench.checks.library import Library, load_library
from jsonbench.checks.outcome import failure_line, summary_counts
from jsonbench.checks.validation_rows import damaged_rows, detector_row, drift_check, reproduction_check, sanity_check
from jsonbench.checks.verdicts import alerting, describe_share, judged_share, judgement, mark_suspects, unjudged
from jsonbench.dataset.measurement import HOST_SUITE
from jsonbench.history.changepoints import DetectorUnavailable
from jsonbench.history.cleared import read_as_history

log = logging.getLogger(__name__)


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
            rows += reproduction_check(lib, gxs, run, published, suite)
        else:
            notes.append(f"{suite}: no {suite}.reproduction.json, so no reproduction expectations")
        try:
            drift_rows, drift_notes = drift_check(lib, gxs, run, published, dataset, suite)
        except DetectorUnavailable as exc:
            drift_rows, drift_notes = [detector_row(run, suite, str(exc))], [f"{suite}: drift not judged: {exc}"]
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
    rows = damaged_rows(read.damaged, run, MEASUREMENTS)
    rows += sanity_check(lib, gxs, run, published, cells)
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
        **summary_counts(rows),
        "damaged_files": [d.path for d in read.damaged],
        "notes": notes,
        "failures": [failure_line(r) for r in failed[:20]],
        "suspects": [f"suspect: {failure_line(r)}" for r in suspects[:20]],
        "validations": str(target),
        "data_docs": str(docs_index) if docs_index else None,
        "data_docs_pages": pages,
        "results_dir": str(results_dir),
    }
    _log_summary(summary)
    if failed or summary["not_judged"]:
        raise ChecksFailed(summary)
    return summary


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


def _relative(path: Path | None, results_dir: str | Path) -> str | None:
    if path is None:
        return None
    try:
        return str(Path(path).resolve().relative_to(Path(results_dir).resolve()))
    except ValueError:
        return str(path)
