"""kill -9 of a PostgreSQL postmaster while a statement runs: teardown and the sweep leave no process and no shared memory.

A backend busy computing does not notice its postmaster's death until its next wait, so it runs on,
re-parented, under a command line that names no folder; the postmaster's SysV segment stays until
removed. These tests kill a real postmaster in the middle of a real statement and check, with the
session's leak check (processes by token and working folder, segments by id), that the driver's
teardown and sweep remove all of it.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from jsonbench.engines.postgres_ipc import processes_in, segments
from jsonbench.orchestration import tasks
from tests.conftest import planned_of

BUSY = "SELECT count(*) FROM generate_series(1, 20000000000)"  # minutes of CPU: still running when killed


def _start_busy(handle: dict[str, Any]) -> tuple[psycopg.Connection, threading.Thread, int]:
    conn = psycopg.connect(host=handle["socket_dir"], port=handle["port"], user="bench", dbname="bench", autocommit=True)
    pid = conn.info.backend_pid

    def run() -> None:
        try:
            conn.execute(BUSY)
        except psycopg.Error:
            pass

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    deadline = time.monotonic() + 60
    with psycopg.connect(host=handle["socket_dir"], port=handle["port"], user="bench", dbname="bench", autocommit=True) as probe:
        query = "SELECT 1 FROM pg_stat_activity WHERE pid = %s AND state = 'active' AND query = %s"
        while not probe.execute(query, (pid, BUSY)).fetchall():
            assert time.monotonic() < deadline, "the statement never started"
            time.sleep(0.05)
    return conn, worker, pid


def _lock_file_segment(handle: dict[str, Any]) -> int:
    return int((Path(handle["datadir"]) / "postmaster.pid").read_text().splitlines()[6].split()[1])


def _live(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("how", ["teardown", "sweep", "sweep_without_shm_line"])
def test_kill_9_mid_statement_then_teardown_or_sweep_leaves_nothing(how: str, make_cells: Any, leak_check: Any) -> None:
    cell = make_cells("large_document_update", ["postgres-17"], run_id=f"kill_{how}")[0]
    planned = planned_of(cell)
    handle = tasks.provision(planned, cell.cell_id)
    conn = None
    try:
        shmid = _lock_file_segment(handle)
        conn, worker, backend = _start_busy(handle)
        os.kill(handle["pid"], signal.SIGKILL)
        deadline = time.monotonic() + 30
        while _live(handle["pid"]):  # the postmaster gone (a zombie until reaped counts as gone)
            assert time.monotonic() < deadline, "the killed postmaster is still running"
            time.sleep(0.01)
        assert _live(backend), "the busy backend outlives its postmaster: what teardown must kill"
        assert any(s.shmid == shmid for s in segments()), "the segment outlives its postmaster: what teardown must remove"
        if how == "sweep_without_shm_line":
            pid_file = Path(handle["datadir"]) / "postmaster.pid"
            pid_file.write_text(pid_file.read_text().splitlines()[0] + "\n")  # a lock file that no longer names the segment
        if how == "teardown":
            tasks.teardown(planned, cell.cell_id, handle)
        else:
            assert tasks.sweep(planned) == [cell.cell_id]  # no handle: the sweep rebuilds it from the folder
    finally:
        if conn is not None:
            conn.close()
    assert not _live(backend)
    assert not any(s.shmid == shmid for s in segments())
    assert not Path(handle["workdir"]).exists()
    assert leak_check() == []


def test_only_this_clusters_processes_are_killed(make_cells: Any, leak_check: Any, tmp_path: Path) -> None:
    """Another cluster's processes (a second server of this session) are untouched by the first one's clean-up."""
    a, b = make_cells("large_document_update", ["postgres-16", "postgres-17"], run_id="two_clusters")
    pa, pb = planned_of(a, b), planned_of(a, b)
    ha = tasks.provision(pa, a.cell_id)
    hb = None
    try:
        from jsonbench.host import lease as hostlease

        hostlease.release(a.run.run_id, a.cell_id)  # two servers at once, on purpose, for this test only
        hb = tasks.provision(pb, b.cell_id)
        os.kill(ha["pid"], signal.SIGKILL)
        tasks.teardown(pa, a.cell_id, ha)
        assert processes_in(Path(hb["datadir"])), "the other cluster still runs"
        with psycopg.connect(host=hb["socket_dir"], port=hb["port"], user="bench", dbname="bench") as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        if hb is not None:
            tasks.teardown(pb, b.cell_id, hb)
        tasks.teardown(pa, a.cell_id, ha)
    assert leak_check() == []
