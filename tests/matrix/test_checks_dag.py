"""The check task inside a real DAG run (smoke scale, PostgreSQL 16, real servers).

An honest run's completion, publication, sanity and deterministic facts are asserted on the smoke run
of every default cell (tests/dags/test_dag_run.py, ``assert_run_correct``), which also shows that a
planted wrong fact fails that assertion. Here: a run against expectation files with one band moved out of reach (a copy of
include/expectations/ via $JSONBENCH_EXPECTATIONS_DIR) fails the check task, which fires the
on_failure_callback: the alert files appear, the validation rows and the measurements are stored.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from jsonbench import paths
from jsonbench.checks.outcome import check_outcome
from jsonbench.dataset.publish import MEASUREMENTS, read_dataset

pytestmark = pytest.mark.dag

CONF = {"scale": "smoke", "engines": ["postgres-16"], "suites": ["large_document_update"], "repetitions": 1}


def test_failed_check_fails_the_task_and_alerts(dags_test, tmp_path: Path) -> None:
    results = tmp_path / "failing"
    expectations = tmp_path / "expectations"
    shutil.copytree(paths.expectations_dir(), expectations)
    rep_file = expectations / "large_document_update.reproduction.json"
    definition = json.loads(rep_file.read_text())
    for f in definition["findings"]:
        if f["id"] == "rel_small_hot_count":
            f["bands"]["smoke"] = {
                "min": 1000,
                "max": None,
                "reason": "unreachable on purpose: 1000 HOT updates of 250",
                "derived_from": [],
                "not_derived": "planted by this test",
                "seed_outside": "planted by this test",
            }
    rep_file.write_text(json.dumps(definition))

    res = dags_test(
        "jsonb_benchmark_matrix", {**CONF, "results_dir": str(results)}, extra_env={"JSONBENCH_EXPECTATIONS_DIR": str(expectations)}
    )
    assert res["state"] == "failed", res["log"][-4000:]
    assert "ALERT jsonbench:" in res["log"]
    m = read_dataset(results, MEASUREMENTS).to_pandas()
    assert len(m[(m["workload"] != "_cell") & (m["suite"] != "host")]) == 5 * 17, "a failed check never withholds the measurements"
    out = check_outcome(results, res["run_id"])
    assert not out["facts_ok"] and any("rel_small_hot_count" in line for line in out["failed"])
    alerts = sorted(p.suffix for p in (results / "alerts").iterdir())
    assert alerts == [".json", ".md"]
    md = next((results / "alerts").glob("*.md")).read_text()
    assert "rel_small_hot_count" in md
    # The run's outcome fails with the check, without a second alert.
    assert "checks failed for run" in res["log"] and "failed only in tasks that alerted already (check)" in res["log"], res["log"][-4000:]
