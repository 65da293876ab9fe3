"""The catalogue's WAL per update counts the updates' own WAL, not another process's (real PostgreSQL 16 and 18).

In one recorded night, one repetition of 17's one-client fixed-count run read 343.46 bytes of records per update
where every run of every host read 327.91-327.93, with the same updates and HOT counts; another process had written
about 35 full-page images and 66 kB of records in the run's range. Here the same update run is measured twice on a
real server, once alone and once with another session writing a few hundred kB to another table inside its range:
the insert position's move differs by that much, the WAL told apart by pg_walinspect does not. No timing is asserted.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from jsonbench.engines.base import engine_for
from jsonbench.orchestration import tasks
from jsonbench.suites.catalogue.helpers import wal_of_updates
from tests.conftest import planned_of

UPDATES = 400


def _run(s: Any, table: str, other: Any | None) -> tuple[float, float, float]:
    """CHECKPOINT, ``UPDATES`` one-row updates of ``table`` (each its own transaction), and with ``other`` a session that
    writes to another table in the same range; returns the range's raw WAL, and the WAL and image share told apart."""
    s.execute(f"DROP TABLE IF EXISTS {table}")
    s.execute(f"CREATE TABLE {table} (id int PRIMARY KEY, v int, pad text) WITH (fillfactor = 80, autovacuum_enabled = off)")
    s.execute(f"INSERT INTO {table} SELECT g, 0, repeat('x', 200) FROM generate_series(1, 2000) AS g")
    s.checkpoint()
    start = s.insert_lsn()
    for i in range(UPDATES):
        s.execute(f"UPDATE {table} SET v = v + 1 WHERE id = %s", ((i * 37) % 2000 + 1,))
        if other is not None and i == UPDATES // 2:
            other.execute("INSERT INTO foreign_writes SELECT g, repeat('y', 500) FROM generate_series(1, 600) AS g")
    end = s.insert_lsn()
    raw = float(s.wal_bytes_between(start, end))
    wal, share = wal_of_updates(SimpleNamespace(session=s), table, start, end, raw)
    return raw, wal, share


@pytest.mark.parametrize("engine", ["postgres-16", "postgres-18"])
def test_another_process_wal_in_the_range_is_left_out(make_cells: Callable[..., list[Any]], engine: str) -> None:
    (cell,) = make_cells("catalogue", engines=[engine], run_id=f"wal_own_{engine}")
    handle = tasks.provision(planned_of(cell), cell.cell_id)
    try:
        eng = engine_for(cell)
        with eng.session(eng.load_handle(handle)) as s, eng.session(eng.load_handle(handle)) as other:
            assert s.capabilities.get("pg_walinspect"), "the embedded builds ship pg_walinspect"
            other.execute("CREATE TABLE foreign_writes (id int, pad text)")
            alone_raw, alone, alone_share = _run(s, "upd_alone", None)
            mixed_raw, mixed, mixed_share = _run(s, "upd_mixed", other)
    finally:
        tasks.teardown(planned_of(cell), cell.cell_id, handle)
    assert mixed_raw > alone_raw + 250_000, "the other session's rows are in the range"
    # Alone, what is left out is a background record or two; with the other session, exactly its WAL.
    assert alone == pytest.approx(alone_raw, rel=0.002)
    assert mixed == pytest.approx(alone, rel=0.01), (alone_raw, alone, mixed_raw, mixed)
    assert mixed_share == pytest.approx(alone_share, abs=0.01) and 0 < alone_share < 1
