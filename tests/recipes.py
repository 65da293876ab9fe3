"""What the tests that follow the recipes of ``docs/extending.md`` share.

Each recipe edits a copy of ``include/`` (named by ``JSONBENCH_INCLUDE_DIR`` / ``JSONBENCH_MATRIX``) and, for a
suite or a backend, adds a module outside the repository; nothing of the project itself may change. Here: the copy,
the recipe's own YAML read from the page, the project's files snapshotted, ``jsonbench plan`` and the DAG's parse in a
child process (the environment a user's command and the DAG processor get), and one cell run through the driver's
task functions (``provision``, each workload, ``teardown``), the way the DAG's tasks call them.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT

EXTENDING = ROOT / "docs" / "extending.md"


def project_files() -> dict[str, str]:
    """The SHA-256 of every Python file of the project and of every build pin (``engines/*/package*.json``)."""
    files = [p for folder in ("plugins", "dags", "dev", "docker") for p in (ROOT / folder).rglob("*.py")]
    files += (ROOT / "engines").glob("*/package*.json")
    return {str(p.relative_to(ROOT)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(files)}


def include_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of ``include/`` that this process's matrix, SQL and expectations are read from from now on."""
    include = tmp_path / "include"
    shutil.copytree(ROOT / "include", include)
    monkeypatch.setenv("JSONBENCH_INCLUDE_DIR", str(include))
    monkeypatch.setenv("JSONBENCH_MATRIX", str(include / "matrix.yaml"))
    monkeypatch.delenv("JSONBENCH_EXPECTATIONS_DIR", raising=False)
    return include


def read_matrix(include: Path) -> dict[str, Any]:
    return dict(yaml.safe_load((include / "matrix.yaml").read_text(encoding="utf-8")))


def write_matrix(include: Path, matrix: dict[str, Any]) -> None:
    (include / "matrix.yaml").write_text(yaml.safe_dump(matrix, sort_keys=False), encoding="utf-8")


def recipe_section(heading: str) -> str:
    """The text of one recipe of ``docs/extending.md``: from its heading to the next heading of any level."""
    text = EXTENDING.read_text(encoding="utf-8")
    m = re.search(rf"^#+ {re.escape(heading)}\n(.*?)(?=^#)", text, re.S | re.M)
    assert m, f"{EXTENDING.name} has no section {heading!r}"
    return m.group(1)


def recipe_yaml(heading: str) -> dict[str, Any]:
    """The YAML block a recipe prints (its one fenced ``yaml`` block), parsed."""
    blocks = re.findall(r"```yaml\n(.*?)```", recipe_section(heading), re.S)
    assert len(blocks) == 1, f"the recipe {heading!r} prints {len(blocks)} YAML blocks, not one"
    return dict(yaml.safe_load(textwrap.dedent(blocks[0])))


def child_env(airflow_env: dict[str, str], include: Path, *, modules: Path | None = None, **extra: str | None) -> dict[str, str]:
    """The environment of a command or DAG processor that reads the copy (and imports from ``modules``, outside the
    project); ``extra`` sets variables, a None value removes one."""
    env = {
        **airflow_env,
        "JSONBENCH_INCLUDE_DIR": str(include),
        "JSONBENCH_MATRIX": str(include / "matrix.yaml"),
        "PYTHONPATH": ":".join(str(p) for p in (modules, ROOT / "plugins") if p is not None),
    }
    env.pop("JSONBENCH_EXPECTATIONS_DIR", None)
    for key, value in extra.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def jsonbench(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``.venv/bin/jsonbench ARGS`` as a user types it (this checkout's package, the environment given)."""
    return subprocess.run([sys.executable, "-m", "jsonbench.cli", *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)


def parsed_dag(env: dict[str, str]) -> dict[str, Any]:
    """The benchmark DAG as the DAG processor parses it in ``env`` (a child process): its task groups, task ids, the
    upstream tasks of every provision task, and the ``backend`` parameter's choices."""
    probe = textwrap.dedent(f"""
        import json
        from airflow.dag_processing.dagbag import DagBag
        bag = DagBag(dag_folder={str(ROOT / "dags" / "jsonb_benchmark_matrix.py")!r})
        assert not bag.import_errors, bag.import_errors
        dag = bag.dags["jsonb_benchmark_matrix"]
        print(json.dumps({{
            "groups": sorted(dag.task_group_dict),
            "tasks": sorted(dag.task_ids),
            "after": {{t: sorted(dag.get_task(t).upstream_task_ids) for t in dag.task_ids if t.endswith(".provision")}},
            "backends": dag.params.get_param("backend").schema.get("enum"),
        }}))
    """)
    res = subprocess.run([sys.executable, "-c", probe], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return dict(json.loads(res.stdout.strip().splitlines()[-1]))


def run_cell(planned: dict[str, Any], cell_id: str, workloads: tuple[str, ...] | None = None) -> dict[str, Any]:
    """One cell through the driver, as its task group runs it: provision, every workload (or those named), teardown
    whatever happened; the provision's handle."""
    from jsonbench.orchestration import tasks
    from jsonbench.suites import get_suite

    cell = tasks.cell_of(planned, cell_id)
    assert cell is not None, f"{cell_id} is not planned"
    handle = tasks.provision(planned, cell_id)
    try:
        for workload in workloads or get_suite(cell.suite).workloads:
            tasks.run_workload(planned, cell_id, handle, workload)
    finally:
        tasks.teardown(planned, cell_id, handle)
    return handle
