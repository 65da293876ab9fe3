"""Staging and publishing: atomic, per run, replace-on-rerun, never partial, never empty."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from jsonbench.cell import Cell, HostFacts, PostgresOptions, RunRef
from jsonbench.dataset import publish as publish_mod
from jsonbench.dataset.measurement import Measurement
from jsonbench.dataset.publish import read_dataset
from jsonbench.dataset.schema import MEASUREMENT_SCHEMA
from jsonbench.dataset.staging import Staging, WorkloadRecord


def _run(results: Path, run_id: str) -> RunRef:
    return RunRef(
        run_id=run_id,
        logical_date="2026-11-29T02:00:00+00:00",
        hardware_label="testbox",
        results_dir=str(results),
        scale="smoke",
        git_revision="abc",
        host=HostFacts("h", "cpu", 2, 1 << 34, "Linux"),
    )


def _stage(results: Path, run_id: str, value: float, workloads=("w1", "w2"), resources: dict | None = None) -> RunRef:
    run = _run(results, run_id)
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
        scale_params={"rows": 10},
        repetitions=3,
        run=run,
        postgres=PostgresOptions(server_settings={"work_mem": "64MB"}),
    )
    st = Staging(results, run_id)
    st.write_engine(
        cell.cell_id,
        {"version": "17.10", "build": "npm x", "configure": "--with-x", "data_checksums": True, "settings": {"work_mem": "64MB"}},
    )
    for w in workloads:
        ms = [
            Measurement.of(w, "default", "update_time", "ms", [value, value + 2, value + 1]),
            Measurement.not_applicable(w, "lz4", "size", "bytes", "engine build lacks lz4"),
        ]
        windows = [
            {"seconds": 1.0, "other_cpu": 0.02, "steal": 0.0, "load_1m": 1.5, "quiet": True},
            {"seconds": 1.0, "other_cpu": 0.3, "steal": 0.0, "load_1m": 2.5, "quiet": False},
        ]
        st.write_workload(
            WorkloadRecord(
                cell, w, ms, {"measure": 1.0}, "2026-11-29T02:00:01+00:00", "2026-11-29T02:00:02+00:00", windows, resources or {}
            )
        )
    return run


def test_publish_writes_one_tidy_partition_with_context(results_dir: Path) -> None:
    run = _stage(results_dir, "manual__2026-11-29T02:00:00+00:00", 10.0)
    target, rows = publish_mod.publish_run(results_dir, run)
    assert rows == 4
    assert target.name == "run_key=manual__2026-11-29T02_00_00_00_00"
    assert target.parent.name == "run_date=2026-11-29" and target.parent.parent.name == "hardware_label=testbox"
    file_schema = pq.read_schema(target / "part-0.parquet")
    assert file_schema.equals(MEASUREMENT_SCHEMA, check_metadata=False)
    df = read_dataset(results_dir).to_pandas()
    ok = df[df.status == "ok"].iloc[0]
    assert ok.value == 11.0 and ok.spread == 2.0 and ok.repetitions == 3 and list(ok.samples) == [10.0, 12.0, 11.0]
    assert ok.engine_version == "17.10" and ok.engine_configure == "--with-x" and bool(ok.data_checksums)
    assert ok.hardware_label == "testbox" and ok.host_cores == 2 and ok.git_revision == "abc"
    na = df[df.status == "not_applicable"].iloc[0]
    assert na.reason == "engine build lacks lz4"
    assert pd.isna(na.value) and pd.isna(na.spread) and na.repetitions == 0
    # Every row carries its task's worst measure window: one of the two windows was disturbed.
    assert ok.host_other_cpu == 0.3 and ok.host_load_1m == 2.5 and not bool(ok.quiet)


def test_each_cell_publishes_its_resource_rows(results_dir: Path) -> None:
    """Duration (sum of its tasks), peak memory and peak disk of the engine (max over its tasks)."""
    run = _stage(results_dir, "run_r", 10.0, resources={"seconds": 2.5, "peak_memory": 3e8, "peak_disk": 5e7})
    publish_mod.publish_run(results_dir, run)
    df = read_dataset(results_dir).to_pandas()
    cell = df[df.workload == publish_mod.CELL_RECORD].set_index("metric")
    assert cell.loc["duration", "value"] == 5.0 and cell.loc["duration", "unit"] == "s"
    assert cell.loc["peak_rss", "value"] == 3e8 and cell.loc["disk_peak", "value"] == 5e7


def test_rerun_replaces_its_own_rows_only(results_dir: Path) -> None:
    a = _stage(results_dir, "run_a", 10.0)
    publish_mod.publish_run(results_dir, a)
    b = _stage(results_dir, "run_b", 20.0)
    publish_mod.publish_run(results_dir, b)
    # Rerun of run_a with different numbers and one workload fewer.
    Staging(results_dir, "run_a").reset()
    a = _stage(results_dir, "run_a", 30.0, workloads=("w1",))
    publish_mod.publish_run(results_dir, a)
    df = read_dataset(results_dir).to_pandas()
    assert sorted(df[df.run_id == "run_a"].value.dropna()) == [31.0]
    assert sorted(df[df.run_id == "run_b"].value.dropna()) == [21.0, 21.0]


def test_a_run_finished_on_another_day_replaces_its_earlier_partition(results_dir: Path) -> None:
    """A resumed run (``resume_of``) published under a later date leaves no copy of itself under the first date."""
    run_id = "manual__2026-11-29T23:50:00+00:00"
    first = _stage(results_dir, run_id, 10.0)
    first_target, _ = publish_mod.publish_run(results_dir, first)
    other = _stage(results_dir, "run_b", 20.0)  # another run of the first day stays
    publish_mod.publish_run(results_dir, other)
    later = dataclasses.replace(first, logical_date="2026-11-30T00:20:00+00:00")
    target, _ = publish_mod.publish_run(results_dir, later)
    assert target.parent.name == "run_date=2026-11-30" and not first_target.exists()
    df = read_dataset(results_dir).to_pandas()
    assert len(df[df.run_id == run_id]) == 4 and len(df[df.run_id == "run_b"]) == 4
    # The first day's folder stays for run_b; a day that only the moved run held is removed.
    assert first_target.parent.is_dir()
    third = dataclasses.replace(first, logical_date="2026-12-01T00:20:00+00:00")
    publish_mod.publish_run(results_dir, third)
    assert not target.parent.exists()
    assert len(read_dataset(results_dir).to_pandas().query("run_id == @run_id")) == 4


def test_failed_write_leaves_the_published_run_intact(results_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failing writer (simulated: it raises "no space") neither loses nor half-replaces the run.

    The real full disk, a small filesystem filled up during publish, is tests/integration/test_full_disk.py.
    """
    run = _stage(results_dir, "run_a", 10.0)
    publish_mod.publish_run(results_dir, run)

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(publish_mod.pq, "write_table", disk_full)
    _stage(results_dir, "run_a", 50.0)
    with pytest.raises(OSError, match="No space left"):
        publish_mod.publish_run(results_dir, run)
    monkeypatch.undo()
    df = read_dataset(results_dir).to_pandas()
    assert sorted(df.value.dropna()) == [11.0, 11.0]
    leftovers = [p.name for p in (results_dir / "measurements").rglob(".*")]
    assert leftovers == []
    # And a rerun repairs it.
    publish_mod.publish_run(results_dir, run)
    assert sorted(read_dataset(results_dir).to_pandas().value.dropna()) == [51.0, 51.0]


