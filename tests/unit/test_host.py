"""The host lease, quiet-window sampling and the plan's cost table: the pieces that keep numbers honest."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

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


def test_window_arithmetic(monkeypatch: pytest.MonkeyPatch) -> None:
    """Busy time of the host minus the engine's and the harness's, over the window's capacity (readings injected)."""
    readings = iter([(100.0, 1.0, 1000.0), (103.0, 1.2, 1004.0)])  # (busy, steal, total) seconds since boot: 4 s of 2 cores
    monkeypatch.setattr(hostload, "host_times", lambda: next(readings))
    engine = iter([5.0, 6.5])
    harness = iter([10.0, 10.5])
    monkeypatch.setattr(hostload, "harness_cpu_seconds", lambda exclude: next(harness))
    sampler = hostload.WindowSampler(lambda: next(engine), lambda: [], max_other_cpu=0.10, max_steal=0.05)
    sampler.start()
    load = sampler.stop()
    # 3 s busy - 1.5 s engine - 0.5 s harness = 1 s of others over 4 s of capacity; 0.2 s stolen.
    assert load.other_cpu == pytest.approx(0.25) and load.steal == pytest.approx(0.05)
    assert load.quiet is False  # 25 % of the machine to others is a disturbed window


def test_a_strangers_cpu_counts_as_other_load_and_the_engines_does_not() -> None:
    """Real processes, real /proc, whatever else the machine is doing: two samplers over the very same window, one
    told the burner is the engine; their difference is the burner's own CPU, so the accounting cannot be fooled by load."""
    pid = _burner(2.0)
    try:
        as_engine = hostload.WindowSampler(lambda: hostload.cpu_seconds_of([pid]), lambda: [pid], max_other_cpu=0.10, max_steal=0.05)
        as_stranger = hostload.WindowSampler(lambda: None, lambda: [], max_other_cpu=0.10, max_steal=0.05)
        burned0 = hostload.cpu_seconds_of([pid])
        as_engine.start()
        as_stranger.start()
        time.sleep(1.0)
        stranger = as_stranger.stop()
        engine = as_engine.stop()
        burned = hostload.cpu_seconds_of([pid]) - burned0
    finally:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
    assert burned > 0.05, "the burner never ran"
    assert stranger.other_cpu is not None and engine.other_cpu is not None
    capacity = max(stranger.seconds, engine.seconds) * len(os.sched_getaffinity(0))
    assert stranger.other_cpu - engine.other_cpu == pytest.approx(burned / capacity, abs=0.08)
    assert stranger.other_cpu >= burned / capacity - 0.08  # the stranger's CPU is in "other"


def test_worst_window_decides_the_row() -> None:
    calm = hostload.WindowLoad(1.0, 0.01, 0.0, 0.5, True)
    busy = hostload.WindowLoad(1.0, 0.4, 0.0, 3.0, False)
    assert hostload.worst([calm, busy]) == {"host_other_cpu": 0.4, "host_steal": 0.0, "host_load_1m": 3.0, "quiet": False}
    assert hostload.worst([calm])["quiet"] is True
    assert hostload.worst([hostload.WindowLoad(1.0, None, None, None, None)])["quiet"] is None  # not measured is not quiet


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
