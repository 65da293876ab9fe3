"""Every command the README and docs/ print runs as printed, from a fresh shell.

A fresh shell here is a clean environment: ``PATH`` the system's only, no ``AIRFLOW_HOME``, no
``PYTHONPATH``, no ``JSONBENCH_*``, started in the project folder. Each ``.venv/bin/jsonbench`` command
and each ``./bin/jsonbench-dev`` instrument printed (in a code block or inline) answers ``--help`` there;
each ``./bin/`` script printed exists, is executable and parses (README.md, docker/README.md and every page
under docs/, its subfolders too); and the quick start itself, narrowed to one SQLite cell at smoke, sets up and runs
the real DAG there to the end, with its run judged by :func:`tests.runcheck.assert_run_correct`'s rules
on the stored validation rows (never by the run's state, which includes timing bands).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from jsonbench import paths

ROOT = paths.PROJECT_ROOT
DOCS = [ROOT / "README.md", ROOT / "docker" / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"```(?:bash|sh|console)?\n(.*?)```", re.S)
INLINE = re.compile(r"`(\.venv/bin/jsonbench [^`]+|\./bin/[\w-]+[^`]*)`")


def _printed() -> list[tuple[str, str]]:
    """``(file, command line)`` of every command printed, continuation lines joined."""
    out: list[tuple[str, str]] = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for block in FENCE.findall(text):
            for line in block.replace("\\\n", " ").splitlines():
                line = line.strip()
                if line.startswith((".venv/bin/jsonbench", "./bin/")):
                    out.append((doc.name, line))
        out += [(doc.name, m) for m in INLINE.findall(text)]
    return out


def _fresh_env(tmp: Path) -> dict[str, str]:
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp), "LANG": "C.UTF-8"}


def test_the_docs_print_commands_in_the_one_form() -> None:
    """No printed command relies on a sourced environment: the jsonbench command, or a ./bin script."""
    texts = "\n".join(d.read_text(encoding="utf-8") for d in DOCS)
    assert "python -m jsonbench.cli" not in texts, "print `.venv/bin/jsonbench ...`: it finds its own environment"
    printed = _printed()
    assert sum(1 for _, c in printed if c.startswith(".venv/bin/jsonbench")) >= 20
    assert any(c.startswith("./bin/quickstart") for _, c in printed) and any(c.startswith("./bin/test") for _, c in printed)


@pytest.mark.integration
def test_every_printed_jsonbench_command_answers_help_from_a_fresh_shell(tmp_path: Path) -> None:
    subcommands = sorted(
        {c.split()[1] for _, c in _printed() if c.startswith(".venv/bin/jsonbench ") and re.fullmatch(r"[a-z][a-z-]*", c.split()[1])}
    )
    assert "run" in subcommands and "report" in subcommands
    env = _fresh_env(tmp_path)
    failed = {}
    for sub in [*subcommands, "--help"]:
        argv = [str(ROOT / ".venv/bin/jsonbench"), *([sub, "--help"] if sub != "--help" else [sub])]
        got = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
        if got.returncode != 0 or "Traceback" in got.stderr:
            failed[sub] = (got.returncode, got.stderr[-500:])
    assert not failed, failed
    # The module form works from a fresh shell too.
    got = subprocess.run([str(ROOT / ".venv/bin/python"), "-m", "jsonbench.cli", "plan", "--help"], cwd=ROOT, env=env, capture_output=True)
    assert got.returncode == 0, got.stderr


@pytest.mark.integration
def test_every_printed_instrument_answers_help_from_a_fresh_shell(tmp_path: Path) -> None:
    """``./bin/jsonbench-dev CMD``: each instrument printed answers ``--help`` there, from another folder too."""
    subcommands = sorted(
        {c.split()[1] for _, c in _printed() if c.startswith("./bin/jsonbench-dev ") and re.fullmatch(r"[a-z][a-z-]*", c.split()[1])}
    )
    assert "noise-levels" in subcommands and "calibrate" in subcommands
    env = _fresh_env(tmp_path)
    failed = {}
    for sub in [*subcommands, "--help"]:
        argv = [str(ROOT / "bin/jsonbench-dev"), *([sub, "--help"] if sub != "--help" else [sub])]
        got = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
        if got.returncode != 0 or "Traceback" in got.stderr or f"usage: jsonbench-dev {sub if sub != '--help' else ''}" not in got.stdout:
            failed[sub] = (got.returncode, got.stderr[-500:])
    assert not failed, failed


@pytest.mark.integration
def test_every_printed_script_exists_and_parses() -> None:
    scripts = sorted({c.split()[0] for _, c in _printed() if c.startswith("./bin/")})
    assert "./bin/quickstart" in scripts
    for script in scripts:
        path = ROOT / script
        assert path.is_file() and os.access(path, os.X_OK), script
        if path.read_text(encoding="utf-8").startswith("#!/usr/bin/env bash"):
            assert subprocess.run(["bash", "-n", str(path)]).returncode == 0, script


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
