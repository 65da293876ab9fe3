"""Running the real benchmark DAG with `airflow dags test` from a test, and reading a run back.

Shared by the DAG tests (tests/dags) so that a module can run the DAG once in a module-scoped fixture (the
``dags_test`` fixture of tests/conftest.py is per test), read the task states from Airflow's metadata database,
and plant a wrong fact in a run's published rows.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jsonbench.dataset.publish import MEASUREMENTS

DAG_ID = "jsonb_benchmark_matrix"


def airflow_bin() -> str:
    return str(Path(sys.executable).parent / "airflow")


def run_dag(
    airflow_env: dict[str, str], conf: dict[str, Any], extra_env: dict[str, str] | None = None, timeout: int = 900
) -> dict[str, Any]:
    """``airflow dags test`` of the benchmark DAG with ``conf``; the run id, its state, the exit code and the log.

    A run that names its engines gets a DAG of their task groups only (``JSONBENCH_HOST_ENGINES``), as
    ``dags_test`` does: no groups of other engines to skip.
    """
    from tests.conftest import _FINISHED

    env = {**airflow_env, **(extra_env or {})}
    if conf.get("engines") and "JSONBENCH_HOST_ENGINES" not in (extra_env or {}):
        env["JSONBENCH_HOST_ENGINES"] = ",".join(conf["engines"])
    res = subprocess.run(
        [airflow_bin(), "dags", "test", DAG_ID, "-c", json.dumps(conf)], env=env, capture_output=True, text=True, timeout=timeout
    )
    log = res.stdout + res.stderr
    m = _FINISHED.search(log)
    return {"returncode": res.returncode, "log": log, "run_id": m.group(2) if m else None, "state": m.group(3) if m else None}


def task_states(airflow_env: dict[str, str], run_id: str) -> dict[str, str]:
    """Every task instance's state of one run, from Airflow's own metadata database."""
    res = subprocess.run(
        [airflow_bin(), "tasks", "states-for-dag-run", DAG_ID, run_id, "-o", "json"],
        env=airflow_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    start = res.stdout.index("[")
    return {r["task_id"]: r["state"] for r in json.loads(res.stdout[start:])}


def plant(results: Path, run_id: str, pick: Callable[[Any], Any], change: Callable[[float], float]) -> int:
    """Rewrite the run's published measurements with ``change`` applied to the rows ``pick(df)`` selects; return how many."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from jsonbench.dataset.publish import replace_run

    for path in sorted((results / MEASUREMENTS).rglob("part-0.parquet")):
        table = pq.read_table(path)
        df = table.to_pandas()
        if not (df.run_id == run_id).any():
            continue
        rows = (df.run_id == run_id) & pick(df)
        if not rows.any():
            continue
        df.loc[rows, "value"] = df.loc[rows, "value"].map(change)
        df.loc[rows, "samples"] = df.loc[rows, "samples"].map(lambda s: None if s is None else [change(x) for x in s])
        replace_run(path.parent, pa.Table.from_pandas(df, schema=table.schema, preserve_index=False))
        return int(rows.sum())
    raise AssertionError(f"no published file holds a row of run {run_id} that the pick selects")


def rows_of(engine: str | None, workload: str, metric: str, variant: str | None = None) -> Callable[[Any], Any]:
    """A ``pick`` for :func:`plant`: one engine's rows of a workload's metric (``engine=None``: the first engine that has them)."""

    def pick(df: Any) -> Any:
        rows = (df.workload == workload) & (df.metric == metric)
        if engine is None:
            rows &= df.engine_id == df[rows].engine_id.min()
        else:
            rows &= df.engine_id == engine
        return rows & (df.variant == variant) if variant is not None else rows

    return pick
