"""A calibration campaign: N honest runs one after another, then the noise model of the label and scale.

``jsonbench-dev campaign --scale S --runs N [--hardware-label L] [--results-dir D]`` runs
the benchmark DAG N times through the command line's own ``run`` path (``airflow dags test``, one
engine at a time), then writes the calibration record (:mod:`jsonbench.history.noise`) from exactly
those runs. Nothing else should use the machine meanwhile: the record is what honest noise looks
like, and every drift threshold of the label follows from it.

It is resumable like any run. The campaign's state (its parameters and its runs) is
``<results>/calibration/_campaigns/<label>-<scale>.json``; Airflow names each run, so an entry records
the staged attempts that existed before it started, and the new staging folder names its run even
when the campaign was killed mid-run. Run the same command again: a run already published is kept;
one that staged and did not publish is resumed (its completed cells are kept, the rest measured:
``run --resume``'s own path); then new runs until N are published. A run counts as
complete once its measurements are published, whatever its checks said: an honest run whose timing
checks fail is exactly what the noise model must see.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from jsonbench import paths
from jsonbench.dataset.fsio import write_text_atomic


def state_path(results_dir: str | Path | None, label: str, scale: str) -> Path:
    return paths.results_dir(results_dir) / "calibration" / "_campaigns" / f"{label}-{scale}.json"


def _published(results_dir: str | Path | None, run_id: str) -> bool:
    from jsonbench.dataset.schema import run_key

    root = paths.results_dir(results_dir) / "measurements"
    return any(root.glob(f"hardware_label=*/run_date=*/run_key={run_key(run_id)}/part-0.parquet"))


def _save(path: Path, state: dict[str, Any]) -> None:
    write_text_atomic(path, json.dumps(state, indent=1) + "\n", "campaign state")


def _staged(results_dir: str | Path | None) -> set[str]:
    """The run keys with a staged attempt under the results (each run's tasks stage there before it publishes)."""
    root = paths.results_dir(results_dir) / "_staging"
    return {p.name for p in root.iterdir() if (p / "params.json").exists()} if root.exists() else set()


def _run_id_of(key: str) -> str:
    """The run id behind a staging folder's run key (``manual__2026-12-01T09_02_43.703028_00_00``)."""
    m = re.fullmatch(r"(\w+__\d{4}-\d\d-\d\dT\d\d)_(\d\d)_(\d\d(?:\.\d+)?)_(\d\d)_(\d\d)", key)
    return f"{m.group(1)}:{m.group(2)}:{m.group(3)}+{m.group(4)}:{m.group(5)}" if m else key


def _identify(entry: dict[str, Any], results_dir: str | Path | None) -> None:
    """Name the run an entry started: the staging folder that appeared after it began (Airflow picks the run id)."""
    if entry.get("identified"):
        return
    new = sorted(_staged(results_dir) - set(entry.get("staged_before") or []))
    if new:
        entry["run_id"], entry["identified"] = _run_id_of(new[0]), True


def campaign(conf: dict[str, Any], runs: int, *, run_dag: Any, resume_args: Any, log: Any = print) -> int:
    """Run (or resume) the campaign for ``conf`` until ``runs`` runs are published, then write the record; the exit status.

    ``run_dag`` and ``resume_args`` are :func:`jsonbench.orchestration.dagtest.run_dag` and
    :func:`~jsonbench.orchestration.dagtest.resume_args`, passed in by the command (a test passes its own).
    """
    from jsonbench.orchestration.plan import resolve
    from jsonbench_dev.record import build_record, render_record, write_record

    if runs < 2:
        raise SystemExit("--runs: a noise model needs at least 2 runs (run-to-run spread)")
    cfg = resolve(conf)  # a bad parameter fails here, naming the field, before any run starts
    label, scale, results = cfg.hardware_label, cfg.scale, conf.get("results_dir")
    path = state_path(results, label, scale)
    state: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {"conf": conf, "runs": []}
    if state.get("conf") != conf:
        log(f"campaign: parameters differ from the campaign in {path}; keeping its parameters {json.dumps(state['conf'])}")
    conf = state["conf"]
    for entry in state["runs"]:
        _identify(entry, results)
        if _published(results, entry["run_id"]):
            entry["state"] = "published"
            continue
        if not entry.get("identified"):
            log(f"campaign: {entry['run_id']} never staged anything; starting a new run instead")
            entry["state"] = "abandoned"
            continue
        log(f"campaign: resuming {entry['run_id']} (started, not published)")
        params, ld = resume_args(entry["run_id"], results)
        rid, st, wall, _ = run_dag(params, logical_date=ld)
        if rid and rid != entry["run_id"] and _published(results, rid):
            # `airflow dags test` of an earlier logical date may name a new run; that run is the one that finished.
            entry["resumed_as"], entry["run_id"] = rid, rid
        entry.update(state=st, wall_s=round(wall, 1))
        _save(path, state)
        if not _published(results, entry["run_id"]):
            log(f"campaign: {entry['run_id']} still published nothing ({st}); run the same command again to resume it")
            return 1
    while sum(_published(results, e["run_id"]) for e in state["runs"]) < runs:
        done = sum(_published(results, e["run_id"]) for e in state["runs"])
        entry = {"run_id": "(not yet named)", "state": "started", "staged_before": sorted(_staged(results))}
        state["runs"].append(entry)
        _save(path, state)
        log(f"campaign: run {done + 1} of {runs}")
        rid, st, wall, _ = run_dag(conf)
        _identify(entry, results)
        if rid and not entry.get("identified"):
            entry["run_id"], entry["identified"] = rid, True
        entry.update(state=st, wall_s=round(wall, 1))
        entry.pop("staged_before", None)
        _save(path, state)
        log(f"campaign: {entry['run_id']}: {st} in {wall:.0f} s")
        if not _published(results, entry["run_id"]):
            log(f"campaign: {entry['run_id']} published nothing ({st}); run the same command again to resume it")
            return 1
    used = [e["run_id"] for e in state["runs"] if _published(results, e["run_id"])]
    record = build_record(
        paths.results_dir(results),
        scale,
        label,
        runs=used,
        why=f"the {len(used)} honest runs of the campaign {path.name}, one after another, nothing else on the machine",
        command=f"bin/jsonbench-dev campaign --scale {scale} --runs {runs} --hardware-label {label}",
    )
    log(render_record(record))
    log(f"campaign: record {write_record(record, results)}")
    state["record"] = str(record.get("created_at"))
    _save(path, state)
    return 0
