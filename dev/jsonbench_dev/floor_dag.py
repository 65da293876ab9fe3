"""
### jsonbench_floor

Airflow's own floor under a run of the benchmark DAG: a maintainers' measurement, never a nightly DAG.

One task instance per number in the run's parameter `seconds`, each only sleeping that long, one at a time
through the `benchmark_host` pool, as the benchmark's tasks run. `jsonbench-dev scheduler-run --floor` triggers it
in its private Airflow right after the benchmark run, with the durations of that run's tasks: whatever its wall
time holds beyond its task sum is the scheduler's hand-off from one task to the next and nothing of the
benchmark's, so the benchmark DAG's own share of its ratio is the difference. `jsonbench-dev airflow-floor` runs it
under `airflow dags test`, as `jsonbench run` runs the benchmark: its tasks sleep 0 s, and the wall time is what
Airflow itself costs a run of that many tasks.

The tool copies this file into a private DAG folder; it is not in the project's `dags/`.
"""

from __future__ import annotations

import pendulum
from airflow.sdk import Param, dag, get_current_context, task

from jsonbench_dev.floor import DAG_ID

#: The benchmark DAG's pool (``dags/jsonb_benchmark_matrix.py``), one slot: the private Airflow's, as the benchmark's.
POOL = "benchmark_host"


@dag(
    dag_id=DAG_ID,
    doc_md=__doc__,
    schedule=None,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    tags=["jsonbench-tool"],
    params={"seconds": Param([], type="array", items={"type": "number", "minimum": 0})},
)
def floor() -> None:
    @task(retries=0)
    def durations() -> list[float]:
        return [float(s) for s in get_current_context()["params"]["seconds"]]

    @task(pool=POOL, retries=0)
    def hold(seconds: float) -> None:
        import time

        time.sleep(seconds)

    hold.expand(seconds=durations())


floor()
