"""The leak check sees what a run leaves behind even when nothing names the scratch folder any more.

Each case makes a real leftover, asserts the session's tracker lists it, then has the tracker remove
it (so the test itself leaves nothing).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psycopg

from jsonbench.engines.base import engine_for

LABEL = "io.jsonbench.managed"


def _kinds(tracker: Any) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for leak in tracker.leaks():
        out.setdefault(leak.kind, []).append(leak)
    return out


def test_a_killed_postmasters_orphans_and_shared_memory_are_seen(make_cells: Any, leak_tracker: Any) -> None:
    """kill -9 of a postmaster while a backend computes, then its data folder removed (all a naive teardown does): the backend
    (renamed "postgres: bench bench ... DO", re-parented, working in a deleted folder) and the SysV segment stay; the
    tracker lists both though nothing names the scratch folder any more."""
    cell = make_cells("large_document_update", ["postgres-17"], run_id="leak_probe")[0]
    engine = engine_for(cell)
    handle = engine.provision()
    pid_file = Path(handle.datadir) / "postmaster.pid"
    shmid = pid_file.read_text().splitlines()[6].split()[1]
    busy = psycopg.connect(host=handle.socket_dir, port=handle.port, user="bench", dbname="bench", autocommit=True)
    # A loop that never touches the disk: a statement that spills (generate_series into a tuplestore) fails once its
    # folder is removed, and the backend then meets the postmaster's death at its next wait and exits before the census
    # looks (a race the check cannot win). Pure computation runs on, orphaned, until the reaper kills it.
    spin = "DO $$ BEGIN LOOP PERFORM 1; END LOOP; END $$"
    worker = threading.Thread(target=lambda: _swallow(busy.execute, spin), daemon=True)
    backend_pid = busy.info.backend_pid
    try:
        worker.start()
        deadline = time.monotonic() + 60
        with psycopg.connect(host=handle.socket_dir, port=handle.port, user="bench", dbname="bench", autocommit=True) as probe:
            while not probe.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s AND state = 'active'", (backend_pid,)).fetchall():
                assert time.monotonic() < deadline, "the busy statement never started"
                time.sleep(0.1)
        leak_tracker.sample()  # what the background sampler does every half second
        os.kill(handle.pid, signal.SIGKILL)
        # A teardown that only removes the folder (again, as a teardown racing the dying server would).
        for _ in range(50):
            shutil.rmtree(handle.workdir, ignore_errors=True)
            if not Path(handle.workdir).exists():
                break
            time.sleep(0.1)
        assert not Path(handle.workdir).exists()
        found = _kinds(leak_tracker)
        procs = {int(leak.key.split(":")[0]): leak.text for leak in found.get("process", [])}
        assert backend_pid in procs, found
        assert str(leak_tracker.scratch) not in Path(f"/proc/{backend_pid}/cmdline").read_text(), "its command line names no folder"
        assert "(deleted)" in procs[backend_pid]  # its working folder is gone too
        assert any(leak.key == shmid for leak in found.get("shm", [])), found
    finally:
        problems = leak_tracker.reap(leak_tracker.leaks())
        _swallow(busy.close)
    assert problems == []
    assert _kinds(leak_tracker) == {}
    assert f" {shmid} " not in Path("/proc/sysvipc/shm").read_text()


def _swallow(fn: Any, *args: Any) -> None:
    try:
        fn(*args)
    except Exception:
        pass


def test_a_renamed_process_outside_the_scratch_folder_is_seen_by_its_token(leak_tracker: Any, tmp_path: Path) -> None:
    proc = subprocess.Popen(["bash", "-c", 'exec -a "postgres: checkpointer" sleep 600'], cwd=tmp_path)
    try:
        time.sleep(0.2)
        texts = [leak.text for leak in _kinds(leak_tracker).get("process", [])]
        assert any(f"process {proc.pid} " in t and "postgres: checkpointer" in t for t in texts), texts
    finally:
        leak_tracker.reap([leak for leak in leak_tracker.leaks() if leak.kind == "process"])
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL


def test_a_process_without_the_token_is_seen_by_its_working_folder(leak_tracker: Any, scratch_dir: Path) -> None:
    work = scratch_dir / "no-token"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "JSONBENCH_TEST_SESSION"}
    proc = subprocess.Popen(["sleep", "600"], cwd=work, env=env)
    try:
        time.sleep(0.2)
        found = _kinds(leak_tracker)
        assert any(f"process {proc.pid} " in leak.text for leak in found.get("process", [])), found
        assert [leak.key for leak in found["scratch"]] == [str(work)]
    finally:
        leak_tracker.reap(leak_tracker.leaks())
        proc.wait(timeout=30)
    assert not work.exists() and _kinds(leak_tracker) == {}


def test_sockets_in_the_scratch_folder_are_seen(leak_tracker: Any, scratch_dir: Path) -> None:
    path = scratch_dir / ".s.PGSQL.5432"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))
        s.listen()
        found = _kinds(leak_tracker)
        assert [leak.key for leak in found["socket"]] == [str(path)]
    leak_tracker.reap(leak_tracker.leaks())
    assert _kinds(leak_tracker) == {}


# A process outside the session that makes a SysV segment (as another session's postmaster does), prints its id, then
# stays (argv[1] == "stay") or exits leaving the segment.
_MAKE_SEGMENT = """
import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
shmid = libc.shmget(0, 4096, 0o1000 | 0o600)  # IPC_PRIVATE, IPC_CREAT
print(shmid, flush=True)
if sys.argv[1] == "stay":
    time.sleep(600)
