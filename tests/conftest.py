"""Shared fixtures: isolated Airflow home, results and scratch folders, cells, and a leak check.

Every test session gets its own scratch folder for server data directories
(``JSONBENCH_SCRATCH_DIR``), so the session-wide leak check can tell this session's servers apart
from anyone else's: when the session ends, no process may still be running from that folder.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "plugins"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "/integration/" in str(item.fspath):
            item.add_marker(pytest.mark.integration)


def _processes_under(folder: str) -> list[str]:
    """Command lines of live (non-zombie) processes that mention ``folder``."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if (proc / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError):
            continue
        if folder in cmd:
            found.append(f"{proc.name}: {cmd.strip()}")
    return found


@pytest.fixture(scope="session", autouse=True)
def scratch_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A session-private scratch folder for engine data; fails the session if a server outlives it."""
    # Short path: unix socket paths are limited to about 100 bytes.
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="jbt-", dir="/tmp"))
    os.chmod(folder, 0o755)
    old = os.environ.get("JSONBENCH_SCRATCH_DIR")
    old_lock = os.environ.get("JSONBENCH_HOST_LOCK_DIR")
    os.environ["JSONBENCH_SCRATCH_DIR"] = str(folder)
    # This session's runs take the host lease among themselves, not from other sessions on the machine.
    os.environ["JSONBENCH_HOST_LOCK_DIR"] = str(folder / ".host-lease")
    yield folder
    deadline = time.monotonic() + 10
    left = _processes_under(str(folder))
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = _processes_under(str(folder))
    for name, value in (("JSONBENCH_SCRATCH_DIR", old), ("JSONBENCH_HOST_LOCK_DIR", old_lock)):
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    assert not left, "server processes outlived the test session:\n" + "\n".join(left)


@pytest.fixture
def leak_check(scratch_dir: Path) -> Callable[[], list[str]]:
    """Call to list processes still running from this session's scratch folder."""
    return lambda: _processes_under(str(scratch_dir))


@pytest.fixture
def results_dir(tmp_path: Path) -> Path:
    path = tmp_path / "results"
    path.mkdir()
    return path


@pytest.fixture
def make_cells(results_dir: Path) -> Callable[..., list[Any]]:
    """Plan cells the way the DAG's plan task does: ``make_cells(suite, engines=[...], **params)``."""
    from jsonbench.cell import RunRef
    from jsonbench.matrix import plan_cells, resolve

    def make(suite: str, engines: list[str], run_id: str = "test_run", matrix: Any = None, **params: Any) -> list[Any]:
        params = {"scale": "smoke", "results_dir": str(results_dir), "suites": [suite], "engines": engines, **params}
        cfg = resolve(params, matrix)
        run = RunRef(run_id=run_id, logical_date="2026-11-29T02:00:00+00:00", hardware_label=cfg.hardware_label,
                     results_dir=cfg.results_dir, scale=cfg.scale, git_revision="test")
        return [c for c in plan_cells(cfg, run, matrix) if c.suite == suite]

    return make


def planned_of(*cells: Any) -> dict[str, Any]:
    """The plan JSON the driver's functions take, for cells made by ``make_cells`` (one run)."""
    return {"run": cells[0].run.to_json(), "cells": [c.to_json() for c in cells], "resumed": []}


# -- Airflow ----------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def airflow_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Environment for a private Airflow (own metadata database, the project's dags and plugins)."""
    home = tmp_path_factory.mktemp("airflow_home")
    env = dict(os.environ)
    env.update(
        {
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__CORE__DAGS_FOLDER": str(ROOT / "dags"),
            "AIRFLOW__CORE__PLUGINS_FOLDER": str(ROOT / "plugins"),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "PYTHONPATH": str(ROOT / "plugins"),
            "XDG_RUNTIME_DIR": env.get("XDG_RUNTIME_DIR", "/tmp"),
        }
    )
    airflow = str(Path(sys.executable).parent / "airflow")
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
    for argv in ([airflow, "db", "migrate"], [airflow, "pools", "set", "benchmark_host", "1", "test pool"]):
        res = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return env


_FINISHED = re.compile(r"DagRun Finished: dag_id=(\S+?), .*?run_id=(\S+?), .*?state=(\w+)")


@pytest.fixture
def dags_test(airflow_env: dict[str, str]) -> Callable[..., dict[str, Any]]:
    """Run ``airflow dags test DAG -c CONF`` for real; return run id, state, exit code and the log."""

    def run(dag_id: str, conf: dict[str, Any], extra_env: dict[str, str] | None = None, timeout: int = 900) -> dict[str, Any]:
        env = {**airflow_env, **(extra_env or {})}
        airflow = str(Path(sys.executable).parent / "airflow")
        res = subprocess.run([airflow, "dags", "test", dag_id, "-c", json.dumps(conf)], env=env, capture_output=True, text=True, timeout=timeout)
        log = res.stdout + res.stderr
        m = _FINISHED.search(log)
        return {"returncode": res.returncode, "log": log, "run_id": m.group(2) if m else None, "state": m.group(3) if m else None}

    return run
