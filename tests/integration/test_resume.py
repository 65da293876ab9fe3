"""What a new attempt of the same run keeps: only work that measured the same thing, and only a run staged here.

Real servers (PostgreSQL 16, smoke scale). The attempt that dies mid-cell and is resumed is
``tests/matrix/test_resume_killed.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jsonbench.cell import Cell
from jsonbench.dataset.staging import Staging
from jsonbench.orchestration import tasks
from jsonbench.suites import get_suite

SUITE = "large_document_update"


def test_a_different_plan_for_the_same_run_measures_everything_again(results_dir: Path) -> None:
    """Completed work is kept only when it measured the same thing (same scale, repetitions, settings)."""
    params = {"scale": "smoke", "engines": ["postgres-16"], "suites": [SUITE], "results_dir": str(results_dir), "repetitions": 1}
    planned = tasks.plan(params, "replan_run", None)
    cell = Cell.from_json(planned["cells"][0])
    handle = tasks.provision(planned, cell.cell_id)
    try:
        for w in get_suite(SUITE).workloads:
            tasks.run_workload(planned, cell.cell_id, handle, w)
    finally:
        tasks.teardown(planned, cell.cell_id, handle)
    assert tasks.plan(params, "replan_run", None)["resumed"] == [cell.cell_id]
    assert tasks.plan({**params, "repetitions": 2}, "replan_run", None)["resumed"] == []
    assert list(Staging(results_dir, "replan_run").records()) == []


@pytest.mark.parametrize("value", ["manual__2026-11-30T08:00:00+00:00", "no spaces allowed", 7])
def test_resume_of_must_name_a_staged_run(results_dir: Path, value: object) -> None:
    """A ``resume_of`` that is not a run id, or names nothing staged here, fails before any engine starts, naming the field."""
    from jsonbench.errors import ConfigError
    from jsonbench.orchestration.plan import resolve

    with pytest.raises(ConfigError) as err:
        resolve({"scale": "smoke", "suites": [SUITE], "results_dir": str(results_dir), "resume_of": value})
    assert err.value.field == "resume_of"
