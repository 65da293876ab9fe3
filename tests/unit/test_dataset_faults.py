"""The dataset survives damage: damaged files skipped and named, killed publishes invisible to every reader, leftovers
swept, older layouts migrated, columns never vanish, partition columns typed alike everywhere, durable renames.

Every "reader" here is one a user runs: ``read_dataset``, DuckDB's documented query, ``pd.read_parquet`` and
``pyarrow.dataset`` over the folder.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from datetime import date
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jsonbench.cell import Cell, HostFacts, PostgresOptions, RunRef
from jsonbench.dataset import publish as publish_mod
from jsonbench.dataset import repair
from jsonbench.dataset.measurement import Measurement
from jsonbench.dataset.publish import MEASUREMENTS, VALIDATIONS, partition_dir, publish_run, publish_validations, replace_run
from jsonbench.dataset.read import (
    DUCKDB_HIVE_TYPES,
    duckdb_source,
    find_damaged,
    full_schema,
    partitioning,
    read_dataset,
    read_dataset_report,
)
from jsonbench.dataset.schema import MEASUREMENT_SCHEMA
from jsonbench.dataset.staging import Staging, WorkloadRecord

ROOT = Path(__file__).resolve().parents[2]
DAY = "2026-11-29"


def _run(results: Path, run_id: str, label: str = "testbox", day: str = DAY) -> RunRef:
    return RunRef(
        run_id=run_id,
        logical_date=f"{day}T02:00:00+00:00",
        hardware_label=label,
        results_dir=str(results),
        scale="smoke",
        git_revision="abc",
        host=HostFacts("h", "cpu", 2, 1 << 34, "Linux"),
    )


def stage(
    results: Path, run_id: str, value: float, label: str = "testbox", day: str = DAY, workloads: tuple[str, ...] = ("w1", "w2")
) -> RunRef:
    """Stage one run (2 rows per workload) the way the workload tasks do."""
    run = _run(results, run_id, label, day)
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
        postgres=PostgresOptions(server_settings={}),
    )
    st = Staging(results, run_id)
    st.reset()
    st.write_engine(cell.cell_id, {"version": "17.10", "build": "npm x", "data_checksums": True, "settings": {}})
    for w in workloads:
        ms = [
            Measurement.of(w, "default", "update_time", "ms", [value, value + 2, value + 1]),
            Measurement.of(w, "default", "wal_bytes", "bytes", value * 1000),
        ]
        st.write_workload(WorkloadRecord(cell, w, ms, {"measure": 1.0}, f"{day}T02:00:01+00:00", f"{day}T02:00:02+00:00", [], {}))
    return run


def published(results: Path, run_id: str, value: float, **kw: Any) -> Path:
    target, rows = publish_run(results, stage(results, run_id, value, **kw))
    assert rows == 4
    return target / "part-0.parquet"


def duckdb_readme_count(results: Path) -> int:
    """The README's DuckDB query, as documented (hive types given, columns unioned by name)."""
    import duckdb

    glob = f"{results}/measurements/**/*.parquet"
    sql = (
        f"SELECT count(*), count(DISTINCT run_id) FROM read_parquet('{glob}', hive_partitioning=true, "
        "hive_types={'hardware_label': VARCHAR, 'run_date': DATE, 'run_key': VARCHAR}, union_by_name=true)"
    )
    return int(duckdb.sql(sql).fetchall()[0][0])


def every_reader_count(results: Path) -> dict[str, int]:
    """Rows of ``measurements`` as each reader sees them (each raises if the folder is unreadable to it)."""
    import duckdb
    import pandas as pd
    import pyarrow.dataset as ds

    folder = results / "measurements"
    return {
        "read_dataset": read_dataset(results).num_rows,
        "duckdb_readme": duckdb_readme_count(results),
        "duckdb_source": int(duckdb.sql(f"SELECT count(*) FROM {duckdb_source(results)}").fetchall()[0][0]),
        "pandas": len(pd.read_parquet(folder, partitioning=partitioning(), schema=full_schema(MEASUREMENTS))),
        "pandas_plain": len(pd.read_parquet(folder)),
        "pyarrow_dataset": ds.dataset(folder, format="parquet", partitioning=partitioning()).count_rows(),
    }


# -- damaged files ------------------------------------------------------------------------------


