"""The host lease, quiet-window sampling and the plan's cost table: the pieces that keep numbers honest."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jsonbench.dataset.publish import worst_window
from jsonbench.host import lease as hostlease
from jsonbench.host import load as hostload
from jsonbench.orchestration import costs, tasks
from jsonbench.suites.base import CellCost


@pytest.fixture
def lease_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("JSONBENCH_HOST_LOCK_DIR", str(tmp_path / "lease"))
    return tmp_path / "lease"


def test_lease_is_exclusive_between_runs_and_reentrant_for_one_cell(lease_dir: Path, tmp_path: Path) -> None:
    work = tmp_path / "engine-a"
    work.mkdir()
    held = hostlease.acquire("run_a", "cell_1", work)
    assert hostlease.acquire("run_a", "cell_1", work).run_id == "run_a"  # a retry of the same provision
    with pytest.raises(hostlease.HostBusy, match=r"cell_1 of run run_a holds it since .*engine folder .*engine-a") as err:
        hostlease.acquire("run_b", "cell_1", tmp_path / "engine-b")
    assert err.value.holder == hostlease.holder()
    assert not hostlease.release("run_b", "cell_1")  # nobody releases another's lease
    assert hostlease.release("run_a", "cell_1") and hostlease.holder() is None
    assert hostlease.acquire("run_b", "cell_1", tmp_path / "engine-b").run_id == "run_b"
    assert held.pid == os.getpid()


def test_stale_lease_of_a_vanished_engine_is_taken_over_but_a_live_one_never(
    lease_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    alive = tmp_path / "alive"
    alive.mkdir()
    hostlease.acquire("run_a", "c", alive)
    monkeypatch.setattr(hostlease, "GRACE_S", 0.0)
    time.sleep(0.01)
    with pytest.raises(hostlease.HostBusy):
        hostlease.acquire("run_b", "c", tmp_path / "b")  # the engine folder is there: the holder may be measuring
    alive.rmdir()
    assert hostlease.acquire("run_b", "c", tmp_path / "b").run_id == "run_b"  # folder gone: nobody is left


def test_sweep_gives_back_a_lease_its_run_still_holds(lease_dir: Path, tmp_path: Path) -> None:
    hostlease.acquire("run_a", "c", tmp_path)
    assert hostlease.release_run("run_b") is None and hostlease.holder() is not None
    assert hostlease.release_run("run_a").cell_id == "c" and hostlease.holder() is None


def test_waiting_is_remembered_so_it_can_be_bounded(lease_dir: Path) -> None:
    assert hostlease.waited_s("r", "c") == 0.0
    time.sleep(0.05)
    assert hostlease.waited_s("r", "c") >= 0.05
    hostlease.stop_waiting("r", "c")
    assert hostlease.waited_s("r", "c") == 0.0


def _burner(seconds: float) -> int:
    """A CPU-bound process that is *not* ours (double-forked: its parent is init), as another user's job would be."""
    code = f"import time; t=time.time()\nwhile time.time()-t<{seconds}: pass"
    out = subprocess.run(
        ["sh", "-c", f"{sys.executable} -c '{code}' > /dev/null 2>&1 & echo $!"], capture_output=True, text=True, check=True
    )
    return int(out.stdout.strip())


def _proc(ppid: int, cpu_ms: float, reaped_ms: float = 0.0, kernel: bool = False) -> hostload.Proc:
    return hostload.Proc(ppid, kernel, int(cpu_ms * 1e6), int(reaped_ms * 1e6))


