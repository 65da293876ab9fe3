"""A new attempt of the same run keeps the cells an earlier attempt completed and measures the rest again.

Real servers (PostgreSQL 16 and 17, smoke scale): the first attempt completes one cell and dies in
the middle of the second; the plan of the second attempt keeps the first cell's staged results
(its provision skips it, nothing is measured twice) and forgets the half-done one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jsonbench.cell import Cell
from jsonbench.dataset.publish import publish_run, read_dataset
from jsonbench.dataset.staging import Staging
from jsonbench.orchestration import tasks
from jsonbench.suites import get_suite

SUITE = "large_document_update"


@pytest.mark.parametrize("again_as", ["same_airflow_run", "resume_of"])
def test_resumed_run_keeps_completed_cells_and_reruns_the_rest(results_dir: Path, leak_check, again_as: str) -> None:
    """The second attempt is the same Airflow run (a scheduler's cleared tasks) or, as the command line's
    ``--resume`` makes it, a new Airflow run naming the first in ``resume_of`` (``airflow dags test`` names a
    run after the moment it starts, so the id cannot be reused); either way it is the same run of the dataset."""
    params = {
        "scale": "smoke",
        "engines": ["postgres-16", "postgres-17"],
        "suites": [SUITE],
        "results_dir": str(results_dir),
        "repetitions": 1,
    }
    planned = tasks.plan(params, "resume_run", "2026-11-29T02:00:00+00:00")
    first, second = (Cell.from_json(c) for c in planned["cells"])
    assert planned["resumed"] == [] and set(planned["costs"]["cells"]) == {first.cell_id, second.cell_id}

    handle = tasks.provision(planned, first.cell_id)
    try:
        for w in get_suite(SUITE).workloads:
            tasks.run_workload(planned, first.cell_id, handle, w)
    finally:
        tasks.teardown(planned, first.cell_id, handle)
    handle = tasks.provision(planned, second.cell_id)
    try:
        tasks.run_workload(planned, second.cell_id, handle, "rel_small")  # ... and then the run died
    finally:
        tasks.teardown(planned, second.cell_id, handle)
    staging = Staging(results_dir, "resume_run")
    kept = {r.workload: r.ended_at for r in staging.records(first.cell_id)}

    if again_as == "resume_of":
        again = tasks.plan({**params, "resume_of": "resume_run"}, "manual__2026-12-01T10:00:00+00:00", "2026-11-29T02:00:00+00:00")
        assert Staging(results_dir, "resume_run").read_params() == params  # resume_of is how, not what, and is not stored
    else:
        again = tasks.plan(params, "resume_run", "2026-11-29T02:00:00+00:00")
    assert again["run"]["run_id"] == "resume_run"
    assert again["resumed"] == [first.cell_id]
    assert list(again["costs"]["cells"]) == [second.cell_id]  # only what is left is planned and costed
    with pytest.raises(tasks.CellSkipped, match="completed by an earlier attempt"):
        tasks.provision(again, first.cell_id)
    assert {r.workload: r.ended_at for r in staging.records(first.cell_id)} == kept  # untouched
    assert list(staging.records(second.cell_id)) == []  # the half-done cell starts over
    handle = tasks.provision(again, second.cell_id)
    try:
        for w in get_suite(SUITE).workloads:
            tasks.run_workload(again, second.cell_id, handle, w)
    finally:
        tasks.teardown(again, second.cell_id, handle)

    publish_run(results_dir, tasks.run_of(again))
    df = read_dataset(results_dir).to_pandas()
    rows = df[(df.workload != "_cell") & (df.suite != "host")]  # the canary: before each cell, and after the last
    assert set(rows.engine_id) == {"postgres-16", "postgres-17"}
    assert set(rows.run_id) == {"resume_run"}  # one run of the dataset, whichever Airflow run finished it
    assert not rows.duplicated(["engine_id", "workload", "variant", "metric"]).any()
    assert len(rows[rows.engine_id == "postgres-16"]) == len(rows[rows.engine_id == "postgres-17"])
    assert leak_check() == []
