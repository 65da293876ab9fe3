"""Which benchmark DAGs a deployment serves, where their tasks go, and when they run."""

from __future__ import annotations

import pytest

from jsonbench.orchestration.deployment import NIGHTLY, benchmark_dags, schedule


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


def test_host_engines_keep_only_their_task_groups_and_the_plan_refuses_the_others(monkeypatch: pytest.MonkeyPatch) -> None:
    from jsonbench.errors import ConfigError
    from jsonbench.matrix import load_matrix
    from jsonbench.orchestration import tasks
    from jsonbench.orchestration.deployment import host_engines
    from jsonbench.orchestration.plan import cell_slots

    assert host_engines({}) is None and host_engines({"JSONBENCH_HOST_ENGINES": " postgres-17, sqlite-3.54.1 ,"}) == [
        "postgres-17",
        "sqlite-3.54.1",
    ]
    m = load_matrix()
    slots = cell_slots(m, ["postgres-17", "sqlite-3.54.1"])
    assert {e for _, e in slots} == {"postgres-17", "sqlite-3.54.1"} and len(slots) < len(cell_slots(m))
    assert [s for s in cell_slots(m) if s in slots] == slots  # the same order, fewer groups
    with pytest.raises(ConfigError, match="unknown engine"):
        cell_slots(m, ["postgres-99"])
    monkeypatch.setenv("JSONBENCH_HOST_ENGINES", "postgres-16")
    with pytest.raises(ConfigError, match=r"^engines: postgres-17 not served"):
        tasks.plan({"scale": "smoke", "engines": ["postgres-17"]}, "r1", None)


def test_retry_delay_defaults_to_30_s_and_refuses_nonsense() -> None:
    from jsonbench.orchestration.deployment import retry_delay_s

    assert retry_delay_s({}) == 30 and retry_delay_s({"JSONBENCH_RETRY_DELAY_S": "1"}) == 1
    for bad in ("soon", "-5"):
        with pytest.raises(ValueError, match="JSONBENCH_RETRY_DELAY_S"):
            retry_delay_s({"JSONBENCH_RETRY_DELAY_S": bad})
