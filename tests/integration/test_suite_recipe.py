"""The recipe for adding a suite (``jsonbench.suites.base``), followed to the letter from a temporary folder.

A tiny suite is added exactly as the contract's docstring says, and nowhere else: one module on the
path (outside the repository), one SQL folder, its expectation files and one block in a copy of
``include/matrix.yaml`` (with its parameters under every scale profile), the copy of ``include/``
named by ``JSONBENCH_INCLUDE_DIR`` / ``JSONBENCH_MATRIX``. The suite is then planned, parsed into
the DAG (its task group and workload task appear), and run through ``tasks.plan / provision /
run_workload / teardown / publish / check`` on a real embedded PostgreSQL 17. No Python file of the
project is touched: the test snapshots them (and the build pins) before and compares after.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.recipes import child_env, include_copy, parsed_dag, project_files, read_matrix, write_matrix

SUITE = "tiny"

MODULE = '''
"""Suite "tiny": counts the rows of a table it loads, and times the count. Proves the recipe."""

from __future__ import annotations

from typing import Any, ClassVar

from jsonbench.cell import Cell
from jsonbench.suites.base import LOAD, MEASURE, CellCost, Suite, WorkloadContext

NAME = "tiny"


class Tiny(Suite[Any]):
    name: ClassVar[str] = NAME
    workloads: ClassVar[tuple[str, ...]] = ("count",)
    headline: ClassVar[tuple[str, ...]] = ("rows",)

    def load(self, ctx: WorkloadContext[Any]) -> None:
        ctx.timed(lambda: ctx.session.run_file(NAME, "load", {"rows": int(ctx.scale_params["rows"])}), LOAD)

    def run(self, workload: str, ctx: WorkloadContext[Any]) -> None:
        (rows,), _ = ctx.measure(lambda: ctx.session.query_file(NAME, "count")[0], retry_disturbed=True)
        ctx.record("rows", "rows", float(rows))
        ctx.record("count_time", "ms", [ctx.timed(lambda: ctx.session.query_file(NAME, "count"), MEASURE) for _ in range(ctx.repetitions)])

    def expected_metrics(self) -> list[tuple[str, str]]:
        return [("count", "rows"), ("count", "count_time")]

    def metric_kinds(self) -> dict[str, dict[str, Any]]:
        return {"count": {"rows": "deterministic", "count_time": "timed"}}

    def estimate(self, cell: Cell) -> CellCost:
        return CellCost(load_bytes=100 * int(cell.scale_params["rows"]), disk_peak_bytes=64 << 20,
                        memory_peak_bytes=256 << 20, duration_s=10.0, source="tiny estimate")
'''

SQL = {
    "load.sql": "DROP TABLE IF EXISTS tiny_rows;\nCREATE TABLE tiny_rows AS SELECT g AS id FROM generate_series(1, %(rows)s) AS g;\n",
    "count.sql": "SELECT count(*) FROM tiny_rows\n",
}

REPRODUCTION = {
    "name": "tiny.reproduction",
    "suite": SUITE,
    "seed": "tiny.txt",
    "description": "The tiny suite's one finding: it counts the rows it loaded.",
    "findings": [
        {
            "id": "tiny_counts_what_it_loaded",
            "description": "rows counted over rows counted: exactly 1",
            "numerator": [{"workload": "count", "metric": "rows"}],
            "denominator": [{"workload": "count", "metric": "rows"}],
            "unit": "x",
            "seed": {"value": 1.0, "figure": "a count is a count"},
            "kind": "deterministic",
            "depends_on": [],
            "bands": {
                scale: {
                    "min": 0.999,
                    "max": 1.001,
                    "reason": "a count divided by itself is exactly 1 at every scale",
                    "derived_from": [],
                    "not_derived": "a fact of arithmetic, not of a run",
                }
                for scale in ("smoke", "laptop", "full")
            },
        }
    ],
}
SEED = {
    "suite": SUITE,
    "seed": "tiny.txt",
    "title": "tiny",
    "engine": "any",
    "scale": {"rows": 10},
    "notes": "",
    "figures": [{"workload": "count", "metric": "rows", "value": 10, "unit": "rows"}],
}


@pytest.fixture
def recipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """The tiny suite added by the recipe: module, SQL folder, expectation files, one matrix block."""
    include = include_copy(tmp_path, monkeypatch)
    modules = tmp_path / "modules"
    modules.mkdir()
    (modules / "tinysuite.py").write_text(textwrap.dedent(MODULE))  # 1. a module
    (include / "sql" / SUITE).mkdir()
    for name, text in SQL.items():  # 2. its SQL folder
        (include / "sql" / SUITE / name).write_text(text)
    (include / "expectations" / f"{SUITE}.reproduction.json").write_text(json.dumps(REPRODUCTION, indent=2))  # 3. its expectations
    (include / "expectations" / f"{SUITE}.seed.json").write_text(json.dumps(SEED, indent=2))
    matrix = read_matrix(include)  # 4. one block, and its parameters per scale
    matrix["suites"][SUITE] = {"module": "tinysuite:Tiny", "family": "postgres", "seed": "tiny.txt"}
    for scale in matrix["scales"].values():
        scale[SUITE] = {"rows": 10}
    write_matrix(include, matrix)
    monkeypatch.syspath_prepend(str(modules))
    return {"include": include, "modules": modules}


def test_a_suite_added_by_the_recipe_is_planned_parsed_and_run(
    recipe: dict[str, Path], results_dir: Path, airflow_env: dict[str, str], leak_check: Any
) -> None:
    from jsonbench.dataset.read import read_dataset
    from jsonbench.orchestration import tasks
    from jsonbench.suites import get_suite

    before = project_files()
    suite = get_suite(SUITE)
    assert Path(sys.modules[type(suite).__module__].__file__ or "").parent == recipe["modules"]  # the module lives outside the project

    # Planned: one cell, costed by the suite's own estimate.
    planned = tasks.plan(
        {"suites": [SUITE], "engines": ["postgres-17"], "scale": "smoke", "results_dir": str(results_dir)},
        "recipe_run",
        "2026-11-29T02:00:00+00:00",
    )
    (cell,) = planned["cells"]
    assert cell["cell_id"] == "tiny__postgres-17"
    assert planned["costs"]["cells"]["tiny__postgres-17"]["source"] == "tiny estimate"

    # Parsed into the DAG: its task group with its workload task, chained like every other cell.
    parsed = parsed_dag(child_env(airflow_env, recipe["include"], modules=recipe["modules"]))
    assert "tiny__postgres-17" in parsed["groups"]
    assert {"tiny__postgres-17.provision", "tiny__postgres-17.count", "tiny__postgres-17.teardown"} <= set(parsed["tasks"])
    # after every earlier cell's teardown (one engine at a time)
    after = parsed["after"]["tiny__postgres-17.provision"]
    assert "plan" in after and any(t.endswith(".teardown") for t in after), after

    # Run through the driver on a real engine, published and checked.
    handle = tasks.provision(planned, cell["cell_id"])
    try:
        tasks.run_workload(planned, cell["cell_id"], handle, "count")
    finally:
        tasks.teardown(planned, cell["cell_id"], handle)
    assert leak_check() == []
    assert tasks.publish(planned)["rows"] > 0
    rows = read_dataset(str(results_dir), table="measurements").to_pandas()
    mine = rows[(rows["suite"] == SUITE) & (rows["metric"] == "rows")]
    assert list(mine["value"]) == [10.0]
    # Checked for real; the verdict on timings depends on how busy the machine is, so the test reads the
    # stored validation rows instead: the tiny suite's sanity and its deterministic fact must pass.
    from jsonbench.checks.examine import ChecksFailed
    from jsonbench.checks.outcome import check_outcome

    try:
        tasks.check(planned)
    except ChecksFailed:
        pass
    out = check_outcome(results_dir, planned["run"]["run_id"])
    assert out["sanity_ok"] and out["facts_ok"], out["failed"]
    assert out["by_tag"]["deterministic"]["passed"] > 0, "the suite's fact (10 rows) was judged"

    assert project_files() == before, "adding a suite by the recipe must not change any Python file of the project"
