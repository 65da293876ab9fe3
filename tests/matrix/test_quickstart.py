"""The quick start, as the README prints it, from a fresh shell: ``./bin/quickstart`` narrowed to one SQLite cell at smoke.

A fresh shell is a clean environment: ``PATH`` the system's only, no ``AIRFLOW_HOME``, no ``PYTHONPATH``, no
``JSONBENCH_*``, started in the project folder. It sets up and runs the real DAG there to the end, and the run is judged
by :func:`tests.runcheck.assert_run_correct`'s rules on the stored validation rows (never by the run's state, which
includes timing bands). In the matrix tier: it runs the whole setup and a DAG, end to end.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from jsonbench import paths

ROOT = paths.PROJECT_ROOT


def _fresh_env(tmp: Path) -> dict[str, str]:
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp), "LANG": "C.UTF-8"}


@pytest.mark.integration
@pytest.mark.dag
def test_the_quick_start_runs_from_a_fresh_shell(tmp_path: Path) -> None:
    """``./bin/quickstart`` (setup, then the real DAG through ``jsonbench run``) from a clean environment, one SQLite cell at smoke."""
    from tests.runcheck import assert_run_correct

    results = tmp_path / "results"
    # Two test-session variables, which nothing of the project reads as configuration: the session's host lease folder,
    # and its token, so that the leak check sees whatever the quick start leaves running.
    env = {
        **_fresh_env(tmp_path),
        "JSONBENCH_HOST_LOCK_DIR": os.environ.get("JSONBENCH_HOST_LOCK_DIR", ""),
        "JSONBENCH_TEST_SESSION": os.environ.get("JSONBENCH_TEST_SESSION", ""),
    }
    env = {k: v for k, v in env.items() if v}
    argv = ["./bin/quickstart", "--scale", "smoke", "--engines", "sqlite-3.54.1", "--suites", "sqlite_jsonb", "--results-dir", str(results)]
    got = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1500)
    assert "Traceback" not in got.stderr + got.stdout, (got.stdout[-2000:], got.stderr[-2000:])
    assert got.returncode in (0, 1), (got.returncode, got.stderr[-2000:])  # 1: a check failed, which may be a timing band
    assert "Report:" in got.stdout and (results / "report" / "index.html").is_file(), got.stdout[-2000:]
    (run_id,) = _published_run_ids(results)
    # The run's stored validation rows judge it (sanity, every deterministic fact), never its state: a 1 is a timing band.
    states = {"publish": "success", "checked": "success", "check": "success" if got.returncode == 0 else "failed"}
    assert_run_correct(results, run_id, states)


def _published_run_ids(results: Path) -> list[str]:
    import duckdb

    glob = str(results / "measurements" / "**" / "*.parquet")
    return [
        r[0]
        for r in duckdb.sql(f"select distinct run_id from read_parquet('{glob}', hive_partitioning=true, union_by_name=true)").fetchall()
    ]
