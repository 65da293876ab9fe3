"""
### jsonb_benchmark_report

Builds the static HTML report of the JSON-storage benchmark, `<results>/report/index.html`, after
every run of the benchmark: it is scheduled on the Asset `jsonbench_validations`, which the
benchmark DAG's final **checked** task emits once the run's checks have stored their verdicts
(whether they passed or failed). Nothing polls: when this DAG starts, the rows are there.

* **views** rewrites the SQL views shipped with the results (`<results>/jsonbench.duckdb`:
  `measurements`, `validations`, `runs`, `latest_run`, `findings`, `change_points`).
* **build** renders the report of the run that triggered it (from the asset event: its `extra`
  `run_id` / `results_dir` when the benchmark sets them, else the event's source run), or of the
  `run_id` param, else of the latest run: the scorecard of the seeds' findings per engine version
  and scale on top, then per suite the reproduction table, ratio charts and trends with drift's
  change points.

Not paused at creation, so a nightly run is followed by its report without anyone unpausing it.
The results folder is the asset event's `results_dir`, else the `results_dir` param, else
`$JSONBENCH_RESULTS_DIR`. **Benchmark report** in the UI's navigation shows the report of the web
server's `$JSONBENCH_RESULTS_DIR` (the plugin `plugins/jsonbench_ui.py`). Without Airflow:
`python -m jsonbench.cli report [--results-dir D]`.
"""

from __future__ import annotations

from typing import Any

import pendulum
from airflow.sdk import Asset, Param, dag, get_current_context, task

#: Emitted by jsonb_benchmark_matrix's final "checked" task, after "check" (passed or failed).
VALIDATIONS = Asset("jsonbench_validations")


def triggering_run(context: Any) -> tuple[str | None, str | None]:
    """``(benchmark run id, results folder)`` of the latest asset event that triggered this run, if any.

    The benchmark may put ``{"run_id": ..., "results_dir": ...}`` in the event's ``extra``; otherwise
    the event's ``source_run_id`` names the run and the results folder comes from the params or the
    environment.
    """
    events = context.get("triggering_asset_events") or {}
    latest = None
    try:
        for evs in events.values():
            for ev in evs:
                if latest is None or ev.timestamp >= latest.timestamp:
                    latest = ev
    except (AttributeError, TypeError):  # a context without asset events (manual trigger, dags test)
        return None, None
    if latest is None:
        return None, None
    extra = getattr(latest, "extra", None) or {}
    run_id = extra.get("run_id") if isinstance(extra.get("run_id"), str) else None
    results_dir = extra.get("results_dir") if isinstance(extra.get("results_dir"), str) else None
    return run_id or getattr(latest, "source_run_id", None), results_dir


@dag(
    dag_id="jsonb_benchmark_report",
    doc_md=__doc__,
    schedule=[VALIDATIONS],
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    is_paused_upon_creation=False,
    tags=["benchmark", "jsonb", "report"],
    params={
        "results_dir": Param(
            None,
            type=["null", "string"],
            description="results folder (default: the triggering event's, else $JSONBENCH_RESULTS_DIR or results/)",
        ),
        "run_id": Param(
            None, type=["null", "string"], description="benchmark run to report on (default: the run that triggered this, else the latest)"
        ),
    },
)
def jsonb_benchmark_report() -> None:
    @task
    def source() -> dict:
        """Which run and which results folder: the param, else the triggering asset event, else the latest run."""
        ctx = get_current_context()
        event_run, event_dir = triggering_run(ctx)
        return {"run_id": ctx["params"].get("run_id") or event_run, "results_dir": event_dir or ctx["params"].get("results_dir")}

    @task
    def views(src: dict) -> str:
        from jsonbench.dataset.views import refresh

        return str(refresh(src["results_dir"]))

    @task(trigger_rule="all_done")  # the report is built even when the views could not be refreshed
    def build(src: dict) -> str:
        from jsonbench.report import build_report

        return str(build_report(src["results_dir"], src["run_id"]))

    src = source()
    views(src) >> build(src)


jsonb_benchmark_report()
