"""The driver: what each task of the benchmark DAG does, as plain functions.

The DAG file only wires these together; the command line and the tests call them too. Every
function takes and returns JSON (what crosses XCom: the plan, a handle) and turns it into typed
values at once (:class:`~jsonbench.cell.Cell`, the adapter's handle). None of them branches on an
engine's name or backend: engines come from :func:`jsonbench.engines.base.engine_for`, suites from
:func:`jsonbench.suites.get_suite`.

A run's cells run one after another on the host (the DAG chains them); each cell holds the host
lease (:mod:`jsonbench.host.lease`) from its provision to its teardown, so a second run started
from another process or deployment waits instead of measuring next to it.

The tasks that measure a run's suspects again are :mod:`jsonbench.orchestration.confirmation`; what a
cell's tasks sample beside the suite's figures (the engine's resource peaks, the quiet-window sampler,
the host's canary) is :mod:`jsonbench.orchestration.resources` and :mod:`jsonbench.orchestration.canary`.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from typing import Any

from jsonbench import paths
from jsonbench.cell import Cell, HostFacts, RunRef
from jsonbench.dataset.measurement import Measurement, merge_starts
from jsonbench.dataset.staging import SETUP_RECORD, Staging, WorkloadRecord
from jsonbench.engines.base import engine_for
from jsonbench.errors import BenchmarkError, ConfigError
from jsonbench.host import facts as hostfacts
from jsonbench.host import lease as hostlease
from jsonbench.orchestration.canary import run_canary
from jsonbench.orchestration.deployment import host_engines
from jsonbench.orchestration.plan import plan_cells, resolve
from jsonbench.orchestration.plant import planted
from jsonbench.orchestration.resources import resource_peaks, window_sampler
from jsonbench.suites import get_suite
from jsonbench.suites.base import WorkloadContext, start_rounds

log = logging.getLogger(__name__)

#: The plan key that asks each workload task to fingerprint the data it loaded (an A/B comparison's plan sets it).
FINGERPRINT_DATA = "fingerprint_data"


class CellSkipped(BenchmarkError):
    """This cell does not run in this attempt (not selected, or completed by an earlier attempt)."""


class RunFailed(BenchmarkError):
    """Some task of the run failed; ``summary`` names them (the alert says the same)."""

    def __init__(self, summary: dict[str, Any]) -> None:
        self.summary = summary
        super().__init__(
            f"run {summary['run_id']}: {len(summary['failed_tasks'])} task(s) failed: " + ", ".join(summary["failed_tasks"][:12])
        )


def _now() -> str:
    return datetime.now(UTC).isoformat()


# -- the plan -------------------------------------------------------------------------------------


def cells_of(planned: dict[str, Any]) -> list[Cell]:
    """The typed cells of a plan (the JSON the plan task returned)."""
    return [Cell.from_json(c) for c in planned.get("cells", [])]


def cell_of(planned: dict[str, Any], cell_id: str) -> Cell | None:
    """The planned cell with this id, or None when the run did not select it."""
    for c in planned.get("cells", []):
        if c["cell_id"] == cell_id:
            return Cell.from_json(c)
    return None


def run_of(planned: dict[str, Any]) -> RunRef:
    return RunRef.from_json(planned["run"])


def _same_work(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """True when two plans of a cell measure the same thing (ignoring when and by which revision)."""
    keys = ("cell_id", "suite", "engine_id", "backend", "backend_options", "scale", "scale_params", "repetitions", "postgres")
    return all(a.get(k) == b.get(k) for k in keys)


def completed_cells(staging: Staging, cells: list[Cell]) -> list[str]:
    """Cells an earlier attempt of this run finished: facts, setup and every workload staged, same plan."""
    done = []
    for cell in cells:
        records = {r.workload: r for r in staging.records(cell.cell_id)}
        wanted = {SETUP_RECORD, *get_suite(cell.suite).workloads}
        if staging.read_engine(cell.cell_id) is not None and wanted <= set(records):
            if all(_same_work(r.cell.to_json(), cell.to_json()) for r in records.values()):
                done.append(cell.cell_id)
    return done


def plan(
    params: dict[str, Any] | None,
    run_id: str,
    logical_date: str | None,
    bound_label: str | None = None,
    served: list[str] | None = None,
) -> dict[str, Any]:
    """Validate the run's parameters and plan its cells, before any engine starts.

    Returns ``{"run": {...}, "cells": [cell, ...], "resumed": [cell ids], "costs": {...}}`` (JSON).
    Raises ``ConfigError`` naming the field, ``EngineUnavailable`` when a build is missing, or
    ``RunTooBig`` when the machine cannot hold the run. A new attempt of the same run keeps the
    staged work of cells an earlier attempt completed (they are not measured again) and forgets
    everything else. ``served``: the engines the calling DAG has task groups for (else ``$JSONBENCH_HOST_ENGINES``
    when set); a selected engine outside it is refused.
    """
    from jsonbench.orchestration import costs

    lap = _Laps()
    cfg = resolve(params, bound_label=bound_label)
    if cfg.resume_of and cfg.resume_of != run_id:
        # `airflow dags test DAG DATE` names its run after the moment it starts, not after DATE, so the command
        # line's --resume cannot reuse the Airflow run id: the run it finishes is named by the parameter instead.
        log.info("run %s finishes run %s: its completed cells are kept, its rows published under %s", run_id, cfg.resume_of, cfg.resume_of)
        run_id = cfg.resume_of
    hosted = served if served is not None else host_engines()
    outside = [e for e in cfg.engines if hosted is not None and e not in hosted]
    if outside:
        raise ConfigError(
            "engines",
            f"{', '.join(outside)} not served by this deployment's DAGs (they carry the groups of {','.join(hosted or [])}): "
            f"list it in JSONBENCH_HOST_ENGINES, or run it with `jsonbench run --engines {','.join(outside)}`",
        )
    run = RunRef(
        run_id=run_id,
        logical_date=logical_date,
        hardware_label=cfg.hardware_label,
        results_dir=cfg.results_dir,
        scale=cfg.scale,
        git_revision=hostfacts.git_revision(),
        host=HostFacts.from_json(hostfacts.host_facts()),
        planned_at=_now(),
    )
    lap("parameters and host facts")
    cells = plan_cells(cfg, run)
    lap("cells")
    _check_expectations()
    lap("expectation files")
    for cell in cells:
        engine_for(cell).check()
        get_suite(cell.suite).preflight(cell)
    lap("engine builds and suite preflights")
    # Several starts only where the engine can restart (a user's own server, SQLite in its worker: one); their rows say so.
    cells = [c if c.starts == 1 or engine_for(c).can_restart else c.with_starts(1) for c in cells]
    staging = Staging(cfg.results_dir, run_id)
    resumed = completed_cells(staging, cells)
    staging.keep_only(resumed)
    staging.write_params({k: v for k, v in (params or {}).items() if k != "resume_of"})
    todo = [c for c in cells if c.cell_id not in resumed]
    lap("staging")
    estimate = costs.plan_costs(todo, cfg.results_dir)
    lap("costs")
    log.info("%s", costs.describe(estimate, resumed))
    costs.refuse_if_too_big(estimate)
    log.info("plan's own time, by step: %s", lap.said())
    log.info(
        "run %s: %d cells at scale %s on %s: %s", run_id, len(cells), cfg.scale, cfg.hardware_label, ", ".join(c.cell_id for c in cells)
    )
    return {"run": run.to_json(), "cells": [c.to_json() for c in cells], "resumed": resumed, "costs": estimate.to_json()}


class _Laps:
    """Seconds between calls, each under a name: what a task's steps took, said in one log line."""

    def __init__(self) -> None:
        self.t = time.perf_counter()
        self.laps: list[tuple[str, float]] = []

    def __call__(self, name: str) -> None:
        now = time.perf_counter()
        self.laps.append((name, now - self.t))
        self.t = now

    def said(self) -> str:
        return ", ".join(f"{name} {sec:.1f} s" for name, sec in self.laps)


