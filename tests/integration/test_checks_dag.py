"""The check task inside real DAG runs (smoke scale, PostgreSQL 16, real servers).

An honest run passes every sanity and reproduction check, stores its validation rows and raises
no alert. The same run against expectation files with one band moved out of reach (a copy of
include/expectations/ via $JSONBENCH_EXPECTATIONS_DIR) fails the check task, which fires the
on_failure_callback: the alert files appear, the validation rows and the measurements are stored.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from jsonbench import paths
from jsonbench.dataset.publish import MEASUREMENTS, VALIDATIONS, read_dataset

pytestmark = pytest.mark.dag

CONF = {"scale": "smoke", "engines": ["postgres-16"], "suites": ["large_document_update"], "repetitions": 1}


def test_honest_run_is_checked_and_stores_its_validations(dags_test, tmp_path: Path) -> None:
    """Completeness, sanity and the deterministic facts pass; timing bands are data here, not a verdict on the test.

    A busy machine may push a timing finding out of its band (the check then fails and alerts, as it
    should); that must not fail this test, which is about the checks running and storing their rows.
    """
    results = tmp_path / "honest"
    res = dags_test("jsonb_benchmark_matrix", {**CONF, "results_dir": str(results)})
    assert res["state"] in ("success", "failed"), res["log"][-4000:]
    v = read_dataset(results, VALIDATIONS).to_pandas()
    assert set(v["check_kind"]) == {"sanity", "reproduction", "drift"}
    sanity = v[v["check_kind"] == "sanity"]
    assert sanity["success"].all(), sanity[~sanity["success"]][["expectation", "details"]].to_string()
    rep = v[v["check_kind"] == "reproduction"].set_index("expectation")
    assert rep.loc["expression_index_no_hot", "observed"] == 0 and bool(rep.loc["expression_index_no_hot", "success"])  # physics: exact
    assert rep.loc["big_document_jsonb_update_slowdown", "observed"] > 1  # real servers, real updates: the direction
    assert (results / "gx" / "uncommitted" / "data_docs" / "local_site" / "index.html").is_file()  # GX Data Docs of every checked run


def test_failed_check_fails_the_task_and_alerts(dags_test, tmp_path: Path) -> None:
    results = tmp_path / "failing"
    expectations = tmp_path / "expectations"
    shutil.copytree(paths.expectations_dir(), expectations)
    rep_file = expectations / "large_document_update.reproduction.json"
    definition = json.loads(rep_file.read_text())
    for f in definition["findings"]:
        if f["id"] == "small_document_close":
            f["band"] = {"min": 1000, "max": None}  # unreachable: json_small 1000x slower than rel_small
    rep_file.write_text(json.dumps(definition))

    res = dags_test("jsonb_benchmark_matrix", {**CONF, "results_dir": str(results)}, extra_env={"JSONBENCH_EXPECTATIONS_DIR": str(expectations)})
    assert res["state"] == "failed", res["log"][-4000:]
    assert "ALERT jsonbench: 1 of" in res["log"]
    m = read_dataset(results, MEASUREMENTS).to_pandas()
    assert len(m[m["workload"] != "_cell"]) == 5 * 17, "a failed check never withholds the measurements"
    v = read_dataset(results, VALIDATIONS).to_pandas()
    failed = v[~v["success"]]
    assert "small_document_close" in list(failed["expectation"])
    alerts = sorted(p.suffix for p in (results / "alerts").iterdir())
    assert alerts == [".json", ".md"]
    md = next((results / "alerts").glob("*.md")).read_text()
    assert "small_document_close" in md and "1 of" in md
