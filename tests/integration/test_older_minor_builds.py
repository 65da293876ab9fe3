"""The older minor build of each major starts like the newest: initdb, start, its own version, stop, nothing left.

These builds are fetched by ``./bin/setup --builds`` (``--dev`` too, so ``./bin/test`` has them); without them the
test is skipped naming the command, which under CI counts as a failure (tests/conftest.py).
"""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from jsonbench.engines.base import engine_for

#: Each older minor engine and the release its server must report.
OLDER = {"postgres-16.13": "16.13", "postgres-17.9": "17.9", "postgres-18.3": "18.3"}


@pytest.mark.parametrize("engine_id", sorted(OLDER))
def test_older_minor_build_starts_reports_its_release_and_leaves_nothing(engine_id: str, make_cells, leak_check, scratch_dir: Path) -> None:
    cell = make_cells("large_document_update", [engine_id])[0]
    engine = engine_for(cell)
    npm = engine.npm
    assert npm is not None, f"{engine_id} names no npm build"
    if not npm.fetched():
        pytest.skip(f"{engine_id}'s build {npm.alias} is not fetched: run {npm.fetch_command}")
    engine.check()
    handle = engine.provision()
    try:
        with psycopg.connect(host=handle.socket_dir, port=handle.port, user="bench", dbname="bench") as conn:
            version = conn.execute("SELECT version()").fetchone()[0]
        assert version.startswith(f"PostgreSQL {OLDER[engine_id]} "), version
        facts = engine.facts(handle)
        assert facts["version"] == OLDER[engine_id]
        assert facts["build"] == f"npm {npm.pinned()['name']}@{npm.pinned()['version']}"
        assert leak_check(wait_s=0), "the server should be running"
    finally:
        engine.teardown(handle)
    assert leak_check() == []
    assert not Path(handle.workdir).exists()