def _check_expectations() -> None:
    """A malformed expectation file fails the plan, naming the file and the field, before any engine starts."""
    from jsonbench.checks.validate import validate_library

    validate_library()


# -- one cell -------------------------------------------------------------------------------------


def runnable_cells(planned: dict[str, Any] | None) -> list[str]:
    """The cells this attempt measures: the plan's, less those an earlier attempt completed (the DAG's ``select``)."""
    if not planned:
        return []
    resumed = set(planned.get("resumed", []))
    return [str(c["cell_id"]) for c in planned.get("cells", []) if str(c["cell_id"]) not in resumed]


def unselected_tasks(planned: dict[str, Any] | None, groups: dict[str, list[str]]) -> list[str]:
    """The task ids of every group (``{cell id: its task ids}``) whose cell this attempt does not measure (the DAG's
    ``select`` marks them skipped at once); a failed plan measures nothing, so every group is listed."""
    chosen = set(runnable_cells(planned))
    return [task_id for cell_id, task_ids in groups.items() if cell_id not in chosen for task_id in task_ids]


def provision(planned: dict[str, Any], cell_id: str) -> dict[str, Any]:
    """Setup task of a cell: take the host, start the engine, record its facts, run the suite's load step.

    Raises :class:`CellSkipped` for a cell the run did not select or an earlier attempt completed,
    and :class:`~jsonbench.host.lease.HostBusy` while another run's engine holds the host.
    """
    cell = cell_of(planned, cell_id)
    if cell is None:
        raise CellSkipped(f"{cell_id} is not selected by this run's parameters")
    if cell_id in planned.get("resumed", []):
        raise CellSkipped(f"{cell_id} was completed by an earlier attempt of run {cell.run.run_id}; its staged results are kept")
    engine = engine_for(cell)
    suite = get_suite(cell.suite)
    hostlease.acquire(cell.run.run_id, cell_id, engine.workdir)
    hostlease.stop_waiting(cell.run.run_id, cell_id)
    try:
        if engine.workdir.exists():  # a killed earlier attempt of this very cell: clean it first
            log.warning("removing a stale engine folder from an earlier attempt: %s", engine.workdir)
            engine.teardown(engine.handle_for())
        run_canary(cell, engine.workdir.parent, "before")
        started = _now()
        phases: dict[str, float] = {}
        t0 = time.perf_counter()
        handle = engine.provision()
        phases["provision"] = time.perf_counter() - t0
    except BaseException:
        hostlease.release(cell.run.run_id, cell_id)
        raise
    try:
        staging = Staging(cell.run.results_dir, cell.run.run_id)
        facts = engine.facts(handle)
        # The machine the engine runs on, read here on the benchmark worker (the plan may run elsewhere).
        facts["host"] = hostfacts.host_facts()
        staging.write_engine(cell_id, facts)
        log.info(
            "%s: %s %s (%s), checksums %s", cell_id, cell.family, facts.get("version"), facts.get("build"), facts.get("data_checksums")
        )
        with engine.session(handle) as session, resource_peaks(engine, handle) as peaks:
            ctx = WorkloadContext(
                cell=cell,
                session=session,
                workload=SETUP_RECORD,
                phases=phases,
                sampler=window_sampler(engine, handle, cell),
                kinds=suite.metric_kind,
            )
            suite.load(ctx)
        staging.write_workload(
            WorkloadRecord(cell, SETUP_RECORD, ctx.measurements, ctx.phases, started, _now(), [w.to_json() for w in ctx.windows], peaks)
        )
    except BaseException:
        engine.teardown(handle)
        hostlease.release(cell.run.run_id, cell_id)
        raise
    return handle.to_json()


