"""Synthetic runs of the large_document_update suite for the checks and report tests.

The values are those of a real smoke run (500 rows, PostgreSQL 16/17/18 on a 2-core machine);
each synthetic run stages them through :class:`jsonbench.dataset.staging.Staging` and publishes
them with :func:`jsonbench.dataset.publish.publish_run`, exactly as the DAG's tasks do, with a
little seeded noise on the timings and WAL so honest reruns differ the way real ones do.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from typing import Any

from jsonbench.cell import Cell, RunRef
from jsonbench.dataset.measurement import Measurement
from jsonbench.dataset.publish import publish_run
from jsonbench.dataset.staging import SETUP_RECORD, Staging, WorkloadRecord
from jsonbench.suites.large_document_update import METRICS

SMOKE: dict[str, dict[str, float]] = {
    "rel_small": {
        "update_time": 1.3,
        "update_wall_time": 3.9,
        "wal_bytes": 136_000,
        "n_tup_hot_upd": 119,
        "heap_bytes_before": 114_688,
        "heap_bytes_after": 139_264,
        "toast_bytes_before": 8192,
        "toast_bytes_after": 8192,
        "avg_payload_bytes": 105,
        "load_time": 6.0,
    },
    "json_small": {
        "update_time": 1.2,
        "update_wall_time": 2.8,
        "wal_bytes": 155_500,
        "n_tup_hot_upd": 117,
        "heap_bytes_before": 122_880,
        "heap_bytes_after": 155_648,
        "toast_bytes_before": 8192,
        "toast_bytes_after": 8192,
        "avg_payload_bytes": 125,
        "load_time": 5.0,
    },
    "rel_big": {
        "update_time": 0.9,
        "update_wall_time": 2.3,
        "wal_bytes": 109_000,
        "n_tup_hot_upd": 123,
        "heap_bytes_before": 49_152,
        "heap_bytes_after": 57_344,
        "toast_bytes_before": 6_266_880,
        "toast_bytes_after": 6_266_880,
        "avg_payload_bytes": 11_108,
        "load_time": 300.0,
    },
    "json_big": {
        "update_time": 90.0,
        "update_wall_time": 95.0,
        "wal_bytes": 6_056_000,
        "n_tup_hot_upd": 123,
        "heap_bytes_before": 49_152,
        "heap_bytes_after": 57_344,
        "toast_bytes_before": 6_266_880,
        "toast_bytes_after": 9_371_648,
        "avg_payload_bytes": 11_128,
        "load_time": 300.0,
    },
    "json_big_idx": {
        "update_time": 88.0,
        "update_wall_time": 92.0,
        "wal_bytes": 6_082_000,
        "n_tup_hot_upd": 0,
        "heap_bytes_before": 49_152,
        "heap_bytes_after": 57_344,
        "toast_bytes_before": 6_266_880,
        "toast_bytes_after": 9_371_648,
        "avg_payload_bytes": 11_128,
        "load_time": 330.0,
    },
}
NOISY = {"update_time": 0.08, "update_wall_time": 0.1, "load_time": 0.1, "wal_bytes": 0.01}

Tamper = Callable[[str, str, list[Measurement]], list[Measurement]]


#: The deterministic counts of seed 004 at 5,000 rows (laptop and full): the seed's own HOT counts.
LAPTOP_HOT = {"rel_small": 1122, "json_small": 1110, "rel_big": 1096, "json_big": 1096, "json_big_idx": 0}


def measurements(workload: str, rng: random.Random, reps: int = 2, scale: str = "smoke") -> list[Measurement]:
    """Every metric of one workload, ``reps`` samples each, with seeded noise on the noisy ones.

    At ``smoke`` (500 rows) the counts of a real smoke run; at ``laptop`` (5,000 rows) the seed's,
    with the TOAST growth of ten times as many updated documents.
    """
    base = dict(SMOKE[workload])
    updated = 250
    if scale != "smoke":
        updated = 2500
        base["n_tup_hot_upd"] = LAPTOP_HOT[workload]
        base["toast_bytes_after"] = base["toast_bytes_before"] + 10 * (base["toast_bytes_after"] - base["toast_bytes_before"])
    base.update(
        n_tup_upd=updated,
        n_dead_tup=updated,
        rows_updated=updated,
        index_bytes_before=32_768,
        index_bytes_after=57_344 if workload == "json_big_idx" else 40_960,
    )
    base["toast_growth"] = base["toast_bytes_after"] - base["toast_bytes_before"]
    base["hot_share"] = base["n_tup_hot_upd"] / updated
    out = []
    for metric, (unit, kind) in METRICS.items():
        noise = NOISY.get(metric, 0.0)
        samples = [base[metric] * (1 + rng.uniform(-noise, noise)) for _ in range(reps)]
        out.append(Measurement.of(workload, "default", metric, unit, samples, kind=kind))
    return out


#: One measure window in which the rest of the machine used 90 % of the CPU (a planted busy night).
BUSY_WINDOW = {"seconds": 0.05, "other_cpu": 0.9, "steal": 0.0, "load_1m": 3.0, "quiet": False}


def _stage(
    cells: list[Cell],
    staging: Staging,
    rng: random.Random,
    tamper: Tamper | None,
    workloads: set[str] | None = None,
    busy: bool = False,
    canary: dict[str, float] | None = None,
) -> None:
    """Stage each cell's engine facts, setup record and workloads (all, or ``workloads``) as the DAG's tasks do.

    ``busy`` gives every workload one window marked busy, so every row it publishes is ``quiet = false``.
    ``canary`` stages the host's canary before each cell, every component's milliseconds times the cell's
    engine's factor (1.0 when not named): a host that ran that much slower beside that cell.
    """
    for cell in cells:
        if canary is not None:
            f = canary.get(cell.engine_id, 1.0)
            comps = {"cpu_single": 50.0, "cpu_all": 55.0, "memory": 14.0, "fsync": 8.0}
            ms_c = [
                Measurement.of(
                    "canary", f"before.{cell.suite}", c, "ms", [v * f * (1 + rng.uniform(-0.01, 0.01)) for _ in range(5)], kind="timed"
                )
                for c, v in comps.items()
            ]
            staging.write_workload(
                WorkloadRecord(cell, "_canary_before", ms_c, {"canary": 0.9}, "2026-11-29T02:00:00+00:00", "2026-11-29T02:00:00+00:00")
            )
        version = {"16": "16.14", "17": "17.10", "18": "18.4"}.get(cell.version, cell.version)
        staging.write_engine(
            cell.cell_id,
            {
                "version": version,
                "build": f"synthetic-{cell.engine_id}",
                "configure": "--synthetic",
                "data_checksums": True,
                "settings": {"shared_buffers": "128MB"},
            },
        )
        staging.write_workload(
            WorkloadRecord(cell, SETUP_RECORD, [], {"load": 0.1}, "2026-11-29T02:00:00+00:00", "2026-11-29T02:00:01+00:00")
        )
        for workload in SMOKE:
            ms = measurements(workload, rng, scale=cell.scale)
            if workloads is not None and workload not in workloads:
                continue
            if tamper:
                ms = tamper(cell.engine_id, workload, ms)
            staging.write_workload(
                WorkloadRecord(
                    cell,
                    workload,
                    ms,
                    {"measure": 0.1},
                    "2026-11-29T02:00:01+00:00",
                    "2026-11-29T02:00:02+00:00",
                    [dict(BUSY_WINDOW)] if busy else [],
                )
            )


def stage_and_publish(
    cells: list[Cell], seed: int = 0, tamper: Tamper | None = None, busy: bool = False, canary: dict[str, float] | None = None
) -> RunRef:
    """Stage one synthetic run for ``cells`` (all of one run) and publish it; return the run as the checks take it."""
    rng = random.Random(seed)
    run = cells[0].run
    staging = Staging(run.results_dir, run.run_id)
    staging.reset()
    _stage(cells, staging, rng, tamper, busy=busy, canary=canary)
    publish_run(run.results_dir, run)
    return run


def confirm_run_cells(cells: list[Cell], workloads: set[str], seed: int = 100, tamper: Tamper | None = None) -> None:
    """Stage and publish a confirmation of ``workloads`` of ``cells`` (the DAG's ``reconfirm`` tasks and ``confirm_check``)."""
    from jsonbench.dataset.publish import publish_confirmations

    run = cells[0].run
    confirming = [dataclasses.replace(c, run=run.confirmation()) for c in cells]
    staging = Staging(run.results_dir, run.confirmation().run_id)
    staging.reset()
    _stage(confirming, staging, random.Random(seed), tamper, workloads)
    publish_confirmations(run.results_dir, run)


def replace_metric(engine_id: str | None, workload: str, metric: str, fn: Callable[[float], float]) -> Tamper:
    """A tamper that maps every sample of one metric (on one engine, or on all when None)."""

    def tamper(eid: str, w: str, ms: list[Measurement]) -> list[Measurement]:
        if w != workload or (engine_id is not None and eid != engine_id):
            return ms
        return [
            Measurement.of(m.workload, m.variant, m.metric, m.unit, [fn(s) for s in m.samples], kind=m.kind) if m.metric == metric else m
            for m in ms
        ]

    return tamper


def drop_metric(workload: str, metric: str) -> Tamper:
    def tamper(eid: str, w: str, ms: list[Measurement]) -> list[Measurement]:
        return [m for m in ms if not (w == workload and m.metric == metric)]

    return tamper


def make_run(
    make_cells: Callable[..., list[Cell]],
    n: int,
    engines: list[str] | None = None,
    seed: int | None = None,
    tamper: Tamper | None = None,
    hardware_label: str | None = None,
    busy: bool = False,
    canary: dict[str, float] | None = None,
) -> RunRef:
    """Plan and publish synthetic run number ``n`` (logical date 2026-11-<n+1> 02:00); ``canary``: see :func:`_stage`."""
    params: dict[str, Any] = {}
    if hardware_label:
        params["hardware_label"] = hardware_label
    cells = make_cells(
        "large_document_update",
        engines=engines or ["postgres-16", "postgres-17"],
        run_id=f"scheduled__2026-11-{n + 1:02d}T02:00:00+00:00",
        **params,
    )
    logical = f"2026-11-{n + 1:02d}T02:00:00+00:00"
    cells = [dataclasses.replace(c, run=dataclasses.replace(c.run, logical_date=logical)) for c in cells]
    return stage_and_publish(cells, seed=n if seed is None else seed, tamper=tamper, busy=busy, canary=canary)


def run_cells(
    make_cells: Callable[..., list[Cell]], n: int, engines: list[str] | None = None, hardware_label: str | None = None
) -> list[Cell]:
    """The cells :func:`make_run` plans for run number ``n`` (to stage its confirmation)."""
    cells = make_cells(
        "large_document_update",
        engines=engines or ["postgres-16", "postgres-17"],
        run_id=f"scheduled__2026-11-{n + 1:02d}T02:00:00+00:00",
        **({"hardware_label": hardware_label} if hardware_label else {}),
    )
    logical = f"2026-11-{n + 1:02d}T02:00:00+00:00"
    return [dataclasses.replace(c, run=dataclasses.replace(c.run, logical_date=logical)) for c in cells]