def test_window_arithmetic_counts_strangers_in_nanoseconds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake process tables at both ends of a window: only strangers count, over the window's span times the cores."""
    me = os.getpid()
    before = {
        1: _proc(0, 1000.0),
        2: _proc(0, 0.0, kernel=True),
        50: _proc(2, 0.0, kernel=True),  # a kworker
        10: _proc(1, 500.0),  # an ancestor of ours (our parent)
        me: _proc(10, 100.0),
        20: _proc(1, 300.0),  # the engine's postmaster ...
        21: _proc(20, 40.0),  # ... and a backend
        30: _proc(1, 700.0, reaped_ms=100.0),  # a stranger
        31: _proc(30, 60.0),  # its child, which exits during the window
    }
    after = {
        1: _proc(0, 1000.0),
        2: _proc(0, 0.0, kernel=True),
        50: _proc(2, 0.0, kernel=True),
        10: _proc(1, 530.0),
        me: _proc(10, 150.0),
        20: _proc(1, 310.0),
        21: _proc(20, 90.0),
        30: _proc(1, 704.0, reaped_ms=100.0 + 62.0),  # the child's whole life (62 ms) lands in cutime at once
        40: _proc(1, 3.0),  # a stranger born inside the window
        41: _proc(me, 25.0),  # our own child (pgbench), born inside the window
    }
    tables = iter([before, after])
    monkeypatch.setattr(hostload, "process_table", lambda: next(tables))
    monkeypatch.setattr(hostload, "host_times", lambda: (0.0, 0.0, 0.0))
    clock = iter([100.0, 100.0, 100.01, 100.01])  # read at, window start, window end, read done: 10 ms on 2 cores
    monkeypatch.setattr(hostload.time, "monotonic", lambda: next(clock))
    monkeypatch.setattr(hostload.os, "sched_getaffinity", lambda _pid: {0, 1})
    sampler = hostload.WindowSampler(lambda: [20, 21], max_other_cpu=0.10, max_steal=0.05)
    sampler.start()
    load = sampler.stop()
    # Strangers: 4 ms (30's own) + 2 ms (its child inside the window: 62 - 60) + 3 ms (40) = 9 ms of 20 ms.
    assert sampler.last_others == {30: 6_000_000, 40: 3_000_000}
    assert load.other_cpu == pytest.approx(0.45) and load.quiet is False
    assert load.seconds == pytest.approx(0.01)
    # ... and says who: the busiest first, each with its pid and milliseconds (names from /proc, whatever they are here)
    assert load.busiest is not None and load.busiest.index("(30) 6 ms") < load.busiest.index("(40) 3 ms")


def test_a_process_is_named_by_its_command_line() -> None:
    """The name a disturbed window gives: a command's first two words, a Python interpreter's script or module in its
    place (``-c`` kept), the table's comm for a process gone."""
    kids = [subprocess.Popen(cmd) for cmd in (["sleep", "30"], [sys.executable, "-c", "import time; time.sleep(30)"])]
    try:
        time.sleep(0.2)
        assert hostload.process_name(kids[0].pid, {}) == "sleep 30"
        assert hostload.process_name(kids[1].pid, {}).startswith("python") and hostload.process_name(kids[1].pid, {}).endswith(" -c")
    finally:
        for k in kids:
            k.kill()
            k.wait()
    assert hostload.process_name(2**22 + 7, {2**22 + 7: hostload.Proc(1, False, 0, 0, "pg_dump")}) == "pg_dump"  # gone: the table's comm
    assert hostload.process_name(2**22 + 7, {}) == "?"


def test_a_window_with_only_ours_and_kernel_work_is_quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    me = os.getpid()
    before = {10: _proc(1, 500.0), me: _proc(10, 100.0), 20: _proc(1, 300.0), 2: _proc(0, 0.0, kernel=True)}
    after = {10: _proc(1, 505.0), me: _proc(10, 110.0), 20: _proc(1, 320.0), 2: _proc(0, 0.0, kernel=True), 60: _proc(2, 0.0, kernel=True)}
    tables = iter([before, after])
    monkeypatch.setattr(hostload, "process_table", lambda: next(tables))
    monkeypatch.setattr(hostload, "host_times", lambda: (0.0, 0.0, 0.0))
    load = hostload.WindowSampler(lambda: [20], max_other_cpu=0.10, max_steal=0.05)
    load.start()
    assert load.stop().other_cpu == 0.0


def test_ancestors_stop_at_init_and_descendants_follow_parents() -> None:
    table = {1: _proc(0, 0), 5: _proc(1, 0), 6: _proc(5, 0), 7: _proc(6, 0), 8: _proc(7, 0), 9: _proc(1, 0)}
    assert hostload.ancestors_of(7, table) == [6, 5]
    assert hostload.descendants_in([6], table) == {6, 7, 8}


def test_the_process_table_reads_this_process_in_nanoseconds() -> None:
    """Deterministic facts of /proc: this process is there with its parent, is no kernel thread, has used CPU; kthreadd is a kernel thread."""
    table = hostload.process_table()
    me = table[os.getpid()]
    assert me.ppid == os.getppid() and not me.kernel and me.cpu_ns > 0
    if 2 in table:
        assert table[2].kernel