def run_workload(planned: dict[str, Any], cell_id: str, handle_json: dict[str, Any], workload: str) -> dict[str, Any]:
    """One workload task: measure, then stage the measurements (only complete results are staged).

    A cell whose figures rest on several engine starts (``starts``) runs the workload once per start, the server
    restarted before each start after the first, its repetitions split across them (:func:`start_rounds`), and stages
    one record: every start's samples under one metric (:func:`merge_starts`), the restarts' seconds as phase
    ``restart``.
    """
    cell = cell_of(planned, cell_id)
    if cell is None:
        raise CellSkipped(f"{cell_id} is not selected by this run's parameters")
    engine = engine_for(cell)
    handle = engine.load_handle(handle_json)
    suite = get_suite(cell.suite)
    started = _now()
    rounds: list[list[Measurement]] = []
    phases: dict[str, float] = {}
    windows: list[Any] = []
    peaks: dict[str, float] = {}
    fingerprints: list[str] = []
    for i, round_cell in enumerate(start_rounds(cell, suite.repetition_params)):
        restart_s = 0.0
        if i:
            t0 = time.perf_counter()
            handle = engine.restart(handle)
            restart_s = time.perf_counter() - t0
            phases["restart"] = phases.get("restart", 0.0) + restart_s
        with engine.session(handle) as session, resource_peaks(engine, handle) as used:
            ctx = WorkloadContext(
                cell=round_cell,
                session=session,
                workload=workload,
                sampler=window_sampler(engine, handle, cell),
                kinds=suite.metric_kind,
                start=i,
                fingerprint=session.fingerprint if planned.get(FINGERPRINT_DATA) else None,
            )
            t0 = time.perf_counter()
            suite.run(workload, ctx)
            ctx.phases["task"] = time.perf_counter() - t0
        rounds.append(ctx.measurements)
        fingerprints.extend(ctx.fingerprints)
        windows.extend(w.to_json() for w in ctx.windows)
        for phase, seconds in ctx.phases.items():
            phases[phase] = phases.get(phase, 0.0) + seconds
        for key, value in used.items():
            # The peaks are the largest any start held; the seconds (the cell's duration) add up, restarts included.
            if key == "seconds":
                peaks[key] = peaks.get(key, 0.0) + value + restart_s
            else:
                peaks[key] = max(peaks.get(key, 0.0), value)
    measurements = planted(merge_starts(rounds), cell, workload)
    staging = Staging(cell.run.results_dir, cell.run.run_id)
    path = staging.write_workload(WorkloadRecord(cell, workload, measurements, phases, started, _now(), windows, peaks, fingerprints))
    disturbed = sum(1 for w in windows if w.get("quiet") is False)
    log.info(
        "%s/%s: %d measurements staged in %s (%d of %d measure windows disturbed by other load%s)",
        cell_id,
        workload,
        len(measurements),
        path,
        disturbed,
        len(windows),
        f"; {len(rounds)} engine starts, restarts {phases.get('restart', 0.0):.2f} s" if len(rounds) > 1 else "",
    )
    return {
        "workload": workload,
        "measurements": len(measurements),
        "phases": phases,
        "disturbed_windows": disturbed,
        "starts": len(rounds),
    }