def test_nothing_staged_refuses_to_publish(results_dir: Path) -> None:
    run = _stage(results_dir, "run_a", 10.0)
    publish_mod.publish_run(results_dir, run)
    Staging(results_dir, "run_a").reset()
    with pytest.raises(RuntimeError, match="nothing staged"):
        publish_mod.publish_run(results_dir, run)
    assert len(read_dataset(results_dir)) == 4  # the earlier attempt stays


def test_dataset_reads_with_pandas_and_duckdb(results_dir: Path) -> None:
    import duckdb
    import pandas as pd

    publish_mod.publish_run(results_dir, _stage(results_dir, "run_a", 10.0))
    df = pd.read_parquet(results_dir / "measurements")
    assert {"hardware_label", "run_date", "run_key", "metric", "value"} <= set(df.columns)
    n = duckdb.sql(
        f"SELECT count(*) FROM read_parquet('{results_dir}/measurements/**/*.parquet', hive_partitioning=true) WHERE hardware_label = 'testbox'"
    ).fetchall()[0][0]
    assert n == 4


def test_staged_files_are_replaced_whole(results_dir: Path) -> None:
    _stage(results_dir, "run_a", 10.0)
    _stage(results_dir, "run_a", 40.0)
    recs = list(Staging(results_dir, "run_a").records())
    assert len(recs) == 2 and all(r.measurements[0].value == 41.0 for r in recs)
    assert not list(Staging(results_dir, "run_a").root.rglob(".*"))


def test_measurement_summaries() -> None:
    m = Measurement.of("w", "v", "t", "ns", [5.0, 3.0, 4.0], aggregate="min")
    assert m.value == 3.0 and m.spread == 2.0
    assert Measurement.of("w", "v", "t", "ns", 7).aggregate == "single"
    assert Measurement.from_json(m.to_json()) == m


def test_each_row_carries_its_metric_kind_and_a_row_without_one_reads_null(results_dir: Path) -> None:
    """The kind a measurement carries is published as ``metric_kind``; the per-cell rows carry theirs; no kind is null."""
    run = _run(results_dir, "kinds")
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
        scale_params={"rows": 10},
        repetitions=1,
        run=run,
        postgres=PostgresOptions(server_settings={}),
    )
    st = Staging(results_dir, "kinds")
    st.write_engine(cell.cell_id, {"version": "17.10", "build": "npm x"})
    ms = [
        Measurement.of("rel_big", "default", "update_time", "ms", [1.0], kind="timed"),
        Measurement.of("rel_big", "default", "wal_bytes", "bytes", [5.0], kind="sampled"),
        Measurement.of("rel_big", "default", "old_style", "rows", [3.0]),
    ]
    st.write_workload(
        WorkloadRecord(cell, "rel_big", ms, {}, "2026-11-29T02:00:01+00:00", "2026-11-29T02:00:02+00:00", [], {"seconds": 2.0})
    )
    publish_mod.publish_run(results_dir, run)
    df = read_dataset(results_dir).to_pandas().set_index("metric")
    assert df.loc["update_time", "metric_kind"] == "timed" and df.loc["wal_bytes", "metric_kind"] == "sampled"
    assert pd.isna(df.loc["old_style", "metric_kind"])
    assert df.loc["duration", "metric_kind"] == "timed"  # the cell's own resource row