"""


def _foreign_segment(tmp_path: Path, stay: bool) -> tuple[subprocess.Popen[str], str]:
    env = {k: v for k, v in os.environ.items() if k != "JSONBENCH_TEST_SESSION"}
    proc = subprocess.Popen(
        [sys.executable, "-c", _MAKE_SEGMENT, "stay" if stay else "exit"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert proc.stdout is not None
    shmid = proc.stdout.readline().strip()
    assert shmid.isdigit() and int(shmid) >= 0, shmid
    return proc, shmid


def _segment(shmid: str) -> dict[str, str]:
    lines = Path("/proc/sysvipc/shm").read_text().splitlines()
    header = lines[0].split()
    (seg,) = [dict(zip(header, line.split(), strict=False)) for line in lines[1:] if line.split()[1] == shmid]
    return seg


def test_a_reused_pid_does_not_make_another_sessions_segment_ours(leak_tracker: Any, tmp_path: Path) -> None:
    """A server of another session can make a segment under a pid this session used earlier; the check must not count
    it as this session's (and remove it). A creator is known by pid and start time; a dead creator's segment is
    ours only when it was made while our process of that pid lived."""
    from tests.leakcheck import _proc, _start_epoch

    live, live_id = _foreign_segment(tmp_path, stay=True)
    dead, dead_id = _foreign_segment(tmp_path, stay=False)
    dead.wait(timeout=30)
    planted: list[tuple[int, int]] = []
    try:
        me = _proc(live.pid)
        assert me is not None
        listed = lambda: {seg["shmid"] for seg in leak_tracker.segments()}  # noqa: E731
        assert not {live_id, dead_id} & listed(), "a foreign process's segment is not ours"
        # The live creator's pid was once ours, an earlier process (an earlier start): not ours.
        planted.append((live.pid, me.start - 100))
        leak_tracker.seen_procs[planted[-1]] = time.time()
        assert live_id not in listed()
        # The very process, seen by the sampler: ours (the path a kill -9 race relies on).
        planted.append((live.pid, me.start))
        leak_tracker.seen_procs[planted[-1]] = time.time()
        assert live_id in listed()
        # The dead creator's pid was ours too, but that process was last seen a minute before the segment was made.
        ctime = int(_segment(dead_id)["ctime"])
        gone = (dead.pid, 1)
        planted.append(gone)
        leak_tracker.seen_procs[gone] = ctime - 60.0
        assert _start_epoch(1) < ctime - 60
        assert dead_id not in listed()
        # Seen alive when the segment was made: ours.
        leak_tracker.seen_procs[gone] = float(ctime)
        assert dead_id in listed()
    finally:
        for key in planted:
            leak_tracker.seen_procs.pop(key, None)
        live.kill()
        live.wait(timeout=30)
        subprocess.run(["ipcrm", "-m", live_id], capture_output=True)
        subprocess.run(["ipcrm", "-m", dead_id], capture_output=True)
    assert not {live_id, dead_id} & {seg["shmid"] for seg in leak_tracker.segments()}
