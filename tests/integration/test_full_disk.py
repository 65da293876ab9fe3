"""A real full disk: the results folder on an 8 MB tmpfs (or a loop-mounted ext2 image where no tmpfs can be mounted), filled up while a run is being published.

No monkeypatch: the Parquet writer runs out of space on a real filesystem. The earlier runs must stay
readable and byte-for-byte intact, the error must say what is full (the file, the filesystem, "No
space left on device"), nothing half-written may be left, and publishing again after space is
freed must repair the run with every row once.
"""

from __future__ import annotations

import errno
import hashlib
import os
import random
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jsonbench.cell import Cell, HostFacts, PostgresOptions, RunRef
from jsonbench.dataset.measurement import Measurement
from jsonbench.dataset.publish import MEASUREMENTS, partition_dir, read_dataset, read_dataset_report
from jsonbench.dataset.repair import find_leftovers
from jsonbench.dataset.staging import Staging, WorkloadRecord
from jsonbench.orchestration import tasks
from tests.unit.test_dataset_faults import every_reader_count  # the same readers a user runs

SIZE = "8m"


def _mount_small(mnt: Path, image: Path) -> list[str]:
    """Mount a small filesystem at ``mnt``: an 8 MB tmpfs, else an 8 MB ext2 image on a loop device; return why each failed."""
    why = []
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SIZE},mode=0755", "tmpfs", str(mnt)], capture_output=True, text=True)
    if res.returncode == 0:
        return []
    why.append(f"tmpfs: {(res.stderr or res.stdout).strip()}")
    steps = (
        ["truncate", "-s", SIZE.upper(), str(image)],
        ["mkfs.ext2", "-q", "-F", "-m", "0", str(image)],
        ["mount", "-o", "loop", str(image), str(mnt)],
    )
    for argv in steps:
        try:
            res = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        except OSError as exc:
            return [*why, f"loop image: {argv[0]}: {exc}"]
        if res.returncode != 0:
            return [*why, f"loop image: {' '.join(argv[:2])}: {(res.stderr or res.stdout).strip()}"]
    os.chmod(mnt, 0o755)
    return []


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A real 8 MB filesystem mounted for this test only (we are root): a tmpfs, or where the kernel refuses one, an ext2
    image on a loop device. Skipped only when neither can be mounted, which under CI fails the run (tests/conftest.py)."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    why = _mount_small(mnt, tmp_path / "small.img")
    if why:
        pytest.skip("cannot mount a small filesystem here (a real full disk needs one; run as root): " + "; ".join(why))
    try:
        yield mnt
    finally:
        out = subprocess.run(["umount", str(mnt)], capture_output=True, text=True)
        if out.returncode != 0:
            subprocess.run(["umount", "-l", str(mnt)], capture_output=True, text=True)
        assert not os.path.ismount(mnt), f"could not unmount {mnt}: {out.stderr}"


def _stage(results: Path, run_id: str, n_metrics: int, seed: int) -> dict[str, Any]:
    """Stage a run of ``n_metrics`` rows with incompressible samples (its Parquet file has a predictable heft); return its plan."""
    rng = random.Random(seed)
    run = RunRef(
        run_id=run_id,
        logical_date="2026-11-29T02:00:00+00:00",
        hardware_label="fullbox",
        results_dir=str(results),
        scale="smoke",
        git_revision="abc",
        host=HostFacts("h", "cpu", 2, 1 << 34, "Linux"),
    )
    cell = Cell(
        cell_id="s__postgres-17",
        suite="large_document_update",
        engine_id="postgres-17",
        family="postgres",
        version="17",
        backend="embedded",
        adapter="jsonbench.engines.postgres_embedded:EmbeddedPostgres",
        backend_options={"build": "pg17"},
        scale="smoke",
        scale_params={},
        repetitions=20,
        run=run,
        postgres=PostgresOptions(server_settings={}),
    )
    st = Staging(results, run_id)
    st.reset()
    st.write_engine(cell.cell_id, {"version": "17.10", "build": "npm x", "data_checksums": True, "settings": {}})
    ms = [Measurement.of("w", f"v{i}", "update_time", "ms", [rng.random() for _ in range(20)]) for i in range(n_metrics)]
    st.write_workload(WorkloadRecord(cell, "w", ms, {"measure": 1.0}, "2026-11-29T02:00:01+00:00", "2026-11-29T02:00:02+00:00", [], {}))
    return {"run": run.to_json(), "cells": [cell.to_json()], "resumed": []}