DAMAGE = {
    "truncated": lambda b: b[: len(b) // 2],
    "empty": lambda b: b"",
    "garbage": lambda b: b"this is not parquet at all " * 40,
    "flipped_page": lambda b: b[:8] + bytes(x ^ 0xFF for x in b[8:400]) + b[400:],
}


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_a_damaged_file_is_skipped_and_named_and_the_rest_reads_whole(
    results_dir: Path, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    good = published(results_dir, "run_a", 10.0)
    bad = published(results_dir, "run_b", 20.0)
    later = published(results_dir, "run_c", 30.0, day="2026-11-30")
    before = read_dataset(results_dir).to_pandas()
    bad.write_bytes(DAMAGE[kind](bad.read_bytes()))

    got = read_dataset_report(results_dir)
    assert [d.path for d in got.damaged] == [str(bad)]
    assert got.damaged[0].error  # the reader's own words
    df = got.table.to_pandas()
    assert sorted(df.run_id.unique()) == ["run_a", "run_c"]
    # 0 rows lost or duplicated among the readable runs: exactly what they held before the damage.
    keep = before[before.run_id != "run_b"].sort_values(["run_id", "workload", "metric"]).reset_index(drop=True)
    assert df.sort_values(["run_id", "workload", "metric"]).reset_index(drop=True)[keep.columns].equals(keep)
    assert str(bad) in caplog.text
    # read_dataset (the signature every caller uses) says the same, and a filter outside the damage does not name it.
    assert read_dataset(results_dir).num_rows == 8
    assert read_dataset_report(results_dir, run_date="2026-11-30").damaged == ()
    assert good.exists() and later.exists()
    assert find_damaged(results_dir) == list(got.damaged)


def test_wrong_types_and_bad_folder_names_are_damage_too(results_dir: Path) -> None:
    published(results_dir, "run_a", 10.0)
    wrong = published(results_dir, "run_b", 20.0)
    t = pq.read_table(wrong)
    pq.write_table(t.set_column(t.schema.get_field_index("value"), "value", pa.array(["x"] * t.num_rows)), wrong)
    odd = results_dir / "measurements" / "hardware_label=testbox" / "run_date=yesterday" / "run_key=r"
    odd.mkdir(parents=True)
    pq.write_table(
        pq.read_table(wrong.parent.parent.parent / f"run_date={DAY}" / "run_key=run_a" / "part-0.parquet"), odd / "part-0.parquet"
    )
    got = read_dataset_report(results_dir)
    errors = {Path(d.path).parent.name: d.error for d in got.damaged}
    assert "'value'" in errors["run_key=run_b"] and "double" in errors["run_key=run_b"]
    assert "not a YYYY-MM-DD date" in errors["run_key=r"]
    assert set(got.table.column("run_id").to_pylist()) == {"run_a"}


def test_cli_lists_then_quarantines_damaged_files_and_every_reader_works_again(results_dir: Path) -> None:
    published(results_dir, "run_a", 10.0)
    bad = published(results_dir, "run_b", 20.0)
    original = bad.read_bytes()[:-20]
    bad.write_bytes(original)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
    cli = [sys.executable, "-m", "jsonbench.cli", "damaged", "--results-dir", str(results_dir)]

    listed = subprocess.run(cli, capture_output=True, text=True, env=env, timeout=120)
    assert listed.returncode == 1, listed.stdout + listed.stderr
    assert f"damaged: {bad}" in listed.stdout and "--quarantine" in listed.stdout
    assert bad.exists()  # listing moves nothing
    import duckdb

    with pytest.raises(duckdb.Error):
        duckdb_readme_count(results_dir)  # why quarantine exists: DuckDB reads the folder wholesale

    moved = subprocess.run(cli + ["--quarantine"], capture_output=True, text=True, env=env, timeout=120)
    assert moved.returncode == 0, moved.stdout + moved.stderr
    (q,) = list((results_dir / "_quarantine").rglob("part-0.parquet"))
    assert q.read_bytes() == original  # moved, not deleted, not altered
    assert q.relative_to(results_dir / "_quarantine").parts[1:] == bad.relative_to(results_dir).parts
    note = json.loads(q.with_name("part-0.parquet.note.json").read_text())
    assert note["original_path"] == str(bad) and note["error"] and note["restore"] == f"mv {q} {bad}"
    assert not bad.parent.exists()
    assert every_reader_count(results_dir) == dict.fromkeys(every_reader_count(results_dir), 4)
    again = subprocess.run(cli, capture_output=True, text=True, env=env, timeout=120)
    assert again.returncode == 0 and "every file reads" in again.stdout


def test_quarantine_leaves_a_file_that_reads_again(results_dir: Path) -> None:
    f = published(results_dir, "run_a", 10.0)
    damaged = [publish_mod.DamagedFile(str(f), "was damaged, since republished")]
    assert repair.quarantine(results_dir, damaged) == []
    assert f.exists()


# -- killed publishes ------------------------------------------------------------------------------

_KILLED_PUBLISH = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
import pyarrow.parquet as pq
from jsonbench.dataset import publish

def stuck(table, where, **kwargs):
    where.write(b"PAR1" + b"\0" * 4096)   # part of a file, then the process is killed
    where.flush()
    print("writing", flush=True)
    time.sleep(3600)

publish.pq.write_table = stuck
table = pq.read_table(sys.argv[3])
publish.replace_run(Path(sys.argv[2]), table)
"""


def _killed_publish(target: Path, source: Path) -> None:
    """Publish ``source``'s rows to ``target`` in another process and kill -9 it in the middle of writing the file."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _KILLED_PUBLISH, str(ROOT / "plugins"), str(target), str(source)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "writing"
        assert list(target.glob(".part-0.parquet.*.tmp")), "the publish writes its temporary file inside the run's folder"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        if proc.stdout:
            proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL


def test_a_killed_publish_is_invisible_to_every_reader_and_swept(results_dir: Path) -> None:
    a = published(results_dir, "run_a", 10.0)
    b = published(results_dir, "run_b", 20.0)
    before = {p: p.read_bytes() for p in (a, b)}
    counts_before = every_reader_count(results_dir)
    assert set(counts_before.values()) == {8}
    # A republish of run_a and a first publish of run_c, both killed mid-write.
    _killed_publish(a.parent, b)
    new_run = partition_dir(results_dir, MEASUREMENTS, "testbox", f"{DAY}T02:00:00+00:00", "run_c")
    _killed_publish(new_run, b)
    leftovers = sorted(repair.find_leftovers(results_dir))
    assert len(leftovers) == 2 and all(p.name.startswith(".part-0.parquet.") and p.name.endswith(".tmp") for p in leftovers)

    assert every_reader_count(results_dir) == counts_before  # 0 lost, 0 duplicated, no reader trips over the leftovers
    assert read_dataset_report(results_dir).damaged == ()
    assert {p: p.read_bytes() for p in (a, b)} == before

    removed = repair.sweep_leftovers(results_dir)
    assert set(leftovers) <= set(removed) and new_run in removed  # the emptied first-publish folder goes too
    assert repair.find_leftovers(results_dir) == [] and not new_run.exists()
    assert {p: p.read_bytes() for p in (a, b)} == before
    # The rerun of the killed publishes repairs the dataset: run_a replaced, run_c added, nothing doubled.
    published(results_dir, "run_a", 11.0)
    published(results_dir, "run_c", 30.0)
    df = read_dataset(results_dir).to_pandas()
    assert df.groupby("run_id").size().to_dict() == {"run_a": 4, "run_b": 4, "run_c": 4}
    assert sorted(df[(df.run_id == "run_a") & (df.metric == "update_time")].value) == [12.0, 12.0]
    assert set(every_reader_count(results_dir).values()) == {12}
    assert repair.sweep_leftovers(results_dir) == []


_PAUSED_PUBLISH = r"""
import sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
import pyarrow.parquet as pq
from jsonbench.dataset import publish

real = pq.write_table

def paused(table, where, **kwargs):
    print("writing", flush=True)
    sys.stdin.readline()               # the test says when to go on
    real(table, where, **kwargs)

publish.pq.write_table = paused
publish.replace_run(Path(sys.argv[2]), pq.read_table(sys.argv[3]))
"""


def test_sweep_waits_for_a_publish_in_flight_in_another_process(results_dir: Path) -> None:
    """A sweep running beside another process's publish must not take its temporary file for a leftover."""
    a = published(results_dir, "run_a", 10.0)
    proc = subprocess.Popen(
        [sys.executable, "-c", _PAUSED_PUBLISH, str(ROOT / "plugins"), str(a.parent), str(a)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    swept: list[Path] = []
    try:
        assert proc.stdout is not None and proc.stdin is not None
        assert proc.stdout.readline().strip() == "writing"
        (tmp,) = a.parent.glob(".part-0.parquet.*.tmp")
        sweeper = threading.Thread(target=lambda: swept.extend(repair.sweep_leftovers(results_dir)))
        sweeper.start()
        sweeper.join(timeout=2)
        assert sweeper.is_alive() and tmp.exists(), "the sweep must wait for the publish holding the dataset lock"
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert proc.wait(timeout=60) == 0
        sweeper.join(timeout=60)
        assert not sweeper.is_alive()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        for stream in (proc.stdin, proc.stdout):
            if stream:
                stream.close()
    assert swept == [] and not tmp.exists()
    assert read_dataset(results_dir).num_rows == 4 and read_dataset_report(results_dir).damaged == ()


def test_older_layout_swap_folders_are_migrated(results_dir: Path) -> None:
    """The previous publisher renamed whole folders: .tmp-run_key=... and .old-run_key=... left by a killed publish."""
    a = published(results_dir, "run_a", 10.0)
    b = published(results_dir, "run_b", 20.0)
    c = published(results_dir, "run_c", 30.0)
    day = a.parent.parent
    # run_a: killed after writing the new folder, before swapping it in (tmp only).
    (day / ".tmp-run_key=run_a-0123abcd").mkdir()
    (day / ".tmp-run_key=run_a-0123abcd" / "part-0.parquet").write_bytes(a.read_bytes())
    # run_b: killed between its two renames: the published version sits in .old-, the run is missing.
    b_bytes = b.read_bytes()
    b.parent.rename(day / ".old-run_key=run_b-89abcdef")
    (day / ".tmp-run_key=run_b-fedcba98").mkdir()
    (day / ".tmp-run_key=run_b-fedcba98" / "part-0.parquet").write_bytes(b"half a file")
    # run_c: killed after the swap, before removing the old version.
    (day / ".old-run_key=run_c-00000000").mkdir()
    (day / ".old-run_key=run_c-00000000" / "part-0.parquet").write_bytes(c.read_bytes())
    import duckdb

    with pytest.raises(duckdb.Error, match=r"\.(tmp|old)-run_key="):
        duckdb_readme_count(results_dir)  # the failure, reproduced

    removed = repair.sweep_leftovers(results_dir)
    assert len(removed) == 4
    assert sorted(p.name for p in day.iterdir()) == ["run_key=run_a", "run_key=run_b", "run_key=run_c"]
    assert b.read_bytes() == b_bytes
    assert every_reader_count(results_dir) == dict.fromkeys(every_reader_count(results_dir), 12)


# -- schema and types ---------------------------------------------------------------------------------


def test_columns_missing_from_older_files_come_back_null_not_vanish(results_dir: Path) -> None:
    """An older file (sorted first) lacks columns the schema gained since; they must not vanish from the result."""
    rows = [{"run_id": "old", "check_kind": "sanity", "expectation": "e", "success": True}]
    old_schema = pa.schema([f for f in publish_mod.VALIDATION_SCHEMA if f.name not in ("verdict", "gx_suite", "details")])
    old = partition_dir(results_dir, VALIDATIONS, "testbox", "2026-01-01T00:00:00+00:00", "old")
    old.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=old_schema), old / "part-0.parquet")
    publish_validations(
        results_dir,
        _run(results_dir, "new"),
        [{"check_kind": "drift", "expectation": "e", "success": False, "verdict": "drift", "gx_suite": "s.drift"}],
    )
    df = read_dataset(results_dir, VALIDATIONS).to_pandas().set_index("run_id")
    assert {"verdict", "gx_suite", "details"} <= set(df.columns)
    assert df.loc["new", "verdict"] == "drift" and pd.isna(df.loc["old", "verdict"])
    assert list(read_dataset(results_dir, VALIDATIONS).schema.names) == list(full_schema(VALIDATIONS).names)


def test_partition_columns_are_typed_alike_for_every_reader(results_dir: Path) -> None:
    """run_date a date, hardware_label and run_key strings, even when they look like numbers."""
    import duckdb
    import pandas as pd
    import pyarrow.dataset as ds

    published(results_dir, "20261129", 10.0, label="7")
    t = read_dataset(results_dir)
    assert t.schema.field("run_date").type == pa.date32() and t.schema.field("run_key").type == pa.string()
    assert t.column("run_date")[0].as_py() == date(2026, 11, 29) and t.column("hardware_label")[0].as_py() == "7"
    assert read_dataset(results_dir, run_date="2026-11-29", hardware_label="7", run_key="20261129").num_rows == 4

    described = duckdb.sql(f"DESCRIBE SELECT hardware_label, run_date, run_key FROM {duckdb_source(results_dir)}").fetchall()
    assert {r[0]: r[1] for r in described} == DUCKDB_HIVE_TYPES
    # The README's own DuckDB query, run as printed (only the folder changed).
    readme = (ROOT / "README.md").read_text()
    query = re.search(r'duckdb\.sql\("""(.*?)"""\)', readme, re.S)
    assert query, "the README shows a DuckDB query"
    rows = duckdb.sql(query.group(1).replace("'results/measurements", f"'{results_dir}/measurements")).fetchall()
    assert len(rows) == 2 and all(r[1] == date(2026, 11, 29) for r in rows)
    df = pd.read_parquet(results_dir / "measurements", partitioning=partitioning(), schema=full_schema(MEASUREMENTS))
    assert df.run_date.iloc[0] == date(2026, 11, 29) and df.run_key.iloc[0] == "20261129" and df.hardware_label.iloc[0] == "7"
    pa_t = ds.dataset(results_dir / "measurements", format="parquet", partitioning=partitioning()).to_table()
    assert pa_t.schema.field("run_date").type == pa.date32()


# -- durability -----------------------------------------------------------------------------------------


def test_publish_syncs_the_file_and_every_folder_it_changes(results_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[str] = []
    real = os.fsync

    def spy(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real(fd)

    monkeypatch.setattr(os, "fsync", spy)
    target = publish_run(results_dir, stage(results_dir, "run_a", 10.0))[0]
    tmp_files = [s for s in synced if Path(s).name.startswith(".part-0.parquet.")]
    assert len(tmp_files) == 1, synced  # the file itself, before the rename
    i_file = synced.index(tmp_files[0])
    assert str(target) in synced[i_file + 1 :], "the run's folder is synced after the rename"
    for created in (target.parent, target.parent.parent, target.parent.parent.parent):
        assert str(created.parent) in synced, f"{created.parent} gained {created.name} but was not synced"
    # A republish replaces the file in place: the run's folder never goes missing.
    synced.clear()
    inode_before = target.stat().st_ino
    publish_run(results_dir, stage(results_dir, "run_a", 11.0))
    assert target.stat().st_ino == inode_before and str(target) in synced


def test_failed_first_publish_leaves_no_empty_run_folder(results_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("writer broke")

    run = stage(results_dir, "run_a", 10.0)
    monkeypatch.setattr(publish_mod.pq, "write_table", broken)
    with pytest.raises(RuntimeError, match="writer broke"):
        publish_run(results_dir, run)
    target = partition_dir(results_dir, MEASUREMENTS, "testbox", run.logical_date, "run_a")
    assert not target.exists() and repair.find_leftovers(results_dir) == []


def test_disk_full_error_names_the_file_and_the_filesystem(results_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pyarrow.lib

    def full(*args: Any, **kwargs: Any) -> None:
        raise pyarrow.lib.ArrowIOError("Error writing bytes to file. Detail: [errno 28] No space left on device")

    run = stage(results_dir, "run_a", 10.0)
    monkeypatch.setattr(publish_mod.pq, "write_table", full)
    with pytest.raises(OSError) as err:
        publish_run(results_dir, run)
    assert err.value.errno == 28
    msg = str(err.value)
    assert (
        "No space left on device" in msg
        and str(partition_dir(results_dir, MEASUREMENTS, "testbox", run.logical_date, "run_a") / "part-0.parquet") in msg
    )
    assert "filesystem mounted at /" in msg and "bytes free" in msg


def test_replace_run_keeps_one_file_per_run(results_dir: Path) -> None:
    a = published(results_dir, "run_a", 10.0)
    pq.write_table(pq.read_table(a), a.with_name("part-1.parquet"))  # an older tool's second part
    published(results_dir, "run_a", 11.0)
    assert sorted(p.name for p in a.parent.iterdir()) == ["part-0.parquet"]
    assert read_dataset(results_dir).num_rows == 4
    assert pq.read_schema(a).equals(MEASUREMENT_SCHEMA, check_metadata=False)


def test_replace_run_accepts_a_table_read_back_from_the_dataset(results_dir: Path) -> None:
    """What the report test does: read a run, change it, write it as another run."""
    published(results_dir, "run_a", 10.0)
    t = read_dataset(results_dir, run_id="run_a").drop_columns(["hardware_label", "run_date", "run_key"])
    replace_run(partition_dir(results_dir, MEASUREMENTS, "testbox", "2026-11-05", "copy"), t)
    assert read_dataset(results_dir, run_key="copy").num_rows == 4
