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


def test_honest_run_passes_without_alert(dags_test, tmp_path: Path) -> None:
    results = tmp_path / "honest"
    res = dags_test("jsonb_benchmark_matrix", {**CONF, "results_dir": str(results)})
    assert res["state"] == "success", res["log"][-4000:]
    v = read_dataset(results, VALIDATIONS).to_pandas()
    assert set(v["check_kind"]) == {"sanity", "reproduction", "drift"} and v["success"].all()
    rep = v[v["check_kind"] == "reproduction"].set_index("expectation")
    assert len(rep) == 8 and rep.loc["expression_index_no_hot", "observed"] == 0
    assert rep.loc["big_document_jsonb_update_slowdown", "observed"] > 15  # real servers, real updates
    assert not (results / "alerts").exists()
    assert (results / "gx" / "uncommitted" / "data_docs" / "local_site" / "index.html").is_file()  # GX Data Docs of every checked run


def test_failed_check_fails_the_task_and_alerts(dags_test, tmp_path: Path) -> None:
    results = tmp_path / "failing"
    expectations = tmp_path / "expectations"
    shutil.copytree(paths.EXPECTATIONS_DIR, expectations)
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
    assert len(m) == 5 * 17, "a failed check never withholds the measurements"
    v = read_dataset(results, VALIDATIONS).to_pandas()
    failed = v[~v["success"]]
    assert list(failed["expectation"]) == ["small_document_close"]
    alerts = sorted(p.suffix for p in (results / "alerts").iterdir())
    assert alerts == [".json", ".md"]
    md = next((results / "alerts").glob("*.md")).read_text()
    assert "small_document_close" in md and "1 of" in md
