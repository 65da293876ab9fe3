"""What each task of ``jsonb_benchmark_compare`` does, as plain functions taking and returning JSON.

One start is one arm's engine start in one pair: for each suite, a nightly cell of its own (id
``<suite>__p<pair>a`` or ``...b``) that the nightly driver measures as it measures any cell
(:func:`jsonbench.orchestration.tasks.provision`: the host lease, the canary beside it, a fresh engine with the
arm's settings, the suite's load; :func:`~jsonbench.orchestration.tasks.run_workload` per workload;
:func:`~jsonbench.orchestration.tasks.teardown`). Its records are staged under the comparison's run id as a
night's are; a start whose every suite completed is marked done (``.start.json`` in its cell's folder, hidden
from the staging reader) and a task run again (cleared, resumed) keeps it and measures only what is missing.

Each start records the fingerprint of its data (:func:`start_fingerprint`): what generates it (the suite, its
scale parameters, where a user's documents carry their sha256, and the suite's SQL files) and, per workload, a
content hash of the rows as loaded, which the workload's context takes before its first measurement
(:attr:`jsonbench.suites.base.WorkloadContext.fingerprint`, asked for by the plan's ``fingerprint_data``). The
judge drops a pair whose two arms' fingerprints differ.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jsonbench import paths
from jsonbench.cell import Cell, HostFacts, PostgresOptions, RunRef
from jsonbench.compare.judge import Judged, Pairs, StartResult, judge, table, undecided
from jsonbench.compare.params import DEFAULT_MARGIN, Arm, ComparisonConfig, resolve_comparison
from jsonbench.dataset.staging import Staging, write_json_atomic
from jsonbench.errors import BenchmarkError, ConfigError
from jsonbench.history.stats.paired import Stage, pair_order
from jsonbench.host import facts as hostfacts
from jsonbench.orchestration import tasks as driver
from jsonbench.orchestration.plan import plan_cells

log = logging.getLogger(__name__)

DONE = ".start.json"
ATTEMPT = ".attempt.json"


def start_cell_id(suite: str, pair: int, arm: str) -> str:
    """The cell id of one suite in one start: ``json_vs_jsonb__p003a``."""
    return f"{suite}__p{pair:03d}{arm.lower()}"


def fingerprint(cell: Cell) -> str:
    """The sha256 of what generates the cell's data: suite, scale parameters, the suite's SQL files."""
    h = hashlib.sha256()
    h.update(json.dumps({"suite": cell.suite, "scale_params": cell.scale_params}, sort_keys=True).encode())
    folder = paths.sql_dir() / cell.suite
    for f in sorted(folder.rglob("*")) if folder.is_dir() else []:
        if f.is_file():
            h.update(f.relative_to(folder).as_posix().encode())
            h.update(f.read_bytes())
    return h.hexdigest()


def start_fingerprint(cell: Cell, staging: Staging) -> str:
    """The start's data fingerprint: :func:`fingerprint` of the generator and each staged workload's content hashes
    of the rows as loaded (in workload order), hashed together."""
    h = hashlib.sha256(fingerprint(cell).encode())
    for record in sorted(staging.records(cell.cell_id), key=lambda r: r.workload):
        if record.fingerprints:
            h.update(f"{record.workload}:{','.join(record.fingerprints)}\n".encode())
    return h.hexdigest()


def _arm_cell(base: Cell, arm: Arm, pair: int, position: int) -> Cell:
    postgres = base.postgres
    if postgres is not None:
        postgres = PostgresOptions(
            server_settings={**postgres.server_settings, **arm.settings},
            memory_caps=postgres.memory_caps,
            data_checksums=postgres.data_checksums,
            statement_timeout_s=postgres.statement_timeout_s,
        )
    return replace(base, cell_id=start_cell_id(base.suite, pair, arm.name), postgres=postgres, position=position)


def stage_starts(cfg: ComparisonConfig, stage: int) -> list[dict[str, Any]]:
    """The starts of stage ``stage`` (0-based) in the order they run: its pairs in :func:`pair_order`, each pair's two arms.

    Each stage's order is balanced on its own (seeded by the comparison's seed and the stage), so every look
    rests on pairs as many A-first as B-first, give or take one.
    """
    lo = cfg.stages[stage - 1].pairs if stage else 0
    hi = cfg.stages[stage].pairs
    out = []
    for i, order in enumerate(pair_order(hi - lo, cfg.seed * 1000 + stage)):
        for arm in order:
            out.append({"stage": stage, "pair": lo + i, "arm": arm, "order": list(order)})
    return out


def plan(params: dict[str, Any] | None, run_id: str, logical_date: str | None) -> dict[str, Any]:
    """Validate the comparison and plan every start of every stage, before any engine starts.

    Returns the plan JSON the nightly driver reads (``run``, ``cells``: one per suite per start) with the
    comparison's own keys: ``comparison`` (the arms, stages, seed, margin), ``stages`` (each stage's starts),
    ``margins`` (per metric, from this host's A/A comparison of arm A; empty without one).
    """
    from jsonbench.compare.publish import aa_margins
    from jsonbench.engines.base import engine_for
    from jsonbench.suites import get_suite

    cfg = resolve_comparison(params)
    host = HostFacts.from_json(hostfacts.host_facts())
    run = RunRef(
        run_id=run_id,
        logical_date=logical_date,
        hardware_label=cfg.run.hardware_label,
        results_dir=cfg.run.results_dir,
        scale=cfg.run.scale,
        git_revision=hostfacts.git_revision(),
        host=host,
        planned_at=datetime.now(UTC).isoformat(),
    )
    base = {(c.suite, c.engine_id): c for c in plan_cells(cfg.run, run)}
    stages = [stage_starts(cfg, k) for k in range(len(cfg.stages))]
    cells: list[Cell] = []
    for starts in stages:
        for s in starts:
            arm = cfg.a if s["arm"] == "A" else cfg.b
            for suite in cfg.suites:
                cells.append(_arm_cell(base[(suite, arm.engine)], arm, s["pair"], len(cells)))
    for arm in (cfg.a, cfg.b):
        for suite in cfg.suites:
            cell = base[(suite, arm.engine)]
            engine_for(cell).check()
            get_suite(suite).preflight(cell)
    margins, source = (
        ({}, None) if cfg.margin is not None else aa_margins(cfg.run.results_dir, cfg.run.hardware_label, cfg.a, host.host_machine_id)
    )
    comparison = {
        "a": cfg.a.to_json(),
        "b": cfg.b.to_json(),
        "suites": list(cfg.suites),
        "workloads": {s: list(w) for s, w in cfg.workloads.items()},
        "stages": [{"pairs": s.pairs, "alpha": s.alpha, "level": s.level} for s in cfg.stages],
        "seed": cfg.seed,
        "margin": cfg.margin if cfg.margin is not None else DEFAULT_MARGIN,
        "margin_source": "run" if cfg.margin is not None else (f"aa:{source}" if source else "default"),
    }
    Staging(cfg.run.results_dir, run_id).write_params(dict(params or {}))
    log.info(
        "comparison %s: A %s, B %s; %s at %s; pairs %s (seed %d); margin %s (%s)",
        run_id,
        cfg.a.label,
        cfg.b.label,
        ", ".join(cfg.suites),
        cfg.run.scale,
        [s.pairs for s in cfg.stages],
        cfg.seed,
        comparison["margin"],
        comparison["margin_source"],
    )
    return {
        "run": run.to_json(),
        "cells": [c.to_json() for c in cells],
        "resumed": [],
        driver.FINGERPRINT_DATA: True,
        "comparison": comparison,
        "stages": stages,
        "margins": margins,
    }


def check_cells(planned: dict[str, Any]) -> list[tuple[Arm, Cell]]:
    """The throwaway cells of the settings check: one per arm with settings of its own (one when both arms are alike),
    its first suite's start cell under the id ``<suite>__check<arm>`` (its own engine folder and host lease)."""
    cmp = planned["comparison"]
    suite = cmp["suites"][0]
    out: list[tuple[Arm, Cell]] = []
    for arm in (Arm.from_json(cmp["a"]), Arm.from_json(cmp["b"])):
        if not arm.settings or any(arm.engine == o.engine and arm.settings == o.settings for o, _ in out):
            continue
        first = next(x for starts in planned["stages"] for x in starts if x["arm"] == arm.name)
        cell = driver.cell_of(planned, start_cell_id(suite, int(first["pair"]), arm.name))
        assert cell is not None
        out.append((arm, replace(cell, cell_id=f"{suite}__check{arm.name.lower()}")))
    return out


def _refused(arm: Arm, exc: BaseException) -> ConfigError:
    """The error of an arm whose settings the server refused, naming the setting where the server's words name one."""
    said = str(exc)
    named = [k for k in sorted(arm.settings) if f'"{k}"' in said or f"'{k}'" in said]
    lines = [ln.strip() for ln in said.splitlines() if any(f'"{k}"' in ln for k in named) or "FATAL" in ln or "ERROR" in ln]
    where = f"{arm.name.lower()}.settings" + (f".{named[0]}" if len(named) == 1 else "")
    shown = ", ".join(f"{k}={arm.settings[k]}" for k in (named or sorted(arm.settings)))
    return ConfigError(
        where,
        f"arm {arm.name} ({arm.engine}): the server refused {shown}: " + ("; ".join(dict.fromkeys(lines)) or said[-1500:]),
    )


def check_settings(planned: dict[str, Any]) -> list[str]:
    """Start each arm's engine once with its settings, before any pair runs, and stop it; return the arms checked.

    What a server refuses (an unknown parameter, a value it cannot parse, a value out of range) fails here as a
    :class:`~jsonbench.errors.ConfigError` naming the arm, the setting and the server's own message, rather than
    failing every start of that arm and dropping every pair. Holds the host lease while the engine runs (raises
    :class:`~jsonbench.host.lease.HostBusy` while another run's engine holds the host).
    """
    from jsonbench.engines.base import engine_for
    from jsonbench.host import lease as hostlease

    run = driver.run_of(planned)
    checked = []
    for arm, cell in check_cells(planned):
        engine = engine_for(cell)
        hostlease.acquire(run.run_id, cell.cell_id, engine.workdir)
        hostlease.stop_waiting(run.run_id, cell.cell_id)
        try:
            if engine.workdir.exists():  # a killed earlier check
                engine.teardown(engine.handle_for())
            try:
                handle = engine.provision()
            except BenchmarkError as exc:
                raise _refused(arm, exc) from exc
            try:
                with engine.session(handle):  # a backend that applies settings per session applies them here
                    pass
            except Exception as exc:
                raise _refused(arm, exc) from exc
            finally:
                engine.teardown(handle)
        finally:
            hostlease.release(run.run_id, cell.cell_id)
        log.info("arm %s: %s starts with its settings", arm.name, arm.label)
        checked.append(arm.name)
    return checked


def begin(planned: dict[str, Any]) -> list[dict[str, Any]]:
    """Before any pair: remove what a killed earlier attempt of this run left (its engine, its host lease: nothing of
    this run runs yet), check the arms' settings (:func:`check_settings`), and hand stage 1 its starts."""
    left = sweep(planned)
    if left:
        log.warning("removed the engines a killed earlier attempt of this run left: %s", ", ".join(left))
    check_settings(planned)
    return list(planned["stages"][0])


def _done(staging: Staging, cell_id: str) -> dict[str, Any] | None:
    path = staging.root / cell_id / DONE
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def claim(planned: dict[str, Any], hint: dict[str, Any], map_index: int) -> dict[str, Any]:
    """The start a task instance of stage ``hint["stage"]`` measures: its own earlier claim (a cleared or rescheduled
    instance), else the stage's first start nobody has claimed.

    The scheduler does not run a mapped task's instances in their index order, and the pool runs one at a time;
    so each instance takes the next start of the planned order when it runs, and the starts run in that order
    whichever instance runs first. A claim is the start's ``.attempt.json`` (made exclusively) in its first
    suite's cell folder.
    """
    run = driver.run_of(planned)
    root = Staging(run.results_dir, run.run_id).root
    suite = planned["comparison"]["suites"][0]
    starts = planned["stages"][int(hint["stage"])]
    paths_ = [root / start_cell_id(suite, int(s["pair"]), str(s["arm"])) / ATTEMPT for s in starts]
    for s, path in zip(starts, paths_, strict=True):
        try:
            if path.exists() and json.loads(path.read_text(encoding="utf-8")).get("map_index") == map_index:
                return dict(s)
        except ValueError:
            continue
    for s, path in zip(starts, paths_, strict=True):
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            continue
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({**s, "map_index": map_index, "started_at": datetime.now(UTC).isoformat()}, fh)
        return dict(s)
    return dict(hint)  # every start claimed (as many instances as starts: only by hand)


def cmp_workloads(planned: dict[str, Any]) -> dict[str, list[str]]:
    """Every workload the comparison measures, per suite (what stage 1 runs)."""
    return {str(s): list(w) for s, w in planned["comparison"]["workloads"].items()}


def run_start(planned: dict[str, Any], hint: dict[str, Any], map_index: int = -1) -> dict[str, Any]:
    """One start of one arm: each suite's cell provisioned, measured and torn down by the nightly driver.

    Which start is :func:`claim`'s (``hint``, the instance's own planned start, only when it cannot claim); which
    workloads, the hint's ``workloads`` (a later stage's: those with an undecided metric), else every one. A
    suite this start completed in an earlier attempt is kept; a partial one is measured again from a fresh engine
    (its staged files are forgotten first). Raises what the driver raises (``HostBusy`` while another run's engine
    holds the host: the DAG reschedules the task).
    """
    start = claim(planned, hint, map_index) if map_index >= 0 else dict(hint)
    workloads = hint.get("workloads") or cmp_workloads(planned)  # a later stage's: only the undecided ones
    run = driver.run_of(planned)
    staging = Staging(run.results_dir, run.run_id)
    cmp = planned["comparison"]
    pair, arm = int(start["pair"]), str(start["arm"])
    log.info("start %d of stage %d: pair %d, arm %s (order %s)", map_index, int(start["stage"]) + 1, pair, arm, "".join(start["order"]))
    done = []
    for suite in cmp["suites"]:
        cell_id = start_cell_id(suite, pair, arm)
        if _done(staging, cell_id) is not None:
            log.info("%s: completed by an earlier attempt; kept", cell_id)
            done.append(cell_id)
            continue
        cell = driver.cell_of(planned, cell_id)
        assert cell is not None, cell_id
        folder = staging.root / cell_id
        if not workloads.get(suite):  # every metric of the suite decided: no engine start for nothing
            write_json_atomic(folder / ATTEMPT, {**start, "map_index": map_index, "started_at": datetime.now(UTC).isoformat()})
            write_json_atomic(
                folder / DONE,
                {"pair": pair, "arm": arm, "suite": suite, "fingerprint": fingerprint(cell), "started_at": "", "measured": False},
            )
            done.append(cell_id)
            continue
        for stale in folder.iterdir() if folder.is_dir() else []:  # a partial earlier attempt: measured again
            if stale.name != ATTEMPT:
                shutil.rmtree(stale) if stale.is_dir() else stale.unlink()
        started = datetime.now(UTC).isoformat()
        write_json_atomic(folder / ATTEMPT, {**start, "map_index": map_index, "started_at": started})
        handle = driver.provision(planned, cell_id)
        try:
            for workload in workloads.get(suite, []):
                driver.run_workload(planned, cell_id, handle, workload)
        finally:
            driver.teardown(planned, cell_id, handle)
        loaded = {r.workload: r.fingerprints for r in staging.records(cell_id) if r.fingerprints}
        marker = {
            "pair": pair,
            "arm": arm,
            "suite": suite,
            "fingerprint": start_fingerprint(cell, staging),
            "loaded": loaded,
            "started_at": started,
        }
        write_json_atomic(folder / DONE, marker)
        done.append(cell_id)
    return {"pair": pair, "arm": arm, "cells": done}


def staged_starts(planned: dict[str, Any]) -> tuple[list[StartResult], dict[int, list[str]], dict[str, dict[str, Any]]]:
    """What the completed starts measured, the pairs of every stage that ran (pair -> order), and each arm's engine facts."""
    from jsonbench.dataset.measurement import CANARY_RECORDS, CELL_RECORD
    from jsonbench.dataset.staging import SETUP_RECORD

    run = driver.run_of(planned)
    staging = Staging(run.results_dir, run.run_id)
    cmp = planned["comparison"]
    ran: dict[int, list[str]] = {}
    for starts in planned["stages"]:
        attempted = any((staging.root / start_cell_id(s, x["pair"], x["arm"]) / ATTEMPT).exists() for x in starts for s in cmp["suites"])
        if not attempted:
            break
        for x in starts:
            ran[int(x["pair"])] = list(x["order"])
    results: list[StartResult] = []
    facts: dict[str, dict[str, Any]] = {"A": {"builds": set()}, "B": {"builds": set()}}
    for pair in ran:
        for arm in ("A", "B"):
            for suite in cmp["suites"]:
                cell_id = start_cell_id(suite, pair, arm)
                marker = _done(staging, cell_id)
                if marker is None:
                    continue
                ms = [
                    m
                    for r in staging.records(cell_id)
                    if r.workload not in CANARY_RECORDS
                    for m in r.measurements
                    if m.workload not in (SETUP_RECORD, CELL_RECORD)  # as the published rows' ``judged`` says
                ]
                engine = staging.read_engine(cell_id) or {}
                f = facts[arm]
                f["builds"].add(str(engine.get("build") or engine.get("version") or ""))
                f.setdefault("settings", engine.get("settings"))
                f.setdefault("host", engine.get("host"))
                results.append(
                    StartResult(
                        pair, arm, suite, tuple(ms), str(marker["fingerprint"]), str(marker["started_at"]), str(engine.get("build") or "")
                    )
                )
    for f in facts.values():
        f["builds"] = ", ".join(sorted(b for b in f["builds"] if b)) or None
    return results, ran, facts


def start_index(planned: dict[str, Any]) -> list[dict[str, Any]]:
    """Per cell of every start of the stages that ran: its arm, pair, stage, place in its pair and in the planned
    order, whether it completed and its data's fingerprint (what the ``comparison_starts`` rows carry)."""
    run = driver.run_of(planned)
    staging = Staging(run.results_dir, run.run_id)
    out = []
    sequence = 0
    for starts in planned["stages"]:
        for x in starts:
            for suite in planned["comparison"]["suites"]:
                cell_id = start_cell_id(suite, int(x["pair"]), str(x["arm"]))
                if (staging.root / cell_id).is_dir():
                    marker = _done(staging, cell_id)
                    out.append(
                        {
                            "cell_id": cell_id,
                            "arm": x["arm"],
                            "pair": int(x["pair"]),
                            "stage": int(x["stage"]),
                            "order_position": list(x["order"]).index(x["arm"]),
                            "sequence": sequence,
                            "completed": marker is not None,
                            "fingerprint": None if marker is None else marker.get("fingerprint"),
                        }
                    )
            sequence += 1
    return out


def _stages(planned: dict[str, Any]) -> list[Stage]:
    return [Stage(int(s["pairs"]), float(s["alpha"]), float(s["level"])) for s in planned["comparison"]["stages"]]


def judged(planned: dict[str, Any]) -> tuple[list[Judged], Pairs, dict[int, list[str]], dict[str, dict[str, Any]]]:
    """Every metric's verdict over the starts staged so far."""
    starts, ran, facts = staged_starts(planned)
    cmp = planned["comparison"]
    out, pairs = judge(starts, ran, cmp["suites"], _stages(planned), planned.get("margins") or {}, float(cmp["margin"]))
    return out, pairs, ran, facts


def decide(planned: dict[str, Any], stage: int) -> list[dict[str, Any]]:
    """After stage ``stage`` (0-based): the next stage's starts while a metric is undecided, else none (it is skipped).

    Each start carries ``workloads`` (suite -> workloads): only those with an undecided metric run again; a decided
    metric keeps the verdict of its look, so measuring it again would cost time and change nothing.
    """
    stages = planned["stages"]
    if stage >= len(stages):
        return []  # the DAG holds more stages than this comparison planned
    result, pairs, ran, _ = judged(planned)
    if max(ran, default=-1) + 1 < planned["comparison"]["stages"][stage]["pairs"]:
        log.info("stage %d did not run: nothing to decide", stage + 1)
        return []
    left = undecided(result)
    for pair, why in sorted(pairs.dropped.items()):
        log.warning("pair %d dropped: %s", pair, why)
    log.info("after %d pairs (%d usable): %d of %d metrics undecided", len(ran), len(pairs.usable), len(left), len(result))
    if stage + 1 >= len(stages) or not left:
        return []
    cmp = planned["comparison"]
    workloads = {s: [w for w in cmp["workloads"][s] if any(j.suite == s and j.workload == w for j in left)] for s in cmp["suites"]}
    log.info(
        "undecided: %s; stage %d runs %d more pairs of %s",
        ", ".join(j.name for j in left[:20]),
        stage + 2,
        len(stages[stage + 1]) // 2,
        "; ".join(f"{s}: {', '.join(w) or 'none'}" for s, w in workloads.items()),
    )
    return [{**x, "workloads": workloads} for x in stages[stage + 1]]


def publish(planned: dict[str, Any]) -> dict[str, Any]:
    """Judge every staged start, publish the ``comparison_starts`` rows, the ``comparisons`` rows and the page; return
    the verdicts (JSON)."""
    from jsonbench.compare.page import write_page
    from jsonbench.compare.publish import publish_comparison, publish_starts, rows, start_rows

    run = driver.run_of(planned)
    cmp = planned["comparison"]
    result, pairs, ran, facts = judged(planned)
    source = {name: f"{cmp['margin_source']}" for name in planned.get("margins") or {}}
    a, b = Arm.from_json(cmp["a"]), Arm.from_json(cmp["b"])
    table_rows = rows(
        run,
        a,
        b,
        result,
        pairs,
        facts=facts,
        seed=int(cmp["seed"]),
        stages=[int(s["pairs"]) for s in cmp["stages"]],
        pairs_planned=len(ran),
        margin_source=source or {j.name: ("run" if cmp["margin_source"] == "run" else "default") for j in result},
    )
    if not table_rows:
        raise RuntimeError(f"comparison {run.run_id}: no metric could be compared ({len(pairs.usable)} usable pairs of {len(ran)})")
    starts = start_rows(Staging(run.results_dir, run.run_id), run.run_id, start_index(planned))
    starts_path = publish_starts(run.results_dir, run, starts)  # first: the verdicts' data is published before them
    target = publish_comparison(run.results_dir, run, table_rows)
    page = write_page(run.results_dir, run.run_id, a, b, table_rows)
    text = table(result)
    log.info("comparison %s: %s\n%s", run.run_id, page, text)
    counts: dict[str, int] = {}
    for r in table_rows:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    return {
        "path": str(target),
        "starts_path": str(starts_path),
        "start_rows": len(starts),
        "page": str(page),
        "rows": len(table_rows),
        "pairs_planned": len(ran),
        "pairs_used": len(pairs.usable),
        "dropped": {str(k): v for k, v in pairs.dropped.items()},
        "verdicts": counts,
        "table": text,
    }


def check(planned: dict[str, Any]) -> dict[str, Any]:
    """The Great Expectations check of the published rows (raises ``ComparisonFailed`` on a regression)."""
    from jsonbench.compare.publish import COMPARISONS, check_comparison
    from jsonbench.dataset.publish import partition_dir
    from jsonbench.dataset.read import FILE_NAME

    run = driver.run_of(planned)
    import pyarrow.parquet as pq

    path = Path(partition_dir(run.results_dir, COMPARISONS, run.hardware_label, run.logical_date, run.run_id)) / FILE_NAME
    return check_comparison(run.results_dir, run, pq.read_table(path).to_pylist())


def sweep(planned: dict[str, Any]) -> list[str]:
    """Remove any engine a killed start or settings check left behind and give the host lease back (the nightly sweep)."""
    from jsonbench.engines.base import engine_for

    swept = []
    for _, cell in check_cells(planned):
        engine = engine_for(cell)
        if engine.workdir.exists():
            engine.teardown(engine.handle_for())
            swept.append(cell.cell_id)
    return swept + driver.sweep(planned)
