"""The canary (jsonbench.host.canary) measures the host, and nothing of the engines or of this project's code.

Checked by facts, never by how fast this machine is today:

* it imports nothing of the project (so no engine, suite or harness change can move it), and runs with
  no engine at all; its wakeup component's echo process (``cat``) ends with it;
* held to half a core by a real cgroup quota (``bin/cpu-quota``), its all-cores component cannot finish
  faster than its own CPU time allows: the quota moves it, on any machine, busy or not (CFS lets a group
  run at most its quota per period, so wall time >= CPU time / quota, less one period);
* staged beside a cell, it is published as suite ``host`` with one row per component (5 samples each),
  and the suites' checks leave those rows out.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from jsonbench import paths
from jsonbench.host import canary

ROOT = paths.PROJECT_ROOT


def test_the_canary_imports_nothing_of_the_project() -> None:
    tree = ast.parse(Path(canary.__file__).read_text(encoding="utf-8"))
    mods = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | {
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
    }
    assert not [m for m in mods if m.startswith("jsonbench")], mods


def test_one_canary_times_every_component(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[subprocess.Popen[bytes]] = []
    real = subprocess.Popen

    def spy(*a: Any, **k: Any) -> subprocess.Popen[bytes]:
        started.append(real(*a, **k))
        return started[-1]

    monkeypatch.setattr(canary.subprocess, "Popen", spy)
    got = canary.run(tmp_path, samples=2)
    assert set(got.samples) == set(canary.COMPONENTS) and all(len(v) == 2 and min(v) > 0 for v in got.samples.values())
    assert not list(tmp_path.iterdir()), "the fsync component leaves no file behind"
    assert len(started) == 1 and started[0].returncode == 0, "the wakeup component's echo process has ended"


@pytest.mark.integration
@pytest.mark.skipif(os.geteuid() != 0, reason="a cgroup quota needs root")
def test_a_cpu_quota_moves_the_all_cores_component(tmp_path: Path) -> None:
    """Under a quota of half a core (0.25 of 2 cores), each cpu_all sample takes at least its CPU time / 0.5, minus one period."""
    share = 0.5 / (os.cpu_count() or 2)
    argv = [str(ROOT / "bin" / "cpu-quota"), f"{share:.3f}", sys.executable, "-m", "jsonbench.host.canary", str(tmp_path)]
    got = subprocess.run(argv, capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT / "plugins")})
    assert got.returncode == 0, got.stderr
    out = json.loads(got.stdout.strip().splitlines()[-1])
    wall, cpu = sum(out["samples"]["cpu_all"]), sum(out["cpu"]["cpu_all"])
    assert cpu > 0
    # Over a wall time W the group runs at most 0.5 W + one period's quota: per sample, W >= cpu / 0.5 - one period (100 ms).
    assert wall >= cpu / 0.5 - 5 * 100, (wall, cpu)
