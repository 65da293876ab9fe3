"""DAG integrity: every DAG file imports cleanly, and the benchmark DAG is wired as designed."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def dagbag():
    from airflow.dag_processing.dagbag import DagBag

    return DagBag(dag_folder=str(ROOT / "dags"))


def test_no_import_errors(dagbag) -> None:
    assert dagbag.import_errors == {}, dagbag.import_errors


def test_every_dag_is_documented_tagged_and_not_catching_up(dagbag) -> None:
    assert dagbag.dags, "no DAG found"
    for dag_id, dag in dagbag.dags.items():
        assert dag.doc_md and len(dag.doc_md) > 100, f"{dag_id}: doc_md missing"
        assert dag.tags, f"{dag_id}: no tags"
        assert dag.catchup is False, f"{dag_id}: catchup must be off"


def test_benchmark_dag_shape(dagbag) -> None:
    """One task group per cell the matrix can run on its scheduled engines; a cell's provision waits for the teardown of
    every earlier cell, and no empty link stands between the groups (the scheduler would spend a loop on each, along the
    chain)."""
    from jsonbench.cell import cell_id_of
    from jsonbench.matrix import load_matrix
    from jsonbench.orchestration.deployment import dag_engines
    from jsonbench.orchestration.plan import cell_slots
    from jsonbench.suites import get_suite

    slots = cell_slots(load_matrix(), dag_engines(load_matrix()))
    dag = dagbag.dags["jsonb_benchmark_matrix"]
    ids = set(dag.task_ids)
    assert {"plan", "select", "sweep", "publish", "check", "checked", "outcome"} <= ids
    # select (after plan) names the cells this attempt measures and marks the other groups' tasks skipped at once
    select = dag.get_task("select")
    assert select.upstream_task_ids == {"plan"} and {t for t in select.downstream_task_ids} == {
        f"{cell_id_of(s, e)}.provision" for s, e in slots
    }
    earlier: set[str] = set()
    for suite, engine in slots:
        group = cell_id_of(suite, engine)
        for name in ("provision", "teardown", *get_suite(suite).workloads):
            assert f"{group}.{name}" in ids, f"missing task {group}.{name}"
        assert f"{group}.done" not in ids
        provision = dag.get_task(f"{group}.provision")
        teardown = dag.get_task(f"{group}.teardown")
        assert provision.is_setup and teardown.is_teardown
        assert provision.trigger_rule == "all_done"
        # One engine at a time: this cell starts after every earlier one is gone, whatever became of it. A skipped
        # group's teardown is done at once, so the provision waits for every earlier teardown, not the last alone.
        assert provision.upstream_task_ids == {"plan", "select", *earlier}
        for name in get_suite(suite).workloads:
            task = dag.get_task(f"{group}.{name}")
            # Workloads sharing a host run one at a time: they all take the single-slot pool.
            assert task.pool == "benchmark_host"
            assert task.upstream_task_ids == {f"{group}.provision"}
            assert f"{group}.teardown" in task.downstream_task_ids
            assert task.execution_timeout is not None
        earlier.add(f"{group}.teardown")
    assert not any(type(t).__name__ == "EmptyOperator" for t in dag.tasks)
    assert earlier <= dag.get_task("sweep").upstream_task_ids
    assert dag.get_task("publish").trigger_rule == "all_done"
    assert any(getattr(o, "name", None) == "jsonbench_measurements" for o in dag.get_task("publish").outlets)
    # The report runs on the validations, announced whether the checks passed or not; the outcome alerts on any failure.
    assert dag.get_task("checked").trigger_rule == "all_done" and "confirm_check" in dag.get_task("checked").upstream_task_ids
    # A timing failure is suspect until measured again: suspects (after the check, whatever became of it) -> one
    # mapped reconfirm per suspect cell on the host pool -> confirm_check, which alerts like the check.
    assert dag.get_task("suspects").trigger_rule == "all_done" and dag.get_task("suspects").upstream_task_ids == {"check"}
    reconfirm = dag.get_task("reconfirm")
    assert reconfirm.pool == "benchmark_host" and reconfirm.upstream_task_ids == {"suspects"}
    confirm = dag.get_task("confirm_check")
    assert confirm.trigger_rule == "all_done" and confirm.upstream_task_ids == {"reconfirm"} and confirm.on_failure_callback
    assert any(getattr(o, "name", None) == "jsonbench_validations" for o in dag.get_task("checked").outlets)
    assert dag.get_task("outcome").trigger_rule == "all_done" and dag.get_task("outcome").on_failure_callback


def test_benchmark_dag_defaults(dagbag) -> None:
    dag = dagbag.dags["jsonb_benchmark_matrix"]
    assert dag.schedule == "0 2 * * *"  # nightly
    for task in dag.tasks:
        group, _, kind = task.task_id.rpartition(".")
        if group and kind not in ("provision", "teardown"):
            # A workload: never retried on the engine a dead or failed attempt left (a resume measures the cell again).
            assert task.retries == 0, f"{task.task_id} is retried"
        elif task.task_id not in ("plan", "select", "check", "confirm_check", "checked", "outcome"):
            assert task.retries >= 1, f"{task.task_id} has no retries"
    params = dag.params
    for name in ("engines", "suites", "backend", "scale", "repetitions", "hardware_label", "results_dir", "server_settings"):
        assert name in params, f"param {name} missing"
    schema = params.get_param("repetitions").schema
    assert schema["minimum"] == 1


def test_dag_file_does_not_import_heavy_modules_at_parse_time() -> None:
    """Parsing the DAG must not import database drivers or pyarrow (no database or network work at parse time)."""
    import subprocess
    import sys

    code = (
        "import sys, runpy; sys.path.insert(0, 'plugins');"
        "runpy.run_path('dags/jsonb_benchmark_matrix.py');"
        "bad = [m for m in ('psycopg', 'pyarrow', 'apsw', 'great_expectations', 'docker', 'pandas') if m in sys.modules];"
        "print('heavy=' + ','.join(bad))"
    )
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.strip().splitlines()[-1] == "heavy=", f"imported at parse time: {res.stdout.strip()}"
