"""kill -9 through the real DAG: the PostgreSQL postmaster while a workload's statement runs, and the task's own process.

Each test runs ``airflow dags test`` in the background, waits until a workload task has started and
the server shows one of its statements running (or its pgbench client runs), kills, lets the run
end, and checks: the run failed those tasks, nothing of the run is left (no process, SysV shared
memory segment, socket, scratch folder or host lease: the session's leak check), and the same run
cleared and run again (``python -m jsonbench.cli rerun RUN_ID``: same run id) publishes the complete run,
every expected metric exactly once, and no second run beside it.

Under ``dags test`` a task runs inside the run's own process, so "the task's own process" is that
process: killing it stops the whole attempt with the server still up, as a crashed worker host would.
"""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path
from typing import Any

import pytest

from jsonbench.dataset.publish import read_dataset, read_dataset_report
from jsonbench.suites import get_suite
from tests.faultkit import DagRun, active_statement, pgbench_clients, postmasters, wait_for

#: Two real DAG runs killed mid-cell, with real engines: end to end, so in the matrix tier.
pytestmark = [pytest.mark.integration, pytest.mark.dag]

SUITE = "large_document_update"
ENGINE = "postgres-17"


def _conf(results: Path) -> dict[str, Any]:
    return {
        "scale": "smoke",
        "engines": [ENGINE],
        "suites": [SUITE],
        "results_dir": str(results),
        "hardware_label": "faults",
        "repetitions": 1,
    }


def _workload_started(run: DagRun) -> str | None:
    names = set(get_suite(SUITE).workloads)
    started = [t for t in run.started() if t.rsplit(".", 1)[-1] in names]
    return started[-1] if started else None


def _kill_during_a_statement(run: DagRun, tracker: Any, victim: str) -> dict[str, Any]:
    """Wait for a workload's statement (or pgbench client) on this run's server, then kill -9 ``victim`` (postmaster | run)."""
    wait_for(lambda: _workload_started(run) or run.proc.poll() is not None, 900, "a workload task to start")
    assert run.proc is not None and run.proc.poll() is None, run.log[-3000:]

    def busy() -> dict[str, Any] | None:
        pms = postmasters(tracker)
        if len(pms) != 1:
            return None
        statement = active_statement(pms[0])
        clients = pgbench_clients(tracker)
        if statement is None and not clients:
            return None
        return {"postmaster": pms[0].pid, "statement": statement, "pgbench": [c.pid for c in clients], "task": _workload_started(run)}

    seen = wait_for(busy, 600, "a workload statement on the server")
    if victim == "postmaster":
        os.kill(seen["postmaster"], signal.SIGKILL)
    else:
        run.kill()
    return seen


def _complete_and_once(results: Path, run_id: str) -> dict[str, int]:
    """Published rows of ``run_id``: every expected metric present (lost = 0) and no key twice (duplicated = 0)."""
    got = read_dataset_report(results, run_id=run_id)
    assert got.damaged == ()
    df = got.table.to_pandas()
    expected = set(get_suite(SUITE).expected_metrics())
    have = set(zip(df.workload, df.metric, strict=True))
    keys = df[["engine_id", "workload", "variant", "metric"]]
    runs = sorted(set(read_dataset(results).to_pandas().run_id))
    assert runs == [run_id], f"one run in the dataset, the rerun replacing the failed attempt's rows: {runs}"
    return {"rows": len(df), "lost": len(expected - have), "duplicated": int(keys.duplicated().sum())}


def _errors(log: str) -> list[str]:
    return sorted(set(re.findall(r"(psycopg\.\w+Error: [^\n]+|jsonbench\.\w+\.\w+: [^\n]+|PgbenchFailed[^\n]*)", log)))


def test_postmaster_killed_mid_statement(airflow_env: dict[str, str], leak_tracker: Any, leak_check: Any, tmp_path: Path) -> None:
    results = tmp_path / "results"
    logical = "2026-12-01T02:00:00+00:00"
    first = DagRun(airflow_env, _conf(results), logical, tmp_path / "first.log").start()
    try:
        seen = _kill_during_a_statement(first, leak_tracker, "postmaster")
        first.wait()
    finally:
        first.stop()
    states = first.task_states()
    failed = sorted(t for t, s in states.items() if s == "failed")
    print(f"killed postmaster {seen['postmaster']} during {seen['task']}: statement {seen['statement']!r}, pgbench {seen['pgbench']}")
    print(f"failed tasks: {failed}; errors: {_errors(first.log)}")
    assert first.run_state() == "failed", first.log[-5000:]
    assert seen["task"] in failed, states
    cell = seen["task"].rsplit(".", 1)[0]
    assert states[f"{cell}.teardown"] == "success" and states["sweep"] == "success", states
    assert states["outcome"] == "failed", states  # the run fails, and alerts:
    alerts = sorted((results / "alerts").glob("*.md"))
    assert alerts and seen["task"] in alerts[0].read_text(), alerts
    assert leak_check() == [], "teardown and sweep must leave nothing of a killed server"
    partial = read_dataset(results, run_id=first.run_id).num_rows

    second = DagRun(airflow_env, _conf(results), logical, tmp_path / "second.log", again=first.run_id).start()
    try:
        second.wait()
    finally:
        second.stop()
    assert second.run_id == first.run_id
    assert second.task_states().get("publish") == "success", second.log[-5000:]
    numbers = _complete_and_once(results, first.run_id)
    print(f"published after the kill: {partial} rows; after the rerun: {numbers}")
    assert numbers["lost"] == 0 and numbers["duplicated"] == 0
    assert leak_check() == []


def test_task_process_killed_mid_statement(airflow_env: dict[str, str], leak_tracker: Any, leak_check: Any, tmp_path: Path) -> None:
    """Under ``dags test`` a task runs inside the run's process: killing it leaves the server behind, which the next try removes."""
    results = tmp_path / "results"
    logical = "2026-12-02T02:00:00+00:00"
    first = DagRun(airflow_env, _conf(results), logical, tmp_path / "first.log").start()
    try:
        seen = _kill_during_a_statement(first, leak_tracker, "run")
        rc = first.wait()
    finally:
        first.stop()
    print(f"killed the task's process during {seen['task']}: statement {seen['statement']!r}, pgbench {seen['pgbench']}")
    assert rc == -signal.SIGKILL
    left = leak_check(wait_s=0)
    assert any("postgres" in line for line in left), "nothing ran teardown: the server is still there for the next try to remove"

    second = DagRun(airflow_env, _conf(results), logical, tmp_path / "second.log", again=first.run_id).start()
    try:
        second.wait()
    finally:
        second.stop()
    assert second.run_id == first.run_id
    assert second.task_states().get("publish") == "success", second.log[-5000:]
    assert "removing a stale engine folder from an earlier attempt" in second.log  # the killed attempt's server, removed by the rerun
    numbers = _complete_and_once(results, first.run_id)
    print(f"after the rerun: {numbers}")
    assert numbers["lost"] == 0 and numbers["duplicated"] == 0
    assert leak_check() == []
