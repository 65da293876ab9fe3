"""The confirmation before a timing alert, in a real ``airflow dags test`` run (smoke, PostgreSQL 16, one cell).

Three wrong results are planted into the run with ``$JSONBENCH_PLANT`` (jsonbench.orchestration.plant), so that the
outcome does not depend on the machine's speed or load:

* ``json_big``'s update time x 0.001 on the night's measurement only: ``big_document_jsonb_update_slowdown``
  (its smoke band) falls to about 0.1, is suspect, its cell is measured again honestly;
* ``json_small``'s update time x 1000 on every measurement: ``small_document_close`` (its smoke band) reads
  about 1000 twice and is confirmed;
* ``rel_small``'s HOT count x 2 on the night's measurement: a deterministic fact that alerts at once, from
  the check task, without waiting for any confirmation.

The quiet-window thresholds are opened (a copy of the matrix via ``$JSONBENCH_MATRIX``) so that no planted
input is set aside as disturbed on a shared machine. The run's state is not asserted (its checks include
timing bands); the validation rows, the confirmation rows and the alerts are.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from jsonbench import paths
from jsonbench.checks.outcome import check_outcome
from jsonbench.dataset.publish import CONFIRMATIONS, MEASUREMENTS, VALIDATIONS, read_dataset

pytestmark = pytest.mark.dag

CELL = "large_document_update__postgres-16"
CONF = {"scale": "smoke", "engines": ["postgres-16"], "suites": ["large_document_update"], "repetitions": 1}
PLANTS = [
    {"cell": CELL, "workload": "json_big", "metric": "update_time", "factor": 0.001, "on": "first"},
    {"cell": CELL, "workload": "json_small", "metric": "update_time", "factor": 1000, "on": "every"},
    {"cell": CELL, "workload": "rel_small", "metric": "n_tup_hot_upd", "factor": 2, "on": "first"},
]


def _quiet_matrix(tmp_path: Path) -> Path:
    matrix = yaml.safe_load(paths.matrix_file().read_text())
    matrix["quiet_window"] = {"max_other_cpu": 1.0, "max_steal": 1.0}
    target = tmp_path / "matrix.yaml"
    target.write_text(yaml.safe_dump(matrix, sort_keys=False))
    return target


def test_a_suspect_timing_is_measured_again_and_only_a_confirmed_one_alerts(dags_test, tmp_path: Path) -> None:
    results = tmp_path / "results"
    env = {"JSONBENCH_PLANT": json.dumps(PLANTS), "JSONBENCH_MATRIX": str(_quiet_matrix(tmp_path))}
    res = dags_test("jsonb_benchmark_matrix", {**CONF, "results_dir": str(results)}, extra_env=env)
    assert res["run_id"], res["log"][-4000:]
    run_id = res["run_id"]

    # The deterministic fact failed and alerted at once, from the check task.
    out = check_outcome(results, run_id)
    assert not out["facts_ok"] and any("rel_small_hot_count" in line for line in out["failed"]), out["failed"]
    alerts = results / "alerts"
    first_alert = [json.loads(p.read_text()) for p in alerts.glob("*.json") if not p.name.endswith(".confirmation.json")]
    assert len(first_alert) == 1 and first_alert[0]["task_id"] == "check", sorted(p.name for p in alerts.iterdir())
    assert "rel_small_hot_count" in first_alert[0]["subject"] + json.dumps(first_alert[0]["summary"]["failures"])
    assert not any("small_document_close" in line for line in first_alert[0]["summary"]["failures"]), "a timing failure alerted unconfirmed"

    # Only the suspect cell's suspect workloads were measured again, apart from the night's measurements.
    redone = read_dataset(results, CONFIRMATIONS).to_pandas()
    assert set(redone["run_id"]) == {run_id + "+confirm"} and set(redone["engine_id"]) == {"postgres-16"}
    timed = set(redone[redone["metric"] == "update_time"]["workload"])
    assert timed == {"json_big", "rel_big", "json_small", "rel_small"}, timed  # not json_big_idx: nothing of it was suspect
    night = read_dataset(results, MEASUREMENTS).to_pandas()
    assert set(night["run_id"]) == {run_id}, "confirmation rows never enter the measurement dataset"

    v = read_dataset(results, VALIDATIONS, run_id=run_id).to_pandas().set_index("expectation")
    # Planted on every measurement: confirmed, both measurements shown, and alerted by confirm_check.
    close = v.loc["small_document_close"]
    d = json.loads(close["details"])
    assert close["verdict"] == "confirmed" and not close["success"]
    assert d["first"]["observed"] > 100 and d["confirmation"]["observed"] > 100, d
    confirmation_alert = json.loads(next(alerts.glob("*.confirmation.json")).read_text())
    assert confirmation_alert["task_id"] == "confirm_check"
    md = next(alerts.glob("*.confirmation.md")).read_text()
    assert "small_document_close first" in md and "confirmation" in md

    # Planted on the night's measurement only: re-measured honestly, and judged by its band on that measurement.
    slow = v.loc["big_document_jsonb_update_slowdown"]
    d = json.loads(slow["details"])
    assert d["first"]["observed"] < 1 and d["confirmation"]["observed"] > 10 * d["first"]["observed"], d
    # Confirmed only when the honest measurement fails the same way (below the band, as the planted first did);
    # in the band, or above it (a slow machine), it clears: the verdict follows from the values, whatever the speed.
    same_way = d["confirmation"]["observed"] < d["first"]["min_value"]
    assert slow["verdict"] == ("confirmed" if same_way else "cleared") and bool(slow["success"]) == (not same_way), (slow["verdict"], d)
    assert not any("big_document_jsonb_update_slowdown" in line for line in first_alert[0]["summary"]["failures"])

    # Nothing was disturbed (thresholds opened): every timing finding was judged, and the summary says so.
    assert out["judged"]["timing_findings"]["judged"] == out["judged"]["timing_findings"]["judgeable"] > 0
