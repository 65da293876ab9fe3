"""Faults of a comparison through the real DAG (marker dag), each a comparison of 6 pairs of one workload at smoke:

* a start whose engine dies (kill -9 of its postmaster during one of its statements) fails, and only its pair is
  dropped: the comparison publishes the others' verdicts and says which pair and why; the run fails (a task failed);
* the run's own process killed (kill -9; under ``dags test`` the tasks run inside it) during a start, then the run
  cleared and run again as the same run (``python -m jsonbench.cli rerun RUN_ID --dag-id ...``): the killed start is
  measured again on a fresh engine, the completed starts are kept as they were, and every pair is used.

Neither asserts a timing or a timing's verdict.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from jsonbench.compare.publish import COMPARISON_STARTS, COMPARISONS
from jsonbench.compare.tasks import ATTEMPT, DONE
from jsonbench.dataset.schema import run_key
from tests.faultkit import DagRun, active_statement, postmasters, wait_for

pytestmark = pytest.mark.dag

DAG_ID = "jsonb_benchmark_compare"
PAIRS = 6


def _conf(results: Path) -> dict[str, Any]:
    return {
        "a": {"engine": "postgres-17"},
        "b": {"engine": "postgres-17", "settings": {"work_mem": "8MB"}},
        "suites": ["large_document_update"],
        "workloads": ["rel_small"],
        "scale": "smoke",
        "pairs": PAIRS,
        "margin": 0.05,
        "seed": 5,
        "results_dir": str(results),
        "hardware_label": "faults",
    }


def _staging(results: Path) -> Path:
    (root,) = (results / "_staging").iterdir()
    return root


def _in_flight(results: Path) -> list[str]:
    """The start cells begun and not completed (claimed starts that never began have no workload record yet)."""
    root = _staging(results)
    return sorted(p.name for p in root.iterdir() if (p / ATTEMPT).exists() and not (p / DONE).exists() and (p / "engine.json").exists())


def _kill_in_a_later_start(run: DagRun, tracker: Any, results: Path, victim: str) -> str:
    """Once two starts have completed, wait for a statement of the next start's server, then kill -9 ``victim``."""
    wait_for(
        lambda: run.proc is not None and (run.proc.poll() is not None or len(list(_staging_or_none(results, DONE))) >= 2), 900, "two starts"
    )
    assert run.proc is not None and run.proc.poll() is None, run.log[-3000:]

    def busy() -> tuple[int, str] | None:
        pms = postmasters(tracker)
        flight = _in_flight(results)
        if len(pms) != 1 or len(flight) != 1 or active_statement(pms[0]) is None:
            return None
        return pms[0].pid, flight[0]

    pid, cell = wait_for(busy, 600, "a statement of a start's server")
    if victim == "postmaster":
        os.kill(pid, signal.SIGKILL)
    else:
        run.kill()
    return cell


def _staging_or_none(results: Path, name: str) -> list[Path]:
    root = results / "_staging"
    return list(root.glob(f"*/*/{name}")) if root.is_dir() else []


def _table(results: Path, table: str, run_id: str) -> list[dict[str, Any]]:
    (path,) = (results / table).glob(f"*/*/run_key={run_key(run_id)}/part-0.parquet")
    return pq.read_table(path).to_pylist()


def test_a_start_whose_engine_dies_drops_its_pair_and_says_so(
    airflow_env: dict[str, str], leak_tracker: Any, leak_check: Any, tmp_path: Path
) -> None:
    results = tmp_path / "results"
    run = DagRun(airflow_env, _conf(results), "2026-12-03T02:00:00+00:00", tmp_path / "run.log", dag_id=DAG_ID).start()
    try:
        killed = _kill_in_a_later_start(run, leak_tracker, results, "postmaster")
        run.wait()
    finally:
        run.stop()
    pair = int(killed.split("__p")[1][:3])
    states = run.task_states()
    print(f"killed the postmaster of {killed}; run {run.run_id} {run.run_state()}; states {sorted(set(states.values()))}")
    failed = sorted(t for t, s in states.items() if s == "failed")
    assert len(failed) == 2 and failed[0] == "outcome" and failed[1].startswith("stage_1.start["), states
    assert states["publish"] == "success", states
    rows = _table(results, COMPARISONS, run.run_id)
    dropped = json.loads(rows[0]["dropped"])
    assert list(dropped) == [str(pair)] and "did not complete" in dropped[str(pair)], dropped
    timed = [r for r in rows if r["metric_kind"] != "deterministic"]
    assert timed and all(r["pairs_used"] == PAIRS - 1 for r in timed), [(r["metric"], r["pairs_used"]) for r in timed]
    starts = _table(results, COMPARISON_STARTS, run.run_id)
    assert not any(r["judged"] for r in starts if r["pair"] == pair and r["arm"] == killed[-1])
    assert leak_check() == [], "the failed start's teardown and the sweep leave nothing"


def test_a_killed_start_cleared_is_measured_again_and_the_completed_ones_kept(
    airflow_env: dict[str, str], leak_tracker: Any, leak_check: Any, tmp_path: Path
) -> None:
    results = tmp_path / "results"
    logical = "2026-12-04T02:00:00+00:00"
    first = DagRun(airflow_env, _conf(results), logical, tmp_path / "first.log", dag_id=DAG_ID).start()
    try:
        killed = _kill_in_a_later_start(first, leak_tracker, results, "run")
        rc = first.wait()
    finally:
        first.stop()
    killed_at = time.time()
    assert rc == -signal.SIGKILL
    kept = {p.parent.name: p.read_text() for p in _staging_or_none(results, DONE)}
    assert len(kept) >= 2 and killed not in kept

    second = DagRun(airflow_env, _conf(results), logical, tmp_path / "second.log", again=first.run_id, dag_id=DAG_ID).start()
    try:
        second.wait(timeout=2400)
    finally:
        second.stop()
    print(f"killed the run during {killed}; {len(kept)} starts completed before; rerun {second.run_id} {second.run_state()}")
    assert second.run_id == first.run_id and second.run_state() == "success", second.log[-5000:]
    assert f"removed the engines a killed earlier attempt of this run left: {killed}" in second.log, "begin swept the killed start's server"
    after = {p.parent.name: p.read_text() for p in _staging_or_none(results, DONE)}
    assert all(after[c] == text for c, text in kept.items()), "the completed starts are kept as they were"
    assert (_staging(results) / killed / DONE).stat().st_mtime > killed_at - 5, "the killed start is measured again"
    assert len(after) == 2 * PAIRS
    rows = _table(results, COMPARISONS, first.run_id)
    assert json.loads(rows[0]["dropped"]) == {} and all(r["pairs_used"] == PAIRS for r in rows if r["metric_kind"] != "deterministic")
    assert leak_check() == []
