"""
### jsonb_benchmark_report

Builds the static HTML report of the JSON-storage benchmark, `<results>/report/index.html`, each
time the benchmark DAG publishes a run (it is scheduled on the Asset `jsonbench_measurements`,
which the benchmark's **publish** task updates).

* **wait_for_checks** gives the benchmark's **check** task (which runs right after publish) time
  to store the run's validation rows, so the report shows the night's reproduction and drift
  verdicts; after `JSONBENCH_REPORT_WAIT` seconds (default 900) it goes on without them.
* **build** renders the report: per suite, seed figures next to the run's values per engine version,
  findings with their tolerance bands, trends, drift, sanity, environment and a link to the Great
  Expectations Data Docs.

The results folder is `$JSONBENCH_RESULTS_DIR` (as for the benchmark) or the `results_dir` param.
Without Airflow: `python -m jsonbench.cli report [--results-dir D]`.
"""

from __future__ import annotations

import pendulum
from airflow.sdk import Asset, Param, dag, get_current_context, task

MEASUREMENTS = Asset("jsonbench_measurements")


@dag(
    dag_id="jsonb_benchmark_report",
    doc_md=__doc__,
    schedule=[MEASUREMENTS],
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    tags=["benchmark", "jsonb", "report"],
    params={
        "results_dir": Param(None, type=["null", "string"], description="results folder (default: $JSONBENCH_RESULTS_DIR or results/)"),
        "run_id": Param(None, type=["null", "string"], description="benchmark run to report on (default: the run that triggered this, else the latest)"),
    },
)
def jsonb_benchmark_report() -> None:
    @task
    def wait_for_checks() -> str | None:
        from jsonbench.report.trigger import source_run_id, wait_for_validations

        ctx = get_current_context()
        run_id = ctx["params"].get("run_id") or source_run_id(ctx)
        if run_id:
            wait_for_validations(ctx["params"].get("results_dir"), run_id)
        return run_id

    @task
    def build(benchmark_run: str | None) -> str:  # not "run_id": Airflow reserves that name for the context
        from jsonbench.report import build_report

        ctx = get_current_context()
        return str(build_report(ctx["params"].get("results_dir"), benchmark_run))

    build(wait_for_checks())


jsonb_benchmark_report()
