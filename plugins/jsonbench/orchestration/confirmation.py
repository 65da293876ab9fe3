"""The confirmation of suspects: the tasks that measure a run's suspect cells again and judge them on it.

A timing finding out of its band or a statistical drift verdict is only ``suspect`` after the night's
check (:mod:`jsonbench.checks.verdicts`); these tasks list the suspect cells and workloads, measure
them again in the same DAG run through the night's own cell tasks (a fresh engine each, staged under
the run's confirmation id so nothing of the night's measurement is touched), and judge the suspects
on the new figures (:func:`jsonbench.checks.confirm.confirm_run`).
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from jsonbench.cell import cell_id_of
from jsonbench.dataset.staging import Staging
from jsonbench.orchestration.tasks import cells_of, provision, refresh_views, run_of, run_workload, sweep, teardown
from jsonbench.suites import get_suite

log = logging.getLogger(__name__)


def confirmation_plan(planned: dict[str, Any]) -> dict[str, Any]:
    """The plan under the run's confirmation id (:meth:`RunRef.confirmation`): the same cells, with their own
    staging, engine folders and host lease, so that nothing of the night's measurement is touched."""
    run = run_of(planned).confirmation()
    cells = [dataclasses.replace(c, run=run) for c in cells_of(planned)]
    return {**planned, "run": run.to_json(), "cells": [c.to_json() for c in cells], "resumed": []}


def suspects(planned: dict[str, Any]) -> list[dict[str, Any]]:
    """The cells to measure again and which of their workloads: ``[{"cell_id", "workloads"}]``, in the run's cell order.

    Read from the stored validation rows (verdict ``suspect``), so it works whether or not the check
    task raised. A suspect whose inputs were measured by the cell's setup (a load time) needs no
    workload: the provision measures it again. Forgets whatever an earlier attempt staged for the
    confirmation.
    """
    from jsonbench.checks.confirm import suspect_cells

    run = run_of(planned)
    Staging(run.results_dir, run.confirmation().run_id).reset()
    by_id = {c.cell_id: c for c in cells_of(planned)}
    out: list[tuple[int, dict[str, Any]]] = []
    for s in suspect_cells(run.results_dir, run.run_id):
        cell = by_id.get(cell_id_of(s["suite"], s["engine_id"]))
        if cell is None:
            log.warning("suspect on %s/%s, a cell this run did not plan: not measured again", s["suite"], s["engine_id"])
            continue
        workloads = [w for w in get_suite(cell.suite).workloads if w in s["workloads"]]
        out.append((cell.position, {"cell_id": cell.cell_id, "workloads": workloads}))
    todo = [s for _, s in sorted(out, key=lambda t: t[0])]
    log.info("suspects to measure again: %s", "; ".join(f"{s['cell_id']}: {', '.join(s['workloads'])}" for s in todo) or "none")
    return todo


def reconfirm(planned: dict[str, Any], suspect: dict[str, Any]) -> dict[str, Any]:
    """Measure one suspect cell again: a fresh engine, its suspect workloads only, teardown; staged apart.

    Raises :class:`~jsonbench.host.lease.HostBusy` while another run holds the host (the DAG reschedules).
    """
    cplan = confirmation_plan(planned)
    cell_id = suspect["cell_id"]
    handle = provision(cplan, cell_id)
    done = []
    try:
        for workload in suspect["workloads"]:
            run_workload(cplan, cell_id, handle, workload)
            done.append(workload)
    finally:
        teardown(cplan, cell_id, handle)
    return {"cell_id": cell_id, "workloads": done}


def confirm_check(planned: dict[str, Any]) -> dict[str, Any]:
    """Publish the confirmation measurements and judge the suspects on them (raises ``ChecksFailed`` when one is confirmed).

    Sweeps first: an engine a killed ``reconfirm`` left behind goes, and its host lease with it.
    """
    from jsonbench.checks.confirm import confirm_run
    from jsonbench.dataset.publish import publish_confirmations

    run = run_of(planned)
    sweep(confirmation_plan(planned))
    published = publish_confirmations(run.results_dir, run)
    if published:
        log.info("published %d confirmation rows of run %s to %s", published[1], run.run_id, published[0])
    try:
        return dict(confirm_run(run))
    finally:
        refresh_views(run.results_dir)
