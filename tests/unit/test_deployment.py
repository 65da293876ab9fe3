"""Which benchmark DAGs a deployment serves, where their tasks go, and when they run."""

from __future__ import annotations

from jsonbench.deployment import NIGHTLY, benchmark_dags, schedule


def test_one_dag_per_hardware_label_each_on_its_own_queue() -> None:
    assert [(d.dag_id, d.label, d.queue) for d in benchmark_dags({})] == [("jsonb_benchmark_matrix", None, "default")]
    dags = benchmark_dags(
        {"JSONBENCH_HARDWARE_LABEL": "here", "JSONBENCH_QUEUE": "bench-here", "JSONBENCH_HARDWARE_LABELS": "here, rack-7,gpu_box,bad label"}
    )
    assert [(d.dag_id, d.label, d.queue) for d in dags] == [
        ("jsonb_benchmark_matrix", None, "bench-here"),  # this host's own label keeps the plain DAG
        ("jsonb_benchmark_matrix__rack-7", "rack-7", "bench-rack-7"),
        ("jsonb_benchmark_matrix__gpu_box", "gpu_box", "bench-gpu_box"),
    ]  # a label that is not a valid label is left out rather than becoming a broken DAG


def test_schedule_is_nightly_unless_switched() -> None:
    assert schedule({}) == NIGHTLY == "0 2 * * *"
    assert schedule({"JSONBENCH_SCHEDULE": "none"}) is None
    assert schedule({"JSONBENCH_SCHEDULE": "30 3 * * 1-5"}) == "30 3 * * 1-5"
