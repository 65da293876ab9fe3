"""Every command the README and docs/ print runs as printed, from a fresh shell.

A fresh shell here is a clean environment: ``PATH`` the system's only, no ``AIRFLOW_HOME``, no
``PYTHONPATH``, no ``JSONBENCH_*``, started in the project folder. Each ``.venv/bin/jsonbench`` command
and each ``./bin/jsonbench-dev`` instrument printed (in a code block or inline) answers ``--help`` there;
each ``./bin/`` script printed exists, is executable and parses (README.md, docker/README.md and every page
under docs/, its subfolders too). The quick start itself runs from a fresh shell in the matrix tier
(``tests/matrix/test_quickstart.py``).
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