def teardown(planned: dict[str, Any], cell_id: str, handle_json: dict[str, Any] | None) -> None:
    """Teardown task of a cell: stop and remove the engine, whatever happened before; give the host back."""
    cell = cell_of(planned, cell_id)
    if cell is None:
        return
    engine = engine_for(cell)
    handle = engine.load_handle(handle_json) if handle_json else engine.handle_for()
    try:
        engine.teardown(handle)
        cells = cells_of(planned)
        if cells and cells[-1].cell_id == cell_id and not engine.workdir.exists():
            run_canary(cell, engine.workdir.parent, "after")  # the host after the last cell, its engine gone
    finally:
        if not engine.workdir.exists():
            hostlease.release(cell.run.run_id, cell_id)


def sweep(planned: dict[str, Any]) -> list[str]:
    """Last resort after every teardown: remove any engine of this run that is still there.

    Catches a setup task killed after it started its server (its handle never reached XCom), gives
    the host lease back, and removes leftovers of a killed publish.
    """
    swept = []
    for cell in cells_of(planned):
        engine = engine_for(cell)
        if engine.workdir.exists():
            engine.teardown(engine.handle_for())
            swept.append(cell.cell_id)
    run = run_of(planned)
    held = hostlease.release_run(run.run_id)
    for cell in cells_of(planned):
        hostlease.stop_waiting(run.run_id, cell.cell_id)
    if swept:
        log.warning("swept engines left behind by killed tasks: %s", ", ".join(swept))
    if held is not None:
        log.warning("released the host lease %s still held for %s", run.run_id, held.cell_id)
    try:
        from jsonbench.dataset.repair import sweep_leftovers

        for path in sweep_leftovers(run.results_dir):
            log.warning("removed a leftover of a killed publish: %s", path)
    except Exception as exc:  # never let housekeeping fail the sweep
        log.warning("could not sweep publish leftovers under %s: %s", run.results_dir, exc)
    return swept


# -- the run --------------------------------------------------------------------------------------


def publish(planned: dict[str, Any]) -> dict[str, Any]:
    """Publish the run's staged measurements into the Parquet dataset (atomic, replaces this run only)."""
    from jsonbench.dataset.publish import publish_run

    run = run_of(planned)
    target, rows = publish_run(run.results_dir, run)
    log.info("published %d rows of run %s to %s", rows, run.run_id, target)
    refresh_views(run.results_dir)
    return {"path": str(target), "rows": rows}


def check(planned: dict[str, Any]) -> dict[str, Any]:
    """Run the Great Expectations checks of the published run against its plan's cells (raises ``ChecksFailed``)."""
    from jsonbench.checks import check_run

    run = run_of(planned)
    try:
        return dict(check_run(run, cells_of(planned)))
    finally:
        refresh_views(run.results_dir)


def refresh_views(results_dir: str) -> None:
    """Rebuild the results' ready-made DuckDB views (never fails the task)."""
    from jsonbench.dataset import views

    try:
        views.refresh(results_dir)
    except Exception as exc:
        log.warning("could not refresh the DuckDB views under %s: %s", results_dir, exc)


#: Task states that mean the run did not do what it should (skips are fine: unselected cells).
FAILED_STATES = ("failed", "upstream_failed")


def outcome(
    planned: dict[str, Any] | None, run_id: str, states: dict[str, str], alerted: tuple[str, ...] = ("check", "confirm_check")
) -> dict[str, Any]:
    """The run's verdict from its tasks' states; raise :class:`RunFailed` (failing the run) if any failed.

    ``alerted`` are tasks whose failure already raised its own alert (the check and confirmation tasks'): the run
    still fails, but the summary says ``already_alerted`` so the run's alert is not sent twice.
    """
    failed = sorted(t for t, s in states.items() if s in FAILED_STATES)
    if not planned:
        failed = sorted(set(failed) | {"plan"})
    results_dir = run_of(planned).results_dir if planned else str(paths.results_dir())
    summary = {
        "kind": "run",
        "run_id": run_id,
        "failed_tasks": failed,
        "results_dir": results_dir,
        "states": {s: sum(1 for v in states.values() if v == s) for s in sorted({str(v) for v in states.values()})},
        "already_alerted": bool(failed) and all(t in alerted for t in failed),
    }
    if failed:
        raise RunFailed(summary)
    return summary
