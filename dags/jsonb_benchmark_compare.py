"""
### jsonb_benchmark_compare

What does a change do? Compares two **arms** on this host, each an engine of the matrix with optional
server settings (`{"engine": "postgres-17", "settings": {"work_mem": "4MB"}}`): a new build against an old
one, or one build against itself with other settings. The arms run in **interleaved pairs**, each pair one
fresh engine start of A and one of B on the same generated data, in an order balanced and shuffled by `seed`,
so that the host's drift falls on both arms alike.

* **plan** validates the parameters (a bad one fails here, naming the field, before any engine starts) and
  plans every start of every stage; **begin** removes what a killed earlier attempt of the run left, starts
  each arm that has settings of its own once (a setting the server refuses fails here, naming the arm, the
  setting and the server's message, before any pair runs) and hands stage 1 its starts.
* **stage_1 .. stage_4**: one dynamically mapped task group per stage of `pairs` (`[10, 20, 40]`: totals
  after each stage; one number: one stage), mapped over the stage's starts in their order. Each **start** is
  one arm's engine start (each instance takes the next start of the planned order when it runs, whatever
  order the scheduler runs the instances in): for each suite, the nightly cell machinery (host lease, canary, fresh engine with
  the arm's settings, load, the selected workloads, teardown), in the one slot of the `benchmark_host` pool.
  A start that fails drops its pair (said in the log, the table and the page); a start cleared and run
  again keeps what it completed and measures the rest on a fresh engine.
* **decide_k** judges the pairs so far; while a metric is undecided it hands the next stage its starts,
  else an empty list, which skips the stage.
* **sweep** removes any engine a killed start left; **publish** judges every metric (paired log ratios,
  Hodges-Lehmann estimate, Wilcoxon interval, FDR across metrics; deterministic facts exactly) and writes the
  `comparisons` table (one row per metric) and `report/compare-<run>.html`; **check** (Great Expectations)
  fails and alerts on a regression; **outcome** fails the run when any task failed.

No schedule: trigger it with parameters, or `airflow dags test jsonb_benchmark_compare -c
'{"a": {"engine": "postgres-17"}, "b": {"engine": "postgres-17", "settings": {"work_mem": "4MB"}}, "suites":
["json_vs_jsonb"], "scale": "smoke", "pairs": 6}'`.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pendulum
from airflow.sdk import Param, dag, get_current_context, task, task_group

from jsonbench.compare.params import MAX_STAGES, schema
from jsonbench.orchestration.deployment import retry_delay_s

DAG_ID = "jsonb_benchmark_compare"
POOL = "benchmark_host"
HOST_RECHECK = timedelta(seconds=20)


def planned_or_skip() -> dict[str, Any]:
    """The plan's output; skip the calling task when plan failed (nothing started)."""
    from airflow.sdk.exceptions import AirflowSkipException

    planned = get_current_context()["ti"].xcom_pull(task_ids="plan")
    if not planned:
        raise AirflowSkipException("plan did not succeed: no engine was started and nothing was measured")
    return dict(planned)


@dag(
    dag_id=DAG_ID,
    doc_md=__doc__,
    schedule=None,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    tags=["benchmark", "compare"],
    params={name: Param(**s) for name, s in schema().items()},
    default_args={"retries": 1, "retry_delay": timedelta(seconds=retry_delay_s())},
)
def compare() -> None:
    @task(retries=0)
    def plan() -> dict[str, Any]:
        from airflow.sdk.exceptions import AirflowFailException

        from jsonbench.compare import tasks
        from jsonbench.errors import BenchmarkError

        ctx = get_current_context()
        logical = ctx.get("logical_date") or ctx["dag_run"].run_after
        try:
            return tasks.plan(dict(ctx["params"]), ctx["run_id"], logical.isoformat())
        except BenchmarkError as exc:  # a bad parameter or a missing build: no retry can fix it
            raise AirflowFailException(str(exc)) from exc

    # In the host's pool: it starts each arm's engine once, to fail on a setting the server refuses before any pair runs.
    @task(pool=POOL, retries=0)
    def begin(planned: dict[str, Any]) -> list[dict[str, Any]]:
        from airflow.sdk.exceptions import AirflowFailException, AirflowRescheduleException

        from jsonbench.compare import tasks
        from jsonbench.errors import BenchmarkError
        from jsonbench.host import lease as hostlease

        try:
            return tasks.begin(planned)
        except hostlease.HostBusy as exc:
            print(f"{exc}; waiting (rescheduled)")
            raise AirflowRescheduleException(datetime.now(UTC) + HOST_RECHECK) from None
        except BenchmarkError as exc:  # a setting the server refuses: no retry can fix it
            raise AirflowFailException(str(exc)) from exc

    # Never retried: a start that failed may have left its engine half changed; clear it to measure it again.
    @task(pool=POOL, retries=0, execution_timeout=timedelta(hours=6))
    def start(one: dict[str, Any]) -> dict[str, Any]:
        from airflow.sdk.exceptions import AirflowRescheduleException

        from jsonbench.compare import tasks
        from jsonbench.host import lease as hostlease

        try:
            ti = get_current_context()["ti"]
            return tasks.run_start(planned_or_skip(), one, int(ti.map_index))
        except hostlease.HostBusy as exc:
            print(f"{exc}; waiting (rescheduled)")
            raise AirflowRescheduleException(datetime.now(UTC) + HOST_RECHECK) from None

    @task(trigger_rule="all_done", retries=0)
    def decide(stage: int) -> list[dict[str, Any]]:
        from jsonbench.compare import tasks

        return tasks.decide(planned_or_skip(), stage)

    @task(trigger_rule="all_done")
    def sweep() -> list[str]:
        from jsonbench.compare import tasks

        return tasks.sweep(planned_or_skip())

    @task(trigger_rule="all_done", retries=0)
    def publish() -> dict[str, Any]:
        from jsonbench.compare import tasks

        return tasks.publish(planned_or_skip())

    from jsonbench.checks.alerts import RunFailureNotifier
    from jsonbench.compare.notify import ComparisonFailureNotifier

    @task(retries=0, on_failure_callback=ComparisonFailureNotifier())
    def check() -> dict[str, Any]:
        from jsonbench.compare import tasks

        return tasks.check(planned_or_skip())

    @task(trigger_rule="all_done", retries=0, on_failure_callback=RunFailureNotifier())
    def outcome() -> dict[str, Any]:
        """Fail the run, and alert, when any of its tasks failed (a failed check has alerted already)."""
        from jsonbench.orchestration import tasks

        ti = get_current_context()["ti"]
        found = ti.get_task_states(dag_id=ti.dag_id, run_ids=[ti.run_id])
        states = found.get(ti.run_id, found) if isinstance(found, dict) else {}
        states = {str(k): str(v) for k, v in states.items() if k != ti.task_id}
        return tasks.outcome(ti.xcom_pull(task_ids="plan"), ti.run_id, states)

    planned = plan()
    starts: Any = begin(planned)
    last: Any = None
    for k in range(MAX_STAGES):

        @task_group(group_id=f"stage_{k + 1}")
        def stage(one: dict[str, Any]) -> None:
            start(one)

        ran = stage.expand(one=starts)
        if last is not None:
            last >> ran
        last = decide.override(task_id=f"decide_{k + 1}")(k)
        ran >> last
        starts = last
    swept = sweep()
    last >> swept
    swept >> publish() >> check() >> outcome()


compare()
