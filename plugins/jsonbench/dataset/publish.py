"""Turning a run's staging files into Parquet, and swapping them into the dataset in one step.

The dataset (``<results>/measurements``) is hive-partitioned by hardware label, run date and
run key. A run is one folder holding one file, ``part-0.parquet``. Publishing writes the new file
under a hidden temporary name inside the run's folder, syncs it, and renames it over the old one:
readers see the old run or the new run, never part of either and never neither. Publishing the same
run again replaces that file and touches no other run. See :func:`replace_run` for the details and
:mod:`jsonbench.dataset.repair` for what a killed publish leaves and how it is swept.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from jsonbench.cell import Cell, HostFacts, RunRef
from jsonbench.dataset.fsio import dataset_lock, disk_full_error, fsync_dir, is_disk_full, make_dirs
from jsonbench.dataset.measurement import CANARY_RECORDS, CELL_METRICS, CELL_RECORD, HOST_SUITE, Measurement
from jsonbench.dataset.read import (
    CONFIRMATIONS,
    FILE_NAME,
    MEASUREMENTS,
    TMP_PREFIX,
    TMP_SUFFIX,
    VALIDATIONS,
    DamagedFile,
    DatasetRead,
    read_dataset,
    read_dataset_report,
)
from jsonbench.dataset.repair import quarantine, sweep_leftovers
from jsonbench.dataset.schema import MEASUREMENT_SCHEMA, VALIDATION_SCHEMA, run_key
from jsonbench.dataset.staging import Staging

__all__ = [
    "CONFIRMATIONS",
    "MEASUREMENTS",
    "VALIDATIONS",
    "DamagedFile",
    "DatasetRead",
    "publish_confirmations",
    "publish_run",
    "publish_validations",
    "quarantine",
    "read_dataset",
    "read_dataset_report",
    "replace_run",
    "sweep_leftovers",
]


def _ts(value: Any) -> datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        dt = value
    else:
        dt = datetime.fromisoformat(str(value))
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def _base_row(run: RunRef, cell: Cell, facts: dict[str, Any]) -> dict[str, Any]:
    """The columns every row of one cell shares (run, host, engine, scale, settings).

    The host is the one the cell's provision recorded (the benchmark worker that ran the engine),
    not the one that planned the run, which in a multi-host deployment is another machine.
    """
    host = HostFacts.from_json(facts["host"]) if facts.get("host") else run.host
    return {
        "run_id": run.run_id,
        "logical_date": _ts(run.logical_date),
        "host_name": host.host_name,
        "host_cpu_model": host.host_cpu_model,
        "host_cores": host.host_cores,
        "host_memory_bytes": host.host_memory_bytes,
        "host_kernel": host.host_kernel,
        "host_boot_id": host.host_boot_id,
        "host_machine_id": host.host_machine_id,
        "host_cpu_quota": host.host_cpu_quota,
        "engine": cell.family,
        "engine_id": cell.engine_id,
        "engine_version": facts.get("version") or cell.version,
        "engine_build": facts.get("build"),
        "engine_backend": cell.backend,
        "engine_configure": facts.get("configure"),
        "data_checksums": facts.get("data_checksums"),
        "engine_facts": json.dumps(facts, sort_keys=True, default=str),
        "suite": cell.suite,
        "scale": cell.scale,
        "scale_params": json.dumps(cell.scale_params, sort_keys=True),
        "settings": json.dumps(facts.get("settings") or cell.server_settings, sort_keys=True),
        "git_revision": run.git_revision,
    }


def _row(base: dict[str, Any], m: Measurement, started: str | None, ended: str | None, load: dict[str, Any]) -> dict[str, Any]:
    return {
        **base,
        "workload": m.workload,
        "variant": m.variant,
        "metric": m.metric,
        "unit": m.unit,
        "value": m.value,
        "spread": m.spread,
        "repetitions": len(m.samples),
        "samples": list(m.samples),
        "aggregate": m.aggregate,
        "status": m.status,
        "reason": m.reason,
        "started_at": _ts(started),
        "ended_at": _ts(ended),
        "extra": json.dumps(m.extra, sort_keys=True, default=str) if m.extra else None,
        **load,
        "metric_kind": m.kind,
    }


def worst_window(windows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The columns a measurement row carries from its task's staged measure windows (the JSON of
    :class:`jsonbench.host.load.WindowLoad`): the worst other CPU, steal and load, and quiet only when
    every window was measured and quiet (no window, or one not measured: None)."""
    ws = list(windows)

    def peak(key: str) -> float | None:
        vals = [float(w[key]) for w in ws if w.get(key) is not None]
        return max(vals) if vals else None

    flags = [w.get("quiet") for w in ws]
    quiet = None if not ws or any(f is None for f in flags) else all(bool(f) for f in flags)
    return {"host_other_cpu": peak("other_cpu"), "host_steal": peak("steal"), "host_load_1m": peak("load_1m"), "quiet": quiet}


