"""A calibration campaign: N honest runs one after another, then the noise model of the label and scale.

``python -m jsonbench.cli campaign --scale S --runs N [--hardware-label L] [--results-dir D]`` runs
the benchmark DAG N times through the command line's own ``run`` path (``airflow dags test``, one
engine at a time), then writes the calibration record (:mod:`jsonbench.checks.noise`) from exactly
those runs. Nothing else should use the machine meanwhile: the record is what honest noise looks
like, and every drift threshold of the label follows from it.

It is resumable like any run. The campaign's state (its parameters and its runs, each named before
it starts: the command picks the logical date, so a killed campaign knows which run it was in) is
``<results>/calibration/campaigns/<label>-<scale>.json``. Run the same command again: a run already
published is kept; one that started and did not publish is resumed (its completed cells are kept,
the rest measured, as ``run --resume`` does); then new runs until N are published. A run counts as
complete once its measurements are published, whatever its checks said: an honest run whose timing
checks fail is exactly what the noise model must see.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from jsonbench import paths


def state_path(results_dir: str | Path | None, label: str, scale: str) -> Path:
    return paths.results_dir(results_dir) / "calibration" / "campaigns" / f"{label}-{scale}.json"


def _published(results_dir: str | Path | None, run_id: str) -> bool:
    from jsonbench.dataset.schema import run_key

    root = paths.results_dir(results_dir) / "measurements"
    return any(root.glob(f"hardware_label=*/run_date=*/run_key={run_key(run_id)}/part-0.parquet"))


def _save(path: Path, state: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=1) + "\n")
    tmp.replace(path)


def _new_logical_date(taken: list[str]) -> str:
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    while f"manual__{now.isoformat()}" in taken:
        now += dt.timedelta(seconds=1)
    return now.isoformat()


def campaign(conf: dict[str, Any], runs: int, run_dag: Any = None, log: Any = print) -> int:
    """Run (or resume) the campaign for ``conf`` until ``runs`` runs are published, then write the record; the exit status."""
    from jsonbench.checks.noise import build_record, render_record, write_record
    from jsonbench.matrix import resolve

    if runs < 2:
        raise SystemExit("--runs: a noise model needs at least 2 runs (run-to-run spread)")
    cfg = resolve(conf)  # a bad parameter fails here, naming the field, before any run starts
    label, scale, results = cfg.hardware_label, cfg.scale, conf.get("results_dir")
    if run_dag is None:
        from jsonbench.cli import run_dag
    path = state_path(results, label, scale)
    state: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {"conf": conf, "runs": []}
    if state.get("conf") != conf:
        log(f"campaign: parameters differ from the campaign in {path}; keeping its parameters {json.dumps(state['conf'])}")
    conf = state["conf"]
    for entry in state["runs"]:
        if _published(results, entry["run_id"]):
            entry["state"] = "published"
            continue
        log(f"campaign: resuming {entry['run_id']} (started, not published)")
        rid, st, wall, _ = run_dag(conf, logical_date=entry["run_id"].removeprefix("manual__"))
        entry.update(state=st, wall_s=round(wall, 1))
        _save(path, state)
    while sum(_published(results, e["run_id"]) for e in state["runs"]) < runs:
        ld = _new_logical_date([e["run_id"] for e in state["runs"]])
        entry = {"run_id": f"manual__{ld}", "state": "started"}
        state["runs"].append(entry)
        _save(path, state)
        done = sum(_published(results, e["run_id"]) for e in state["runs"])
        log(f"campaign: run {done + 1} of {runs}: {entry['run_id']}")
        rid, st, wall, _ = run_dag(conf, logical_date=ld)
        if rid and rid != entry["run_id"]:
            entry["run_id"] = rid
        entry.update(state=st, wall_s=round(wall, 1))
        _save(path, state)
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
        command=f"python -m jsonbench.cli campaign --scale {scale} --runs {runs} --hardware-label {label}",
    )
    log(render_record(record))
    log(f"campaign: record {write_record(record, results)}")
    state["record"] = str(record.get("created_at"))
    _save(path, state)
    return 0
