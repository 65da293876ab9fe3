"""Shared fixtures: isolated Airflow home, results and scratch folders, cells, and a leak check.

Every test session gets its own scratch folder for server data directories
(``JSONBENCH_SCRATCH_DIR``) and a token in the environment of everything it starts
(``JSONBENCH_TEST_SESSION``), so the leak check can tell this session's servers, shared memory,
sockets and containers apart from anyone else's (``tests/leakcheck.py``). Every test is checked when
it ends (what it started must be gone), and the session when it ends; a test can also call
``leak_check()`` itself.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
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


# -- no silent skip in CI -------------------------------------------------------------------------

#: Tests that may skip under CI because they are genuinely not for this platform, by node id, each with
#: why. Empty: whatever a test needs on a fresh Debian machine, ./bin/setup (or --docker) installs.
CI_SKIP_ALLOWED: dict[str, str] = {}


def _skip_fails() -> bool:
    """Under CI (``CI`` set, as in .ci/run) a skipped test is a failure: a fresh machine must run them all."""
    return bool(os.environ.get("CI"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if not (report.skipped and _skip_fails()) or hasattr(report, "wasxfail"):
        return
    if item.nodeid in CI_SKIP_ALLOWED:
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    report.outcome = "failed"
    report.longrepr = f"skipped under CI, which counts as a failure (tests/conftest.py CI_SKIP_ALLOWED): {reason}"


_COLLECT_SKIPS: list[str] = []


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """A whole module skipped at collection (``pytest.skip(allow_module_level=True)``) counts too."""
    if report.skipped and _skip_fails() and report.nodeid not in CI_SKIP_ALLOWED:
        _COLLECT_SKIPS.append(f"{report.nodeid}: {report.longrepr}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _COLLECT_SKIPS:
        print("\nskipped at collection under CI (a failure):\n  " + "\n  ".join(_COLLECT_SKIPS))
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# -- leak check ---------------------------------------------------------------------------------

from tests.leakcheck import LEASE_DIR, TOKEN_VAR, Leak, Tracker  # noqa: E402  (after plugins/ is on the path)

#: How long a test's end waits for processes that are already exiting (a stopped server's last children).
EXIT_GRACE_S = 10.0
_TRACKER: Tracker | None = None


def _describe(leaks: list[Leak]) -> str:
    return "\n".join(f"  {leak.text}" for leak in leaks)


@pytest.fixture(scope="session", autouse=True)
def scratch_dir() -> Iterator[Path]:
    """A session-private scratch folder for engine data, and the session's leak check.

    Every process the session starts inherits ``JSONBENCH_TEST_SESSION``; see ``tests/leakcheck.py``
    for how processes, shared memory, sockets, scratch entries and containers are told apart from
    anyone else's. At the end of the session nothing of it may exist; whatever does is listed, then
    removed, and the session fails.
    """
    global _TRACKER
    # Short path: unix socket paths are limited to about 100 bytes.
    import secrets
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="jbt-", dir="/tmp"))
    os.chmod(folder, 0o755)
    saved = {k: os.environ.get(k) for k in ("JSONBENCH_SCRATCH_DIR", "JSONBENCH_HOST_LOCK_DIR", TOKEN_VAR)}
    os.environ["JSONBENCH_SCRATCH_DIR"] = str(folder)
    # This session's runs take the host lease among themselves, not from other sessions on the machine.
    os.environ["JSONBENCH_HOST_LOCK_DIR"] = str(folder / LEASE_DIR)
    os.environ[TOKEN_VAR] = f"{os.getpid()}-{secrets.token_hex(8)}"
    tracker = _TRACKER = Tracker(folder, os.environ[TOKEN_VAR], lease_dir=folder / LEASE_DIR)
    tracker.start()
    try:
        yield folder
    finally:
        left = tracker.new_since([], wait_s=EXIT_GRACE_S)
        problems = tracker.reap(left) if left else []
        tracker.stop()
        _TRACKER = None
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(folder, ignore_errors=True)
    assert not left, "left behind by the test session (now removed):\n" + _describe(left) + ("\n" + "\n".join(problems) if problems else "")


@pytest.fixture(autouse=True)
def _no_leaks(request: pytest.FixtureRequest, scratch_dir: Path) -> Iterator[list[Leak]]:
    """Fails a test that leaves anything of its own behind (what existed when it started, e.g. a module's server, is not its)."""
    assert _TRACKER is not None
    baseline = _TRACKER.leaks()
    yield baseline
    left = _TRACKER.new_since(baseline, wait_s=EXIT_GRACE_S)
    if left:
        problems = _TRACKER.reap(left)
        extra = ("\n" + "\n".join(problems)) if problems else ""
        pytest.fail(f"{request.node.nodeid} left behind (now removed):\n" + _describe(left) + extra, pytrace=False)


class LeakCheck:
    """``leak_check()``: everything of this session that exists now, one line each (empty when nothing).

    Not only what the calling test started: a module fixture's run (``smoke_run``) must have left
    nothing either. Waits up to ``wait_s`` (default 10 s) for things that are already going away;
    pass ``wait_s=0`` to see what is there at once, e.g. to assert that a server is running.
    """

    def __call__(self, wait_s: float = EXIT_GRACE_S) -> list[str]:
        assert _TRACKER is not None
        return [leak.text for leak in _TRACKER.new_since([], wait_s=wait_s)]

    def kinds(self, wait_s: float = EXIT_GRACE_S) -> dict[str, list[str]]:
        """The same, grouped by kind (process, shm, socket, scratch, container)."""
        assert _TRACKER is not None
        out: dict[str, list[str]] = {}
        for leak in _TRACKER.new_since([], wait_s=wait_s):
            out.setdefault(leak.kind, []).append(leak.text)
        return out


@pytest.fixture
def leak_tracker(_no_leaks: list[Leak]) -> Tracker:
    """The session's tracker itself (tests of the leak check)."""
    assert _TRACKER is not None
    return _TRACKER


@pytest.fixture
def leak_check(_no_leaks: list[Leak]) -> LeakCheck:
    """Call to list what this session started that still exists (processes, shared memory, sockets, scratch, containers)."""
    return LeakCheck()


@pytest.fixture
def results_dir(tmp_path: Path) -> Path:
    path = tmp_path / "results"
    path.mkdir()
    return path


@pytest.fixture
def make_cells(results_dir: Path) -> Callable[..., list[Any]]:
    """Plan cells the way the DAG's plan task does: ``make_cells(suite, engines=[...], **params)``."""
    from jsonbench.cell import RunRef
    from jsonbench.orchestration.plan import plan_cells, resolve

    def make(suite: str, engines: list[str], run_id: str = "test_run", matrix: Any = None, **params: Any) -> list[Any]:
        params = {"scale": "smoke", "results_dir": str(results_dir), "suites": [suite], "engines": engines, **params}
        cfg = resolve(params, matrix)
        run = RunRef(
            run_id=run_id,
            logical_date="2026-11-29T02:00:00+00:00",
            hardware_label=cfg.hardware_label,
            results_dir=cfg.results_dir,
            scale=cfg.scale,
            git_revision="test",
        )
        return [c for c in plan_cells(cfg, run, matrix) if c.suite == suite]

    return make


def planned_of(*cells: Any) -> dict[str, Any]:
    """The plan JSON the driver's functions take, for cells made by ``make_cells`` (one run)."""
    return {"run": cells[0].run.to_json(), "cells": [c.to_json() for c in cells], "resumed": []}


# -- Airflow ----------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def airflow_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Environment for a private Airflow (own metadata database, the project's dags and plugins)."""
    from jsonbench.orchestration.plan import resolve

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
            # Task groups for the default engines only (not the Docker-only ones): a smaller DAG to parse. A group a
            # run does not select is skipped at once by `select` (tests/dags/test_documents_dag.py runs every group).
            "JSONBENCH_HOST_ENGINES": ",".join(resolve({}).engines),
            # Fault tests fail tasks on purpose: their one retry comes after 1 s, not 30 (jsonbench.orchestration.deployment).
            "JSONBENCH_RETRY_DELAY_S": "1",
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
        if conf.get("engines") and "JSONBENCH_HOST_ENGINES" not in (extra_env or {}):
            env["JSONBENCH_HOST_ENGINES"] = ",".join(conf["engines"])  # the run's engines only: no skipped groups to wait for
        airflow = str(Path(sys.executable).parent / "airflow")
        res = subprocess.run(
            [airflow, "dags", "test", dag_id, "-c", json.dumps(conf)], env=env, capture_output=True, text=True, timeout=timeout
        )
        log = res.stdout + res.stderr
        m = _FINISHED.search(log)
        return {"returncode": res.returncode, "log": log, "run_id": m.group(2) if m else None, "state": m.group(3) if m else None}

    return run