def staged_rows(staging: Staging) -> list[dict[str, Any]]:
    """Flatten every staged record of a run into rows of :data:`MEASUREMENT_SCHEMA`.

    Each measurement row carries its task's worst measure window (``host_other_cpu``, ``quiet``...).
    Each cell also gets rows of workload ``_cell``: ``duration`` (seconds of its staged tasks),
    ``peak_rss`` and ``disk_peak`` (the engine's largest memory and disk while they ran), which the
    plan step reads back to predict the next run's cost.
    """
    rows: list[dict[str, Any]] = []
    engines: dict[str, dict[str, Any]] = {}
    cells: dict[str, tuple[dict[str, Any], dict[str, float], str, str]] = {}
    for rec in staging.records():
        cell = rec.cell
        facts = engines.setdefault(cell.cell_id, staging.read_engine(cell.cell_id) or {})
        base = _base_row(cell.run, cell, facts)
        if rec.workload in CANARY_RECORDS:
            # The canary beside this cell: the host's rows, each sample's quiet window its own.
            host = {**base, "suite": HOST_SUITE}
            for m in rec.measurements:
                mine = [w for w in rec.windows if m.metric == "total" or w.get("component") in (m.metric, None)]
                rows.append(_row(host, m, rec.started_at, rec.ended_at, worst_window(mine)))
            continue
        load = worst_window(rec.windows)
        for m in rec.measurements:
            rows.append(_row(base, m, rec.started_at, rec.ended_at, load))
        _, acc, first, last = cells.setdefault(
            cell.cell_id, (base, {"duration": 0.0, "peak_rss": 0.0, "disk_peak": 0.0}, rec.started_at, rec.ended_at)
        )
        acc["duration"] += float(rec.resources.get("seconds", 0.0))
        acc["peak_rss"] = max(acc["peak_rss"], float(rec.resources.get("peak_memory", 0.0)))
        acc["disk_peak"] = max(acc["disk_peak"], float(rec.resources.get("peak_disk", 0.0)))
        cells[cell.cell_id] = (base, acc, min(first, rec.started_at), max(last, rec.ended_at))
    none = {"host_other_cpu": None, "host_steal": None, "host_load_1m": None, "quiet": None}
    measured = {r["engine_id"] + "|" + r["suite"] for r in rows}
    for base, acc, first, last in cells.values():
        if base["engine_id"] + "|" + base["suite"] not in measured:
            continue  # a cell that measured nothing publishes nothing, not even its resource rows
        for metric, (unit, kind) in CELL_METRICS.items():
            if acc[metric] > 0:
                rows.append(_row(base, Measurement.of(CELL_RECORD, "default", metric, unit, acc[metric], kind=kind), first, last, none))
    return rows


def partition_dir(results_dir: str | Path, table: str, hardware_label: str, logical_date: str | datetime | None, run_id: str) -> Path:
    """The folder that holds one run's file of ``table`` (measurements or validations)."""
    day = (_ts(logical_date) or datetime.now(UTC)).date().isoformat()
    return Path(results_dir) / table / f"hardware_label={hardware_label}" / f"run_date={day}" / f"run_key={run_key(run_id)}"


def _results_root(target: Path) -> Path:
    """The results folder of a run folder ``<results>/<table>/hardware_label=/run_date=/run_key=``."""
    names = [target.name, target.parent.name, target.parent.parent.name]
    if names[0].startswith("run_key=") and names[1].startswith("run_date=") and names[2].startswith("hardware_label="):
        return target.parents[3]
    return target.parent


