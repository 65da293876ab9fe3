"""The SQLite engine (apsw, one venv per version): provisioning, facts, the timing worker, refusals.

Real SQLite builds: the venvs ./bin/setup made under .cache/sqlite (created here if missing).
"""

from __future__ import annotations

import copy
import json
import math
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from jsonbench.engines.base import engine_for
from jsonbench.engines.sqlite_apsw import SqliteSession, SqliteWorkerError
from jsonbench.engines.sqlite_venv import check_versions
from jsonbench.errors import ConfigError, EngineUnavailable
from jsonbench.matrix import Matrix, load_matrix
from jsonbench.orchestration import tasks
from jsonbench.setup import sqlite_venvs
from tests.conftest import planned_of

VERSIONS = ["sqlite-3.45.0", "sqlite-3.46.1", "sqlite-3.54.1"]


def matrix_with(**engines: dict[str, Any]) -> Matrix:
    """A copy of the project's matrix with extra engines (the default matrix is never changed)."""
    raw = copy.deepcopy(load_matrix().raw)
    raw["engines"].update(engines)
    return Matrix(raw)


def sqlite_engine(version: str, package: str) -> dict[str, Any]:
    return {"family": "sqlite", "version": version, "backends": {"apsw": {"package": package}}}


@pytest.mark.parametrize("engine_id", VERSIONS)
def test_provision_records_exact_version_and_compile_options(
    engine_id: str, make_cells: Callable[..., list[Any]], scratch_dir: Path, leak_check: Callable[[], list[str]]
) -> None:
    (cell,) = make_cells("sqlite_jsonb", engines=[engine_id])
    assert cell.backend == "apsw" and cell.backend_options["package"].startswith(f"apsw=={cell.version}.")
    engine = engine_for(cell)
    engine.check()
    workdir = cell.identity.workdir()
    handle = engine.provision()
    try:
        assert workdir.is_dir()
        facts = engine.facts(handle)
        assert facts["version"] == cell.version  # the exact SQLite the venv runs, e.g. 3.46.1
        assert facts["apsw_version"] == cell.backend_options["package"].split("==")[1]
        assert facts["compile_options"] and all(isinstance(o, str) and o for o in facts["compile_options"])
        assert "THREADSAFE=1" in facts["compile_options"]
        assert facts["configure"] == "; ".join(facts["compile_options"])
        assert facts["data_checksums"] is None and facts["settings"] == {}
        assert facts["capabilities"] == {"jsonb": True}
        assert facts["python_version"].count(".") == 2
        assert facts["version"] in facts["build"] or facts["apsw_version"] in facts["build"]
        json.dumps(facts)  # staged as JSON
        with engine.session(handle) as s:
            assert s.scalar("SELECT sqlite_version()") == cell.version
            assert s.scalar("""SELECT json(jsonb('{"a": [1, "x"]}'))""") == '{"a":[1,"x"]}'
            assert isinstance(s.scalar("""SELECT jsonb('{"a": 1}')"""), bytes)
    finally:
        engine.teardown(handle)
    assert not workdir.exists()
    engine.teardown(handle)  # twice is fine
    assert leak_check() == []


