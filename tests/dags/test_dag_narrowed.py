"""The documents suite (issue 36) through the real benchmark DAG (`airflow dags test`): the README's command
narrowed to one PostgreSQL and one SQLite version at smoke, and a bad input that fails the plan task with
every cell skipped and nothing published."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from jsonbench import paths
from jsonbench.dataset.publish import read_dataset
from jsonbench.suites.documents.input import SAMPLE
from jsonbench.suites.documents.summary import answers
from tests.dags.test_dag_run import task_states
from tests.runcheck import assert_run_correct

pytestmark = pytest.mark.dag

ENGINES = ["postgres-17", "sqlite-3.46.1"]


def test_the_sample_through_the_dag(
    dags_test: Callable[..., dict[str, Any]], airflow_env: dict[str, str], tmp_path: Path, leak_check: Any
) -> None:
    results = tmp_path / "results"
    conf = {
        "scale": "smoke",
        "results_dir": str(results),
        "hardware_label": "ci",
        "engines": ENGINES,
        "suites": ["documents"],
        "documents": str(paths.PROJECT_ROOT / SAMPLE),
    }
    # Every cell of the matrix in the DAG (not only the run's engines): the others are skipped at once by select,
    # never started one group after another (issue 35: a narrowed run pays only for what it runs).
    out = dags_test("jsonb_benchmark_matrix", conf, extra_env={"JSONBENCH_HOST_ENGINES": ""})
    assert out["run_id"], out["log"][-3000:]
    states = task_states(airflow_env, out["run_id"])
    assert states["documents__postgres-17.update"] == "success" and states["documents_sqlite__sqlite-3_46_1.read"] == "success", states
    others = {
        t: s
        for t, s in states.items()
        if t.endswith(".provision") and not t.startswith(("documents__postgres-17.", "documents_sqlite__sqlite-3_46_1."))
    }
    assert len(others) >= 20 and set(others.values()) == {"skipped"}, others
    walked = [t for t in others if f"starting task_id={t} " in out["log"]]
    assert walked == [], f"skipped groups were still started one by one: {walked}"
    # One engine at a time across the skipped groups between the two cells: a skipped group's teardown is done at once,
    # and must not let the later cell start beside the earlier one (the chain runs through each group's `done` link).
    log = out["log"]
    first, second = sorted(
        ("documents__postgres-17", "documents_sqlite__sqlite-3_46_1"), key=lambda c: log.index(f"starting task_id={c}.provision ")
    )
    assert log.index(f"end task task_id={first}.teardown ") < log.index(f"starting task_id={second}.provision "), "two cells overlapped"
    assert_run_correct(results, out["run_id"], states)
    df = read_dataset(results).to_pandas()
    mine = df[(df.run_id == out["run_id"]) & df.suite.isin(["documents", "documents_sqlite"])]
    assert set(mine.engine_id) == set(ENGINES)
    assert mine.scale_params.map(lambda sp: json.loads(sp)["input_documents"]).eq(10_000).all()
    found = answers(mine.to_dict("records"))
    assert len(found) == 2 and all(a.sentences for a in found)
    assert leak_check() == []


def test_bad_documents_fail_the_plan_and_start_nothing(
    dags_test: Callable[..., dict[str, Any]], airflow_env: dict[str, str], tmp_path: Path, leak_check: Any
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1}\n{"id": 2,}\n', encoding="utf-8")
    conf = {"scale": "smoke", "results_dir": str(tmp_path / "r"), "engines": ENGINES, "suites": ["documents"], "documents": str(bad)}
    out = dags_test("jsonb_benchmark_matrix", conf)
    assert out["state"] == "failed"
    assert f"{bad}, line 2: not valid JSON" in out["log"]
    states = task_states(airflow_env, out["run_id"])
    assert states["plan"] == "failed"
    provisions = {t: s for t, s in states.items() if t.endswith(".provision")}
    assert provisions and set(provisions.values()) == {"skipped"}, provisions
    assert not (tmp_path / "r" / "measurements").exists()
    assert leak_check() == []