def _write_durably(path: Path, table: pa.Table) -> None:
    """Write ``table`` as a new Parquet file at ``path`` and flush it to disk before returning."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    with open(fd, "wb") as fh:
        pq.write_table(table, fh, compression="zstd")
        fh.flush()
        os.fsync(fh.fileno())


def _drop_other_dates(target: Path) -> None:
    """Remove the same run's folders under other ``run_date=`` partitions of its label, once ``target`` holds it.

    A run finished by a later attempt (``resume_of``) on another day is published under that day's
    partition, while the earlier attempt's partition still holds the same run's rows: the run twice.
    A run is one file in one folder, so the newer publish replaces it wherever it was. Called after
    the swap: a crash in between leaves both (read as duplicates), and the next publish of the run
    repairs it.
    """
    label = target.parent.parent
    if not label.name.startswith("hardware_label="):
        return
    for other in label.glob(f"run_date=*/{target.name}"):
        if other == target or not other.is_dir():
            continue
        shutil.rmtree(other)
        day = other.parent
        try:
            day.rmdir()  # a date folder this run alone held
        except OSError:
            pass
        fsync_dir(label)


def replace_run(target: Path, table: pa.Table) -> Path:
    """Write ``table`` as ``target/part-0.parquet``, replacing the run's earlier file, atomically and durably.

    The new file is written under a hidden temporary name inside ``target``, flushed to disk, renamed
    over ``part-0.parquet`` (one atomic rename inside the run's folder: a reader opens either the old
    file or the new one, and the run is never missing) and the folder is synced so the rename survives a
    crash; the same run's folder under another run date (an earlier attempt's) is then removed. On any
    error the temporary file is removed and the earlier file stays as it was; a publish killed outright
    leaves its temporary file for :func:`jsonbench.dataset.repair.sweep_leftovers`. A full disk raises
    ``OSError(ENOSPC)`` naming the file and the filesystem.
    """
    target = Path(target)
    root = _results_root(target)
    tmp = target / f"{TMP_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}{TMP_SUFFIX}"
    created: list[Path] = []
    try:
        with dataset_lock(root):
            created = make_dirs(target)
            try:
                _write_durably(tmp, table)
                os.replace(tmp, target / FILE_NAME)
            except BaseException:
                tmp.unlink(missing_ok=True)
                raise
            fsync_dir(target)
            strays = [p for p in target.glob("*.parquet") if p.name != FILE_NAME and not p.name.startswith((".", "_"))]
            for stray in strays:  # one file per run: an older layout's extra parts would duplicate rows
                stray.unlink()
            if strays:
                fsync_dir(target)
            _drop_other_dates(target)
    except BaseException as exc:
        if target in created:
            try:
                target.rmdir()  # a first publish that failed leaves no empty run folder
            except OSError:
                pass
        if is_disk_full(exc):
            raise disk_full_error("publishing", target / FILE_NAME, exc) from exc
        raise
    return target


def publish_run(results_dir: str | Path, run: RunRef) -> tuple[Path, int]:
    """Publish everything staged for ``run``; return the run's folder and its row count.

    Raises ``RuntimeError`` when nothing was staged: publishing an empty run would replace a good
    earlier attempt of the same run with nothing.
    """
    staging = Staging(results_dir, run.run_id)
    rows = staged_rows(staging)
    if not any(r["suite"] != HOST_SUITE for r in rows):  # the canary alone is no run: the suites measured nothing
        raise RuntimeError(f"nothing staged for run {run.run_id!r} under {staging.root}; every workload failed or none ran")
    table = pa.Table.from_pylist(rows, schema=MEASUREMENT_SCHEMA)
    target = partition_dir(results_dir, MEASUREMENTS, run.hardware_label, run.logical_date, run.run_id)
    return replace_run(target, table), table.num_rows


def publish_confirmations(results_dir: str | Path, run: RunRef) -> tuple[Path, int] | None:
    """Publish the confirmation measurements staged for ``run`` (its :meth:`~RunRef.confirmation`) into ``confirmations``.

    Same schema, partitioning and atomic swap as :func:`publish_run`, in a table of its own: the
    measurement dataset keeps the night as it was measured, and no reader of history meets a run of
    a few re-measured workloads. Returns None when nothing was staged (no suspect, or every
    confirmation failed); an earlier attempt's confirmations of the run are then removed, since they
    confirmed another attempt's suspects.
    """
    confirming = run.confirmation()
    rows = staged_rows(Staging(results_dir, confirming.run_id))
    rows = rows if any(r["suite"] != HOST_SUITE for r in rows) else []
    target = partition_dir(results_dir, CONFIRMATIONS, confirming.hardware_label, confirming.logical_date, confirming.run_id)
    if not rows:
        (target / FILE_NAME).unlink(missing_ok=True)
        return None
    table = pa.Table.from_pylist(rows, schema=MEASUREMENT_SCHEMA)
    return replace_run(target, table), table.num_rows


def publish_validations(results_dir: str | Path, run: RunRef, rows: list[dict[str, Any]]) -> Path:
    """Store a run's validation outcomes beside its measurements (same partitioning, same swap).

    ``rows`` are :meth:`jsonbench.dataset.schema.ValidationRow.to_row` dicts (the check's, stamped),
    or rows read back and given their final verdicts (the confirmation's).
    """
    for r in rows:
        r.setdefault("run_id", run.run_id)
        r.setdefault("logical_date", _ts(run.logical_date))
        r["logical_date"] = _ts(r["logical_date"])
        r["validated_at"] = _ts(r.get("validated_at")) or datetime.now(UTC)
    table = pa.Table.from_pylist(rows, schema=VALIDATION_SCHEMA)
    target = partition_dir(results_dir, VALIDATIONS, run.hardware_label, run.logical_date, run.run_id)
    return replace_run(target, table)
