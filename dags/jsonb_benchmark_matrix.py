"""
### jsonb_benchmark_matrix

Runs the JSON-storage benchmark matrix: every selected suite on every selected engine version.

* **plan** validates the parameters (a bad value fails here, naming the field, before any engine
  starts) and expands the matrix of `include/matrix.yaml` into cells, one per (suite, engine).
* Per cell, in a mapped task group named after the suite: **provision** (setup task: start a fresh
  engine, record its build and settings, load shared data), **one task per workload**, and
  **teardown** (teardown task: runs even when a workload fails). Every benchmark task takes the one
  slot of the `benchmark_host` pool, so workloads never run side by side on one host.
* **sweep** removes any engine a killed task left behind, **publish** adds the run to the Parquet
  dataset in one atomic step (replacing an earlier attempt of the same run only), and **check**
  runs the Great Expectations suites of `include/expectations/`. A failed check fails the run and
  raises an alert; it never withholds the measurements.

Nightly at 02:00; `catchup=False`. Trigger with parameters from the form, or
`airflow dags test jsonb_benchmark_matrix -c '{"scale": "smoke"}'`.
"""

from __future__ import annotations

import os
from datetime import timedelta

import pendulum
from airflow.sdk import Asset, Param, dag, get_current_context, task, task_group

from jsonbench.matrix import load_matrix, params_schema
from jsonbench.suites import get_suite

#: One slot per benchmark host (created by ./bin/setup): one benchmark task at a time.
POOL = "benchmark_host"
#: The Celery queue of the benchmark tasks: the workers of the host being measured listen on it
#: (``bench-<hardware label>`` in docker-compose.yaml). Read once at parse time; "default" otherwise.
QUEUE = os.environ.get("JSONBENCH_QUEUE") or "default"
MEASUREMENTS = Asset("jsonbench_measurements")

MATRIX = load_matrix()


@dag(
    dag_id="jsonb_benchmark_matrix",
    doc_md=__doc__,
    schedule="0 2 * * *",
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    tags=["benchmark", "jsonb", "postgres", "sqlite"],
    params={name: Param(**spec) for name, spec in params_schema(MATRIX).items()},
    default_args={"retries": 1, "retry_delay": timedelta(seconds=30)},
)
def jsonb_benchmark_matrix() -> None:
    @task(retries=0)
    def plan() -> dict:
        from airflow.sdk.exceptions import AirflowFailException

        from jsonbench import tasks
        from jsonbench.errors import BenchmarkError

        ctx = get_current_context()
        logical = ctx.get("logical_date") or ctx["dag_run"].run_after
        try:
            return tasks.plan(dict(ctx["params"]), ctx["run_id"], logical.isoformat())
        except BenchmarkError as exc:  # bad input: no retry can fix it
            raise AirflowFailException(str(exc)) from exc

    @task
    def cells_of(planned: dict, suite: str) -> list:
        """The cells of one suite (Airflow maps over a whole XCom, not over one key of it)."""
        return planned[suite]

    @task(pool=POOL, queue=QUEUE)
    def provision(cell: dict) -> dict:
        from jsonbench import tasks

        return tasks.provision(cell)

    @task(pool=POOL, queue=QUEUE)
    def workload(cell: dict, handle: dict, name: str) -> dict:
        from jsonbench import tasks

        return tasks.run_workload(cell, handle, name)

    @task(pool=POOL, queue=QUEUE)
    def teardown(cell: dict, handle: dict | None = None) -> None:
        from jsonbench import tasks

        tasks.teardown(cell, handle)

    def planned_or_skip() -> dict:
        """The plan's output; skip the calling task when plan failed (nothing started, nothing to publish).

        The run-level tasks pull it themselves instead of taking it as an argument: they must run
        after failed workloads (trigger rule all_done), and an argument from a failed task would fail
        them instead of skipping them.
        """
        from airflow.sdk.exceptions import AirflowSkipException

        planned = get_current_context()["ti"].xcom_pull(task_ids="plan")
        if not planned:
            raise AirflowSkipException("plan did not succeed: no engine was started and nothing was measured")
        return planned

    @task(trigger_rule="all_done", queue=QUEUE)  # removes engines on the benchmark host
    def sweep() -> list:
        from jsonbench import tasks

        return tasks.sweep(planned_or_skip())

    @task(trigger_rule="all_done", outlets=[MEASUREMENTS])
    def publish() -> dict:
        from jsonbench import tasks

        return tasks.publish(planned_or_skip()["run"])

    # Alert exactly when the checks fail: a log entry and <results>/alerts/<run>.{json,md}, plus any
    # notifier named by $JSONBENCH_NOTIFIERS or the Variable jsonbench_notifiers (see checks/alerts.py).
    from jsonbench.checks.alerts import CheckFailureNotifier

    @task(retries=0, on_failure_callback=CheckFailureNotifier())
    def check() -> dict:
        from jsonbench.checks import check_run

        return check_run(planned_or_skip()["run"])

    planned = plan()
    teardowns = []
    for suite_name in MATRIX.suites:
        workloads = get_suite(suite_name).workloads

        @task_group(group_id=suite_name)
        def cell_group(cell: dict) -> None:
            handle = provision(cell)
            runs = [workload.override(task_id=w)(cell, handle, w) for w in workloads]
            stop = teardown(cell, handle)
            runs >> stop.as_teardown(setups=handle)
            teardowns.append(stop)

        cell_group.expand(cell=cells_of.override(task_id=f"{suite_name}_cells")(planned, suite_name))

    swept = sweep()
    [planned, *teardowns] >> swept
    published = publish()
    swept >> published >> check()


jsonb_benchmark_matrix()