def test_worker_times_inside_itself(make_cells: Callable[..., list[Any]], scratch_dir: Path) -> None:
    (cell,) = make_cells("sqlite_jsonb", engines=["sqlite-3.46.1"])
    engine = engine_for(cell)
    handle = engine.provision()
    try:
        with engine.session(handle) as s:
            count = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < :n) SELECT sum(i), count(*) FROM n"
            t0 = time.perf_counter()
            seconds, rows = s.time(count, {"n": 20000}, repeat=5)
            outside = time.perf_counter() - t0
            assert rows == [(20000 * 20001 // 2, 20000)]
            assert len(seconds) == 5 and all(math.isfinite(x) and x > 0 for x in seconds)
            # Measured inside the worker: the runs fit in the round trip that contains them.
            assert sum(seconds) <= outside

            s.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, doc TEXT); INSERT INTO t VALUES (1, '{\"a\": 1}'), (2, '{\"a\": 2}')")
            upd = "UPDATE t SET doc = json_set(doc, '$.a', 99)"
            seconds, _ = s.time(upd, repeat=3, rollback=True)
            assert len(seconds) == 3
            assert s.scalar("SELECT sum(json_extract(doc, '$.a')) FROM t") == 3  # every run rolled back
            s.time(upd, repeat=1)
            assert s.scalar("SELECT sum(json_extract(doc, '$.a')) FROM t") == 198

            # Interleaved rounds of several statements: one list of runs and the rows per statement.
            seconds, results = s.time_many([("SELECT count(*) FROM t", None), (count, {"n": 10})], repeat=4)
            assert [len(x) for x in seconds] == [4, 4] and all(x > 0 for runs in seconds for x in runs)
            assert results == [[(2,)], [(55, 10)]]
            s.time_many([(upd, None), ("UPDATE t SET doc = '{}'", None)], repeat=2, rollback=True)
            assert s.scalar("SELECT sum(json_extract(doc, '$.a')) FROM t") == 198

            with pytest.raises(SqliteWorkerError, match="no such table"):
                s.execute("SELECT * FROM missing_table")
            assert s.scalar("SELECT count(*) FROM t") == 2  # the session survives a failed statement
    finally:
        engine.teardown(handle)


def test_teardown_stops_a_worker_left_behind(
    make_cells: Callable[..., list[Any]], scratch_dir: Path, leak_check: Callable[[], list[str]]
) -> None:
    """A workload task killed mid-session never closes its worker; teardown must stop it."""
    (cell,) = make_cells("sqlite_jsonb", engines=["sqlite-3.54.1"])
    engine = engine_for(cell)
    workdir = cell.identity.workdir()
    handle = engine.provision()
    orphan = SqliteSession(handle.python, handle.workdir)
    assert orphan.scalar("SELECT 1") == 1
    proc = orphan._proc
    assert proc is not None and any(str(workdir) in line for line in leak_check(wait_s=0))
    engine.teardown(engine.handle_for())  # the handle a sweep would rebuild
    proc.wait(timeout=10)
    assert not workdir.exists()
    assert leak_check() == []


def test_version_without_jsonb_is_refused_naming_the_field(make_cells: Callable[..., list[Any]]) -> None:
    m = matrix_with(**{"sqlite-3.44.0": sqlite_engine("3.44.0", "apsw==3.44.0.0")})
    (cell,) = make_cells("sqlite_jsonb", engines=["sqlite-3.44.0"], matrix=m)
    with pytest.raises(ConfigError) as err:
        engine_for(cell).check()
    assert err.value.field == "engines"
    assert "3.44.0" in str(err.value) and "JSONB" in str(err.value) and "3.45.0" in str(err.value)
    # Nothing in the default matrix is refused.
    for eid, version, package in sqlite_venvs.sqlite_engines():
        check_versions(eid, version, package)


@pytest.mark.parametrize(
    ("version", "package", "words"),
    [
        ("3.45.0", "apsw==3.46.1.0", "does not embed SQLite 3.45.0"),
        ("3.46.1", "apsw>=3.46", "exact apsw"),
        ("3.46", "apsw==3.46.0.0", "must look like"),
    ],
)
def test_bad_pins_are_refused_before_anything_starts(version: str, package: str, words: str, make_cells: Callable[..., list[Any]]) -> None:
    m = matrix_with(**{"sqlite-bad": sqlite_engine(version, package)})
    (cell,) = make_cells("sqlite_jsonb", engines=["sqlite-bad"], matrix=m)
    with pytest.raises(ConfigError, match=words) as err:
        engine_for(cell).check()
    assert err.value.field == "engines"


def _local_index(root: Path, versions: list[str]) -> str:
    """A PEP 503 package index in a folder that lists apsw ``versions`` (wheels pip may choose from, never downloaded here)."""
    project = root / "simple" / "apsw"
    project.mkdir(parents=True)
    links = "".join(f'<a href="apsw-{v}-py3-none-any.whl">apsw-{v}-py3-none-any.whl</a>\n' for v in versions)
    (project / "index.html").write_text(f"<!DOCTYPE html><html><body>\n{links}</body></html>\n")
    return (root / "simple").as_uri()


def test_uninstallable_version_fails_its_own_cell_only(
    make_cells: Callable[..., list[Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, leak_check: Callable[[], list[str]]
) -> None:
    """A pin that passes validation but has no build (no such apsw release): setup records pip's words, that cell fails saying them.

    pip asks a local index (a folder) that lists other apsw releases but not this one, so the failure is
    the one this test is about, the missing release, and never an unreachable network: pip's message
    must list the releases it saw.
    """
    m = matrix_with(**{"sqlite-bogus": sqlite_engine("3.46.1", "apsw==3.46.1.99")})
    cells = make_cells("sqlite_jsonb", engines=["sqlite-bogus", "sqlite-3.46.1"], matrix=m)
    bogus, good = sorted(cells, key=lambda c: c.engine_id != "sqlite-bogus")
    for cell in cells:
        engine_for(cell).check()  # both pass the plan task's checks

    only_bogus = copy.deepcopy(m.raw)
    only_bogus["engines"] = {"sqlite-bogus": only_bogus["engines"]["sqlite-bogus"]}
    with monkeypatch.context() as mp:
        mp.setenv("JSONBENCH_SQLITE_VENVS", str(tmp_path / "venvs"))
        mp.setenv("PIP_CONFIG_FILE", "/dev/null")  # no machine-wide index, links or constraints
        for var in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX", "PIP_CONSTRAINT"):
            mp.delenv(var, raising=False)
        mp.setenv("PIP_INDEX_URL", _local_index(tmp_path / "index", ["3.46.0.0", "3.46.1.0"]))
        assert sqlite_venvs.install_all(Matrix(only_bogus)) == ["sqlite-bogus"]  # setup reports it and goes on
        with pytest.raises(EngineUnavailable) as err:
            tasks.provision(planned_of(bogus), bogus.cell_id)
    message = str(err.value)
    assert "SQLite 3.46.1" in message and "apsw==3.46.1.99" in message and "could not install" in message
    assert "from versions: 3.46.0.0, 3.46.1.0" in message, message  # pip read the index: the pin is what is missing
    assert "No matching distribution found for apsw==3.46.1.99" in message
    assert not bogus.identity.workdir().exists()
    assert not (tmp_path / "venvs" / "3.46.1" / "apsw-3.46.1.99").exists()  # no half-made venv left to trust

    handle = tasks.provision(planned_of(good), good.cell_id)  # the other cell of the same run is unaffected
    try:
        result = tasks.run_workload(planned_of(good), good.cell_id, handle, "keys_10")
        assert result["measurements"] > 0
    finally:
        tasks.teardown(planned_of(good), good.cell_id, handle)
    assert leak_check() == []


def test_install_all_is_idempotent_and_starts_nothing_when_present(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert sqlite_venvs.install_all() == []
    capsys.readouterr()

    def no_subprocess(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"install_all started a process although every venv exists: {args}")

    monkeypatch.setattr(subprocess, "run", no_subprocess)
    monkeypatch.setattr(subprocess, "Popen", no_subprocess)
    assert sqlite_venvs.install_all() == []
    out = capsys.readouterr().out
    for eid in VERSIONS:
        assert f"{eid}: " in out and "ready" in out


def test_the_fingerprint_follows_the_rows_not_their_order(make_cells: Callable[..., list[Any]], scratch_dir: Path) -> None:
    (cell,) = make_cells("sqlite_jsonb", engines=["sqlite-3.46.1"])
    engine = engine_for(cell)
    handle = engine.provision()
    try:
        with engine.session(handle) as s:
            s.execute("CREATE TABLE t (k INTEGER, doc BLOB); INSERT INTO t VALUES (1, jsonb('{\"a\": 1}')), (2, jsonb('{\"a\": 2}'))")
            one = s.fingerprint()
            s.execute("DELETE FROM t; INSERT INTO t VALUES (2, jsonb('{\"a\": 2}')), (1, jsonb('{\"a\": 1}'))")
            assert s.fingerprint() == one, "the same rows in another order"
            s.execute("UPDATE t SET doc = jsonb('{\"a\": 3}') WHERE k = 2")
            assert s.fingerprint() != one, "one changed value"
    finally:
        engine.teardown(handle)
