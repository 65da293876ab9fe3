"""The driver: what each task of the benchmark DAG does, as plain functions.

The DAG file only wires these together; the command line and the tests call them too. Every
function takes and returns JSON-serialisable values (they cross XCom), and none of them branches
on an engine's name or backend: engines go through :func:`jsonbench.engines.base.engine_for`,
suites through :func:`jsonbench.suites.get_suite`.
"""

from __future__ import annotations

import hashlib
import logging
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from jsonbench import hostfacts, paths
from jsonbench.engines.base import engine_for
from jsonbench.matrix import plan_cells, resolve
from jsonbench.dataset.staging import SETUP_RECORD, Staging, WorkloadRecord
from jsonbench.suites import get_suite
from jsonbench.suites.base import WorkloadContext

log = logging.getLogger(__name__)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


def engine_workdir(cell: dict[str, Any]) -> Path:
    """The engine's private folder for this run and cell: deterministic, so a retry or a sweep finds it.

    Kept short (a hash) because a unix socket path may not exceed about 100 bytes.
    """
    digest = hashlib.sha1(f"{cell['run']['run_id']}|{cell['cell_id']}".encode()).hexdigest()[:12]
    return paths.scratch_dir() / f"jsonbench-{digest}"


def plan(params: dict[str, Any] | None, run_id: str, logical_date: str | None) -> dict[str, Any]:
    """Validate the run's parameters and plan its cells, before any engine starts.

    Returns ``{"run": {...}, "<suite>": [cell, ...], ...}`` with a key for every suite of the matrix.
    Raises ``ConfigError`` naming the field, or ``EngineUnavailable`` when a build is missing.
    """
    cfg = resolve(params)
    run = {
        "run_id": run_id,
        "logical_date": logical_date,
        "hardware_label": cfg.hardware_label,
        "results_dir": cfg.results_dir,
        "scale": cfg.scale,
        "git_revision": hostfacts.git_revision(),
        "host": hostfacts.host_facts(),
        "planned_at": _now(),
    }
    cells = plan_cells(cfg, run)
    for suite_cells in cells.values():
        for cell in suite_cells:
            engine_for(cell).check()
            get_suite(cell["suite"]).preflight(cell)
    Staging(cfg.results_dir, run_id).reset()
    n = sum(len(c) for c in cells.values())
    log.info("run %s: %d cells at scale %s on %s: %s", run_id, n, cfg.scale, cfg.hardware_label, ", ".join(c["cell_id"] for cs in cells.values() for c in cs))
    return {"run": run, **cells}


def provision(cell: dict[str, Any]) -> dict[str, Any]:
    """Setup task of a cell: start the engine, record its facts, run the suite's load step."""
    engine = engine_for(cell)
    suite = get_suite(cell["suite"])
    workdir = engine_workdir(cell)
    if workdir.exists():  # a killed earlier attempt of this very cell: clean it first
        log.warning("removing a stale engine folder from an earlier attempt: %s", workdir)
        engine.teardown(engine.handle_for(workdir))
    started = _now()
    phases: dict[str, float] = {}
    t0 = time.perf_counter()
    handle = engine.provision(workdir)
    phases["provision"] = time.perf_counter() - t0
    try:
        staging = Staging(cell["run"]["results_dir"], cell["run"]["run_id"])
        facts = engine.facts(handle)
        staging.write_engine(cell["cell_id"], facts)
        log.info("%s: %s %s (%s), checksums %s", cell["cell_id"], cell["family"], facts.get("version"), facts.get("build"), facts.get("data_checksums"))
        with engine.session(handle) as session:
            ctx = WorkloadContext(cell=cell, session=session, workload=SETUP_RECORD, phases=phases)
            suite.load(ctx)
        staging.write_workload(WorkloadRecord(cell, SETUP_RECORD, ctx.measurements, ctx.phases, started, _now()))
    except BaseException:
        engine.teardown(handle)
        raise
    return handle


def run_workload(cell: dict[str, Any], handle: dict[str, Any], workload: str) -> dict[str, Any]:
    """One workload task: measure, then stage the measurements (only complete results are staged)."""
    engine = engine_for(cell)
    suite = get_suite(cell["suite"])
    started = _now()
    with engine.session(handle) as session:
        ctx = WorkloadContext(cell=cell, session=session, workload=workload)
        t0 = time.perf_counter()
        suite.run(workload, ctx)
        ctx.phases["task"] = time.perf_counter() - t0
    staging = Staging(cell["run"]["results_dir"], cell["run"]["run_id"])
    path = staging.write_workload(WorkloadRecord(cell, workload, ctx.measurements, ctx.phases, started, _now()))
    log.info("%s/%s: %d measurements staged in %s", cell["cell_id"], workload, len(ctx.measurements), path)
    return {"workload": workload, "measurements": len(ctx.measurements), "phases": ctx.phases}


def teardown(cell: dict[str, Any], handle: dict[str, Any] | None) -> None:
    """Teardown task of a cell: stop and remove the engine, whatever happened before."""
    engine = engine_for(cell)
    engine.teardown(handle or engine.handle_for(engine_workdir(cell)))


def sweep(planned: dict[str, Any]) -> list[str]:
    """Last resort after every teardown: remove any engine of this run that is still there.

    Catches a setup task killed after it started its server (its handle never reached XCom).
    """
    swept = []
    for key, cells in planned.items():
        if key == "run":
            continue
        for cell in cells:
            workdir = engine_workdir(cell)
            if workdir.exists():
                engine = engine_for(cell)
                engine.teardown(engine.handle_for(workdir))
                swept.append(cell["cell_id"])
    if swept:
        log.warning("swept engines left behind by killed tasks: %s", ", ".join(swept))
    return swept


def publish(run: dict[str, Any]) -> dict[str, Any]:
    """Publish the run's staged measurements into the Parquet dataset (atomic, replaces this run only)."""
    from jsonbench.dataset.publish import publish_run

    target, rows = publish_run(run["results_dir"], run)
    log.info("published %d rows of run %s to %s", rows, run["run_id"], target)
    return {"path": str(target), "rows": rows}
