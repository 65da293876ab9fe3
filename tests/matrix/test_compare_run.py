"""The comparison DAG end to end: one real ``airflow dags test`` at smoke (marker dag; the matrix tier).

The run compares PostgreSQL 17 against itself with another ``work_mem`` over 6 pairs of large_document_update.
What it asserts is completeness, never a timing nor a timing's verdict: every start ran or its pair was dropped
and said; the comparisons table has one row per measured metric, each with a verdict; both arms saw the same
data; and the deterministic facts of one build against itself are the same.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

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


@pytest.mark.dag
def test_a_smoke_comparison_of_one_build_against_itself_is_complete(dags_test, tmp_path: Path) -> None:
    from jsonbench.compare.judge import CHANGED, SAME
    from jsonbench.compare.publish import COMPARISONS
    from jsonbench.compare.tasks import ATTEMPT, DONE, start_cell_id
    from jsonbench.dataset.schema import run_key
    from jsonbench.dataset.staging import Staging
    from jsonbench.history.stats.paired import Verdict
    from jsonbench.suites import get_suite

    results = tmp_path / "results"
    res = dags_test(DAG_ID, {**CONF, "results_dir": str(results)}, timeout=3000)
    assert res["run_id"], res["log"][-4000:]
    run_id = res["run_id"]

    files = list((results / COMPARISONS).glob(f"*/*/run_key={run_key(run_id)}/part-0.parquet"))
    assert len(files) == 1, res["log"][-4000:]
    rows = pq.read_table(files[0]).to_pylist()
    dropped = {int(k): v for k, v in json.loads(rows[0]["dropped"]).items()}

    # Every start ran, or its pair was dropped and said why.
    staging = Staging(results, run_id)
    for pair in range(PAIRS):
        for arm in ("A", "B"):
            folder = staging.root / start_cell_id("large_document_update", pair, arm)
            assert (folder / ATTEMPT).exists(), f"pair {pair} arm {arm} never started"
            if not (folder / DONE).exists():
                assert pair in dropped and dropped[pair], f"pair {pair} arm {arm} did not complete and its pair was not dropped"
    assert rows[0]["pairs_planned"] == PAIRS
    assert res["state"] == "success" or dropped, res["log"][-4000:]  # only a failed start (its pair dropped) may fail the run

    # The starts ran in the planned order (pair by pair, each pair's arms in its drawn order), not the scheduler's.
    from jsonbench.compare.params import resolve_comparison
    from jsonbench.compare.tasks import stage_starts

    planned = [(s["pair"], s["arm"]) for s in stage_starts(resolve_comparison({**CONF, "results_dir": str(results)}), 0)]
    attempts = [json.loads(p.read_text()) for p in staging.root.glob(f"*/{ATTEMPT}")]
    assert [(x["pair"], x["arm"]) for x in sorted(attempts, key=lambda x: x["started_at"])] == planned
    assert all(r["pairs_used"] + r["pairs_dropped"] >= len(dropped) for r in rows)
    assert not any("fingerprint" in why for why in dropped.values()), dropped  # both arms saw the same data

    # One row per metric measured, each with a verdict.
    suite = get_suite("large_document_update")
    expected = {(w, m) for w, m in suite.expected_metrics()}
    names = [(r["workload"], r["variant"], r["metric"]) for r in rows]
    assert len(names) == len(set(names)), "one row per metric"
    assert {(w, m) for w, _v, m in names} <= expected
    verdicts = {str(v) for v in Verdict} | {CHANGED, SAME, "different", "varies"}
    assert all(r["verdict"] in verdicts for r in rows), {r["verdict"] for r in rows}
    timed = [r for r in rows if r["metric_kind"] != "deterministic"]
    assert timed and all(r["estimate"] is not None and r["margin"] == 0.05 for r in timed)

    # The same build against itself: every deterministic fact is the same, compared exactly.
    facts = [r for r in rows if r["metric_kind"] == "deterministic"]
    assert facts, "no deterministic fact compared"
    assert all(r["verdict"] == SAME and r["fact_a"] == r["fact_b"] for r in facts), [
        (r["metric"], r["fact"]) for r in facts if r["verdict"] != SAME
    ]
    assert rows[0]["build_a"] and rows[0]["build_a"] == rows[0]["build_b"]
    assert json.loads(rows[0]["settings_b"]).get("work_mem") == "8MB" != json.loads(rows[0]["settings_a"]).get("work_mem")

    assert (results / "report" / f"compare-{run_key(run_id)}.html").exists()
