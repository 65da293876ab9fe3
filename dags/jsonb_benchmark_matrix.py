"""
### jsonb_benchmark_matrix

Runs the JSON-storage benchmark matrix: every selected suite on every selected engine version,
**one engine at a time** on the benchmark host.

* **plan** validates the parameters (a bad value fails here, naming the field, before any engine
  starts), checks every build and the expectation files, prints what each cell will cost (load
  size, disk and memory peak, duration: from recorded runs when there are some) and refuses a run
  the machine cannot hold. A new attempt of the same run keeps the cells an earlier attempt
  completed (they are skipped, not measured again).
* One **task group per cell** (`<suite>__<engine>`, shown as `<engine> · <suite>`): **provision** (setup task: take the host
  lease, start a fresh engine, record its build and settings, load shared data), **one task per
  workload** (never retried: a dead or failed attempt may have left the engine changed; the cell
  fails, and a resume of the run measures it again on a fresh engine; with the parameter `starts` at 2 or 3, each runs
  its workload once per engine start, the server restarted between, its repetitions split across them), **teardown** (teardown
  task: runs even when a workload fails or its worker died, gives the host back). A cell's provision
  waits for the teardown of every earlier cell, so its engine starts only after every earlier one
  is gone (no empty links between the groups: each cost a scheduler loop). **select** (after plan)
  names the cells this attempt measures and marks every task of every other group
  (not selected, a Docker image on a host without Docker, completed by an earlier attempt)
  skipped at once, so a narrowed run pays only for what it runs. Every benchmark task takes the one slot of the
  `benchmark_host` pool, and the host lease also keeps a second run (another process or
  deployment) from starting an engine next to this one: its provision waits, rescheduled.
* **sweep** removes any engine a killed task left behind, **publish** adds the run to the Parquet
  dataset in one atomic step (replacing an earlier attempt of the same run only), **check** runs
  the Great Expectations suites of `include/expectations/` (a deterministic fact or a sanity check
  that fails alerts at once; a timing finding or statistical drift that fails is only *suspect*),
  **suspects** lists the suspect cells and workloads, **reconfirm** (mapped, one task per suspect
  cell) measures exactly those again on a fresh engine, **confirm_check** judges the suspects on
  their confirmation and alerts only when it agrees (or when too little of the night could be
  judged), **checked** announces the validations (the report DAG runs on that), and **outcome**
  fails the run and alerts when any task failed, not only the checks.

Nightly at 02:00 (`$JSONBENCH_SCHEDULE` changes it, `none` turns it off); `catchup=False`: unpausing
starts the latest interval's run at once (at the default `laptop` scale). A scheduled run measures the matrix's
default suites, or `$JSONBENCH_SUITES` (add `documents`, with `$JSONBENCH_DOCUMENTS`, for your own documents). Trigger
with parameters from the form, or `airflow dags test jsonb_benchmark_matrix -c '{"scale": "smoke"}'`.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pendulum
from airflow.sdk import Asset, Param, TaskGroup, dag, get_current_context, task

from jsonbench.cell import cell_id_of, cell_label_of
from jsonbench.matrix import load_matrix
from jsonbench.orchestration.deployment import BenchmarkDag, benchmark_dags, dag_engines, retry_delay_s, schedule
from jsonbench.orchestration.plan import cell_slots, params_schema
from jsonbench.suites import get_suite

#: One slot per benchmark host (created by ./bin/setup): one benchmark task at a time.
POOL = "benchmark_host"
MEASUREMENTS = Asset("jsonbench_measurements")
VALIDATIONS = Asset("jsonbench_validations")
#: How long a provision waits for another run's engine to leave the host before it fails.
HOST_WAIT_LIMIT = timedelta(hours=12)
HOST_RECHECK = timedelta(seconds=20)

MATRIX = load_matrix()
#: The engines this DAG carries task groups for: the matrix's scheduled ones, or $JSONBENCH_HOST_ENGINES.
ENGINES = dag_engines(MATRIX)
SLOTS = cell_slots(MATRIX, ENGINES)
WORKLOADS = {suite: get_suite(suite).workloads for suite in MATRIX.suites}
#: Every task id of each cell's group: what ``select`` skips of the cells a run does not measure.
GROUPS = {
    cell_id_of(suite, engine): [f"{cell_id_of(suite, engine)}.{name}" for name in ("provision", *WORKLOADS[suite], "teardown")]
    for suite, engine in SLOTS
}


def planned_or_skip() -> dict[str, Any]:
    """The plan's output; skip the calling task when plan failed (nothing started, nothing to publish).

    Tasks pull it themselves instead of taking it as an argument: they must run after failed
    upstream tasks (trigger rule all_done), and an argument from a failed task would fail them.
    """
    from airflow.sdk.exceptions import AirflowSkipException

    planned = get_current_context()["ti"].xcom_pull(task_ids="plan")
    if not planned:
        raise AirflowSkipException("plan did not succeed: no engine was started and nothing was measured")
    return dict(planned)


def build(spec: BenchmarkDag) -> Any:
    @dag(
        dag_id=spec.dag_id,
        doc_md=__doc__,
        schedule=schedule(),
        start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
        catchup=False,
        max_active_runs=1,
        tags=["benchmark", "jsonb", "postgres", "sqlite"] + ([f"host:{spec.label}"] if spec.label else []),
        params={name: Param(**s) for name, s in params_schema(MATRIX, spec.label).items()},
        default_args={"retries": 1, "retry_delay": timedelta(seconds=retry_delay_s())},
    )
    def benchmark() -> None:
        @task(retries=0)
        def plan() -> dict[str, Any]:
            from airflow.sdk.exceptions import AirflowFailException

            from jsonbench.errors import BenchmarkError
            from jsonbench.orchestration import tasks

            ctx = get_current_context()
            logical = ctx.get("logical_date") or ctx["dag_run"].run_after
            try:
                return tasks.plan(dict(ctx["params"]), ctx["run_id"], logical.isoformat(), bound_label=spec.label, served=ENGINES)
            except BenchmarkError as exc:  # bad input or a machine too small: no retry can fix it
                raise AirflowFailException(str(exc)) from exc

        @task(retries=0)
        def select() -> list[str]:
            """Skip every task of the cells this attempt does not measure, at once, and name the cells it does.

            Not a branch: a branch skips only what no chosen task leads to, and the chain of cells leads from the first
            chosen cell to every later one, which the scheduler then walked group by group (about 3 s each).
            """
            from airflow.sdk.exceptions import DownstreamTasksSkipped

            from jsonbench.orchestration import tasks

            planned = get_current_context()["ti"].xcom_pull(task_ids="plan")
            chosen = tasks.runnable_cells(planned)
            print(f"measuring {len(chosen)} cell(s): {', '.join(chosen) or 'none'}")
            skipped = tasks.unselected_tasks(planned, GROUPS)
            if skipped:
                raise DownstreamTasksSkipped(tasks=skipped)
            return chosen

        @task(pool=POOL, queue=spec.queue, trigger_rule="all_done", execution_timeout=timedelta(hours=3))
        def provision(cell_id: str) -> dict[str, Any]:
            from airflow.sdk.exceptions import AirflowFailException, AirflowRescheduleException, AirflowSkipException

            from jsonbench.host import lease as hostlease
            from jsonbench.orchestration import tasks

            planned = planned_or_skip()
            try:
                return tasks.provision(planned, cell_id)
            except tasks.CellSkipped as exc:
                raise AirflowSkipException(str(exc)) from None
            except hostlease.HostBusy as exc:
                run_id = planned["run"]["run_id"]
                waited = hostlease.waited_s(run_id, cell_id)
                if waited > HOST_WAIT_LIMIT.total_seconds():
                    raise AirflowFailException(
                        f"{exc}; waited {waited / 3600:.1f} h. If that run is dead, release the host: python -m jsonbench.cli host release"
                    ) from None
                print(f"{exc}; waiting (rescheduled; {waited:.0f} s so far)")
                raise AirflowRescheduleException(datetime.now(UTC) + HOST_RECHECK) from None

        # Never retried: an attempt that died (a killed worker) or failed may have left half an update, an index twin or
        # a private copy in the engine, and a retry would measure on it. The cell fails and says so; its teardown frees
        # the host; a resume of the run (resume_of) measures the cell again on a fresh engine.
        @task(pool=POOL, queue=spec.queue, execution_timeout=timedelta(hours=6), retries=0)
        def workload(cell_id: str, handle: dict[str, Any], name: str) -> dict[str, Any]:
            from jsonbench.orchestration import tasks

            return tasks.run_workload(planned_or_skip(), cell_id, handle, name)

        @task(pool=POOL, queue=spec.queue, execution_timeout=timedelta(minutes=30))
        def teardown(cell_id: str, handle: dict[str, Any] | None = None) -> None:
            from jsonbench.orchestration import tasks

            tasks.teardown(planned_or_skip(), cell_id, handle)

        @task(trigger_rule="all_done", queue=spec.queue)  # removes engines on the benchmark host
        def sweep() -> list[str]:
            from jsonbench.orchestration import tasks

            return tasks.sweep(planned_or_skip())

        @task(trigger_rule="all_done", outlets=[MEASUREMENTS])
        def publish() -> dict[str, Any]:
            from jsonbench.orchestration import tasks

            return tasks.publish(planned_or_skip())

        # Alert exactly when the checks fail: a log entry and <results>/alerts/<run>.{json,md}, plus any
        # notifier named by $JSONBENCH_NOTIFIERS or the Variable jsonbench_notifiers (see checks/alerts.py).
        from jsonbench.checks.alerts import CheckFailureNotifier, RunFailureNotifier

        @task(retries=0, on_failure_callback=CheckFailureNotifier())
        def check() -> dict[str, Any]:
            from jsonbench.orchestration import tasks

            return tasks.check(planned_or_skip())

        @task(trigger_rule="all_done")  # after a failed check too: its suspects still get confirmed
        def suspects() -> list[dict[str, Any]]:
            from jsonbench.orchestration import confirmation

            return confirmation.suspects(planned_or_skip())

        @task(pool=POOL, queue=spec.queue, execution_timeout=timedelta(hours=6))
        def reconfirm(suspect: dict[str, Any]) -> dict[str, Any]:
            from airflow.sdk.exceptions import AirflowRescheduleException

            from jsonbench.host import lease as hostlease
            from jsonbench.orchestration import confirmation

            try:
                return confirmation.reconfirm(planned_or_skip(), suspect)
            except hostlease.HostBusy as exc:
                print(f"{exc}; waiting (rescheduled)")
                raise AirflowRescheduleException(datetime.now(UTC) + HOST_RECHECK) from None

        @task(trigger_rule="all_done", retries=0, queue=spec.queue, on_failure_callback=CheckFailureNotifier())
        def confirm_check() -> dict[str, Any]:
            from jsonbench.orchestration import confirmation

            return confirmation.confirm_check(planned_or_skip())

        @task(trigger_rule="all_done", retries=0, outlets=[VALIDATIONS])
        def checked() -> None:
            """Announce the run's validations (passed or failed) so the report is rebuilt, saying which run and where."""
            ctx = get_current_context()
            planned = ctx["ti"].xcom_pull(task_ids="plan") or {}
            ctx["outlet_events"][VALIDATIONS].extra = {
                "run_id": ctx["run_id"],
                "results_dir": (planned.get("run") or {}).get("results_dir"),
            }

        @task(trigger_rule="all_done", retries=0, on_failure_callback=RunFailureNotifier())
        def outcome() -> dict[str, Any]:
            """Fail the run, and alert, when any of its tasks failed (a check failure has alerted already)."""
            from jsonbench.orchestration import tasks

            ti = get_current_context()["ti"]
            found = ti.get_task_states(dag_id=ti.dag_id, run_ids=[ti.run_id])
            states = found.get(ti.run_id, found) if isinstance(found, dict) else {}
            states = {str(k): str(v) for k, v in states.items() if k != ti.task_id}
            return tasks.outcome(ti.xcom_pull(task_ids="plan"), ti.run_id, states)

        planned = plan()
        chosen = select()
        planned >> chosen
        teardowns: list[Any] = []
        for suite, engine in SLOTS:
            cell_id = cell_id_of(suite, engine)
            with TaskGroup(group_id=cell_id, group_display_name=cell_label_of(suite, engine), tooltip=f"{suite} on {engine}"):
                handle = provision.override(task_id="provision")(cell_id)
                runs = [workload.override(task_id=w)(cell_id, handle, w) for w in WORKLOADS[suite]]
                stop = teardown.override(task_id="teardown")(cell_id, handle)
                runs >> stop.as_teardown(setups=handle, on_failure_fail_dagrun=True)
            planned >> handle
            chosen >> handle
            # One engine at a time: a cell's provision (trigger rule all_done) waits for the teardown of every earlier
            # cell, whatever became of it. Every one, not the previous alone: select skips an unselected cell's teardown
            # at once, so a chain through the last teardown would let this cell start beside a running one. No empty
            # link between the groups: the scheduler completes an empty task in a loop of its own (about a second, one
            # after another along a chain), and every run would walk the links of all its groups.
            for earlier in teardowns:
                earlier >> handle
            teardowns.append(stop)
        swept = sweep()
        [planned, *teardowns] >> swept
        found = suspects()
        swept >> publish() >> check() >> found
        found >> reconfirm.expand(suspect=found) >> confirm_check() >> checked() >> outcome()

    return benchmark()


for _spec in benchmark_dags():
    globals()[_spec.dag_id] = build(_spec)
