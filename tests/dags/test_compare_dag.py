"""The comparison DAG's shape when parsed (its real run at smoke is tests/matrix/test_compare_run.py, the matrix tier).

The run compares PostgreSQL 17 against itself with another ``work_mem`` over 6 pairs of large_document_update.
What it asserts is completeness, never a timing nor a timing's verdict: every start ran or its pair was dropped
and said; the comparisons table has one row per measured metric, each with a verdict; both arms saw the same
data; and the deterministic facts of one build against itself are the same.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DAG_ID = "jsonb_benchmark_compare"
PAIRS = 6
CONF = {
    "a": {"engine": "postgres-17"},
    "b": {"engine": "postgres-17", "settings": {"work_mem": "8MB"}},
    "suites": ["large_document_update"],
    "scale": "smoke",
    "pairs": PAIRS,
    "margin": 0.05,
    "seed": 7,
}


def test_the_dag_has_a_mapped_group_per_stage_and_a_decision_after_each() -> None:
    from airflow.dag_processing.dagbag import DagBag

    from jsonbench.compare.params import MAX_STAGES

    bag = DagBag(dag_folder=str(ROOT / "dags" / f"{DAG_ID}.py"))
    assert bag.import_errors == {}, bag.import_errors
    dag = bag.dags[DAG_ID]
    assert dag.schedule is None or str(dag.timetable.summary) in ("None", "none"), "triggered only"
    tasks = {t.task_id: t for t in dag.tasks}
    for k in range(1, MAX_STAGES + 1):
        start = tasks[f"stage_{k}.start"]
        assert start.pool == "benchmark_host" and start.retries == 0
        assert tasks[f"decide_{k}"].upstream_task_ids == {f"stage_{k}.start"}
        assert tasks[f"decide_{k}"].trigger_rule == "all_done"
    assert tasks["stage_1.start"].upstream_task_ids == {"begin"}
    assert tasks["sweep"].upstream_task_ids == {f"decide_{MAX_STAGES}"}
    assert tasks["check"].on_failure_callback, "a failed check alerts"


def test_parsing_the_dag_imports_nothing_heavy() -> None:
    code = (
        "import sys, runpy; sys.path.insert(0, 'plugins');"
        f"runpy.run_path('dags/{DAG_ID}.py');"
        "bad = [m for m in ('psycopg', 'pyarrow', 'apsw', 'great_expectations', 'pandas', 'scipy') if m in sys.modules];"
        "print('heavy=' + ','.join(bad))"
    )
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.strip().splitlines()[-1] == "heavy=", res.stdout
