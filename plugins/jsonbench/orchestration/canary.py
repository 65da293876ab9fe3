"""The host's canary timed beside a cell, with no engine running, and staged as the cell's own record.

The canary (:mod:`jsonbench.host.canary`) describes the host, not the engine: the drift check reads it
as the host's move. It runs under the host lease, before a cell's engine starts and after the last
cell's engine is gone, and a canary that fails never costs a measurement.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from jsonbench.cell import Cell
from jsonbench.dataset.measurement import CANARY_WORKLOAD, Measurement
from jsonbench.dataset.staging import Staging, WorkloadRecord
from jsonbench.host.load import WindowSampler

log = logging.getLogger(__name__)


def _now() -> str:
    return datetime.now(UTC).isoformat()


def run_canary(cell: Cell, folder: Any, position: str) -> None:
    """Time the host's canary (:mod:`jsonbench.host.canary`) with no engine running, and stage it beside ``cell``.

    ``position`` is ``before`` (the cell's provision, under the host lease, before its engine starts)
    or ``after`` (the last cell's teardown, once its engine is gone). A canary that fails is logged
    and left out: it describes the host and must never cost a measurement.
    """
    from jsonbench.host import canary

    started = _now()
    try:
        got = canary.run(folder, lambda: WindowSampler(lambda: [], cell.quiet.max_other_cpu, cell.quiet.max_steal))
    except Exception as exc:  # the host's figure, never a reason to lose the cell
        log.warning("%s: canary %s not measured: %s", cell.cell_id, position, exc)
        return
    variant = f"{position}.{cell.suite}"
    extra = {"cell": cell.cell_id, "position": position, "cores": got.cores, "samples_per_component": len(got.samples["cpu_single"])}
    ms = [
        Measurement.of(CANARY_WORKLOAD, variant, name, "ms", vals, kind="timed", extra={**extra, "cpu_ms": got.cpu.get(name)})
        for name, vals in got.samples.items()
    ]
    ms.append(Measurement.of(CANARY_WORKLOAD, variant, "total", "s", got.seconds, kind="timed", extra=extra))
    record = f"_canary_{position}"
    Staging(cell.run.results_dir, cell.run.run_id).write_workload(
        WorkloadRecord(cell, record, ms, {"canary": got.seconds}, started, _now(), got.windows, {"seconds": got.seconds})
    )
    log.info(
        "%s: canary %s in %.2f s: %s",
        cell.cell_id,
        position,
        got.seconds,
        ", ".join(f"{c} {got.median(c):.1f} ms" for c in got.samples),
    )