def _fill(folder: Path, leave: int) -> Path:
    """Fill the filesystem of ``folder`` until about ``leave`` bytes are free; return the ballast file.

    Unbuffered writes of ever smaller pieces (64 kB down to one byte), so that no free block is left
    behind a partial write, on a tmpfs (pages) as on a block filesystem (1 kB blocks of a small ext2).
    """
    ballast = folder / "ballast"
    fd = os.open(ballast, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for size in (64 * 1024, 4096, 512, 1):
            chunk = os.urandom(size)
            try:
                while True:
                    os.write(fd, chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
        os.fsync(fd)
    finally:
        os.close(fd)
    with open(ballast, "r+b") as fh:
        fh.truncate(max(0, ballast.stat().st_size - leave))
    return ballast


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_disk_full_during_publish_keeps_earlier_runs_and_a_rerun_repairs(small_fs: Path) -> None:
    results = small_fs / "results"
    earlier = {}
    for n, run_id in enumerate(("run_a", "run_b")):
        run = _stage(results, run_id, 200, seed=n)
        out = tasks.publish(run)
        assert out["rows"] == 200
        earlier[run_id] = Path(out["path"]) / "part-0.parquet"
    digests = {k: _digest(p) for k, p in earlier.items()}
    before = read_dataset(results).to_pandas()
    assert len(before) == 400

    # Tonight's run (and a rerun of run_a grown to 1,500 rows): staged while there was room, then the disk fills up.
    big = _stage(results, "run_c", 1500, seed=7)
    grown = _stage(results, "run_a", 1500, seed=8)
    ballast = _fill(small_fs, leave=64 * 1024)

    for run, what in ((big, "a first publish"), (grown, "a republish")):
        with pytest.raises(OSError) as err:
            tasks.publish(run)
        target = partition_dir(results, MEASUREMENTS, "fullbox", run["run"]["logical_date"], run["run"]["run_id"]) / "part-0.parquet"
        message = str(err.value)
        print(f"{what}: {message}")
        assert err.value.errno == errno.ENOSPC, message
        assert "No space left on device" in message and str(target) in message and f"mounted at {small_fs}" in message, message

    # Earlier runs: readable, byte-for-byte intact, no row lost or doubled; nothing half-written anywhere.
    assert {k: _digest(p) for k, p in earlier.items()} == digests
    after = read_dataset_report(results)
    assert after.damaged == ()
    df = after.table.to_pandas()
    assert len(df) == 400 and df.groupby("run_id").size().to_dict() == {"run_a": 200, "run_b": 200}
    assert not partition_dir(results, MEASUREMENTS, "fullbox", big["run"]["logical_date"], "run_c").exists()
    assert find_leftovers(results) == []
    assert not [p for p in (results / MEASUREMENTS).rglob(".*")]
    assert set(every_reader_count(results).values()) == {400}

    # Space freed: publishing again repairs both runs, every row exactly once.
    ballast.unlink()
    assert tasks.publish(big)["rows"] == 1500
    assert tasks.publish(grown)["rows"] == 1500
    df = read_dataset(results).to_pandas()
    assert df.groupby("run_id").size().to_dict() == {"run_a": 1500, "run_b": 200, "run_c": 1500}
    assert not df.duplicated(["run_id", "workload", "variant", "metric"]).any()
    assert _digest(earlier["run_b"]) == digests["run_b"]
    assert set(every_reader_count(results).values()) == {3200}


def test_disk_full_while_staging_names_the_file(small_fs: Path) -> None:
    """A workload task that cannot stage its measurements says which file and which filesystem."""
    results = small_fs / "results"
    ballast = _fill(small_fs, leave=0)
    try:
        with pytest.raises(OSError) as err:
            _stage(results, "run_x", 10, seed=1)
        message = str(err.value)
        assert (
            err.value.errno == errno.ENOSPC
            and "No space left on device" in message
            and "_staging" in message
            and f"mounted at {small_fs}" in message
        ), message
        assert not [p for p in results.rglob(".*.json.*")], "no temporary staging file left behind"
    finally:
        ballast.unlink()