def test_a_strangers_cpu_counts_as_other_load_and_the_engines_does_not() -> None:
    """Real processes, real /proc, whatever else the machine is doing: two samplers over nested windows, one told
    the burner is the engine. The stranger's sampler charges the burner's own CPU to "other", the engine's does not.

    Compared in CPU nanoseconds, not in the fractions: a fraction is clipped at 1.0, and on a busy machine (a
    parallel test worker reaping a server's whole life) both samplers may read 1.0 whoever the burner is.
    """
    pid = _burner(2.0)
    try:
        as_engine = hostload.WindowSampler(lambda: [pid], max_other_cpu=0.10, max_steal=0.05)
        as_stranger = hostload.WindowSampler(lambda: [], max_other_cpu=0.10, max_steal=0.05)
        t0 = time.monotonic()
        burned0 = hostload.cpu_seconds_of([pid])
        as_engine.start()
        as_stranger.start()
        time.sleep(1.0)
        stranger = as_stranger.stop()
        engine = as_engine.stop()
        burned = hostload.cpu_seconds_of([pid]) - burned0
        wall = time.monotonic() - t0
    finally:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
    assert burned > 0.05, "the burner never ran"
    assert stranger.other_cpu is not None and engine.other_cpu is not None
    assert pid not in as_engine.last_others, "the engine's own CPU was charged as other load"
    charged = as_stranger.last_others.get(pid, 0) / 1e9
    # What the stranger's sampler charged spans its whole window and lies inside what was burned; the rest was
    # burned in the wall time outside its window, by one thread at most. 0.02 s: the tick counters' resolution.
    outside = wall - stranger.seconds
    assert burned - outside - 0.02 <= charged <= burned + 0.02, (charged, burned, outside)
    capacity = stranger.seconds * len(os.sched_getaffinity(0))
    assert stranger.other_cpu >= min(charged / capacity, 1.0) - 0.02  # the fraction carries it, up to the clip


def test_worst_window_decides_the_row() -> None:
    calm = hostload.WindowLoad(1.0, 0.01, 0.0, 0.5, True)
    busy = hostload.WindowLoad(1.0, 0.4, 0.0, 3.0, False)
    assert worst_window([calm.to_json(), busy.to_json()]) == {"host_other_cpu": 0.4, "host_steal": 0.0, "host_load_1m": 3.0, "quiet": False}
    assert worst_window([calm.to_json()])["quiet"] is True
    assert worst_window([hostload.WindowLoad(1.0, None, None, None, None).to_json()])["quiet"] is None  # not measured is not quiet
    assert worst_window([]) == {"host_other_cpu": None, "host_steal": None, "host_load_1m": None, "quiet": None}  # no window


def test_cost_table_refuses_what_cannot_fit_and_names_the_cell() -> None:
    fits = costs.RunCost({"a__x": CellCost(10, 100, 100, 60)}, free_disk_bytes=1000, available_memory_bytes=1000, scratch="/scratch")
    costs.refuse_if_too_big(fits)
    assert "expected duration 1m00s" in costs.describe(fits)
    disk = costs.RunCost({"a__x": CellCost(10, 950, 100, 60)}, free_disk_bytes=1000, available_memory_bytes=1000, scratch="/scratch")
    with pytest.raises(costs.RunTooBig, match=r"a__x needs about 950 B of disk .* /scratch has 1,000 B free"):
        costs.refuse_if_too_big(disk)
    mem = costs.RunCost({"a__x": CellCost(10, 10, 5000, 60)}, free_disk_bytes=1000, available_memory_bytes=1000, scratch="/scratch")
    with pytest.raises(costs.RunTooBig, match=r"a__x needs about 4.9 kB of memory"):
        costs.refuse_if_too_big(mem)


def test_outcome_fails_a_run_with_any_failed_task_and_alerts_once() -> None:
    planned = {"run": {"run_id": "r", "logical_date": None, "hardware_label": "h", "results_dir": "/tmp/x", "scale": "smoke"}, "cells": []}
    assert tasks.outcome(planned, "r", {"plan": "success", "a.provision": "skipped", "publish": "success"})["failed_tasks"] == []
    with pytest.raises(tasks.RunFailed) as err:
        tasks.outcome(planned, "r", {"plan": "success", "a.rel_small": "failed", "publish": "failed", "check": "upstream_failed"})
    assert err.value.summary["failed_tasks"] == ["a.rel_small", "check", "publish"] and not err.value.summary["already_alerted"]
    with pytest.raises(tasks.RunFailed) as err:
        tasks.outcome(planned, "r", {"plan": "success", "publish": "success", "check": "failed"})
    assert err.value.summary["already_alerted"]  # the check task alerted; the run fails without a second alert
    with pytest.raises(tasks.RunFailed) as err:
        tasks.outcome(None, "r", {"plan": "failed"})
    assert err.value.summary["failed_tasks"] == ["plan"]
    json.dumps(err.value.summary)  # what the alert writes
