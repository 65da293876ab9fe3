"""The check task inside real DAG runs (smoke scale, PostgreSQL 16, real servers).

An honest run completes, publishes its measurements and is checked: schema, completeness and the
deterministic facts (HOT counts, TOAST growth per row, datum sizes) must pass, and the validation
rows are stored. Timing bands are not asserted: on a busy machine one may miss, which fails the
check task (and so the run) on purpose, and that must not fail this test; the test then asserts
that only timing-tagged rows failed (``jsonbench.checks.run.check_outcome``).

The same run against expectation files with one band moved out of reach (a copy of
include/expectations/ via $JSONBENCH_EXPECTATIONS_DIR) fails the check task, which fires the
on_failure_callback: the alert files appear, the validation rows and the measurements are stored.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from jsonbench import paths
from jsonbench.checks.run import check_outcome
from jsonbench.dataset.publish import MEASUREMENTS, VALIDATIONS, read_dataset

pytestmark = pytest.mark.dag

CONF = {"scale": "smoke", "engines": ["postgres-16"], "suites": ["large_document_update"], "repetitions": 1}


def test_honest_run_completes_publishes_and_passes_sanity_and_facts(dags_test, tmp_path: Path) -> None:
    results = tmp_path / "honest"
    res = dags_test("jsonb_benchmark_matrix", {**CONF, "results_dir": str(results)})
    assert res["run_id"], res["log"][-4000:]
    m = read_dataset(results, MEASUREMENTS).to_pandas()
    m = m[m["workload"] != "_cell"]  # per-cell resource rows (duration, memory, disk)
    assert len(m) == 5 * 17 and (m["run_id"] == res["run_id"]).all(), "every workload ran and was published"
    out = check_outcome(results, res["run_id"])
    assert out["sanity_ok"], out["failed"]
    assert out["facts_ok"], out["failed"]
    v = read_dataset(results, VALIDATIONS).to_pandas()
    assert set(v["check_kind"]) == {"sanity", "reproduction", "drift"}
    rep = v[v["check_kind"] == "reproduction"].set_index("expectation")
    assert rep.loc["expression_index_no_hot", "observed"] == 0 and rep.loc["rel_small_hot_count", "observed"] == 119
    assert (results / "gx" / "uncommitted" / "data_docs" / "local_site" / "index.html").is_file()  # GX Data Docs of every checked run
    if res["state"] == "success":
        assert not (results / "alerts").exists() and not out["failed"]
    else:
        # Only the check may have failed, and only on timing: a busy machine, not a broken run.
        assert out["only_timing_failed"], out["failed"]
        # The check (or the confirmation of its suspects) failed and alerted; the run's outcome fails with it, without a
        # second alert.
        assert "checks failed for run" in res["log"] and "failed only in tasks that alerted already (" in res["log"], res["log"][-4000:]


def test_failed_check_fails_the_task_and_alerts(dags_test, tmp_path: Path) -> None:
    results = tmp_path / "failing"
    expectations = tmp_path / "expectations"
    shutil.copytree(paths.expectations_dir(), expectations)
    rep_file = expectations / "large_document_update.reproduction.json"
    definition = json.loads(rep_file.read_text())
    for f in definition["findings"]:
        if f["id"] == "rel_small_hot_count":
            f["bands"]["smoke"] = {"min": 1000, "max": None, "reason": "unreachable on purpose: 1000 HOT updates of 250"}
    rep_file.write_text(json.dumps(definition))

    res = dags_test(
        "jsonb_benchmark_matrix", {**CONF, "results_dir": str(results)}, extra_env={"JSONBENCH_EXPECTATIONS_DIR": str(expectations)}
    )
    assert res["state"] == "failed", res["log"][-4000:]
    assert "ALERT jsonbench:" in res["log"]
    m = read_dataset(results, MEASUREMENTS).to_pandas()
    assert len(m[m["workload"] != "_cell"]) == 5 * 17, "a failed check never withholds the measurements"
    out = check_outcome(results, res["run_id"])
    assert not out["facts_ok"] and any("rel_small_hot_count" in line for line in out["failed"])
    alerts = sorted(p.suffix for p in (results / "alerts").iterdir())
    assert alerts == [".json", ".md"]
    md = next((results / "alerts").glob("*.md")).read_text()
    assert "rel_small_hot_count" in md
