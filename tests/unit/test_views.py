"""The SQL views shipped with the results (<results>/jsonbench.duckdb), on a small real dataset:
synthetic runs published and checked by the real code (tests/unit/report_synth.py)."""

from __future__ import annotations

import datetime as dt
import os
import shutil
from pathlib import Path

import duckdb
import pytest

from jsonbench.dataset import views
from tests.unit.report_synth import build_once


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("views") / "results"
    build_once(root, runs=4, docs_for_last=True)
    return root


def _open(path: Path) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(path), read_only=True)


def test_views_open_in_one_line_from_anywhere(results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = views.refresh(results)
    assert db == results / "jsonbench.duckdb"
    monkeypatch.chdir(tmp_path)  # not the results folder: paths in the views are the folder's own
    con = _open(db)
    names = {r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
    assert {"measurements", "validations", "runs", "latest_run", "findings", "change_points"} <= names
    n_m = con.execute("SELECT count(*) FROM measurements").fetchone()[0]
    assert n_m == 5 * 2 * 5 * 17  # 5 runs x 2 engines x 5 workloads x 17 metrics
    # Partition columns typed the same for every reader (contract 5).
    types = dict(con.execute("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'measurements'").fetchall())
    assert types["run_date"] == "DATE" and types["hardware_label"] == "VARCHAR" and types["run_key"] == "VARCHAR"
    assert types["logical_date"] == "TIMESTAMP WITH TIME ZONE" and types["samples"] == "DOUBLE[]"
    assert con.execute("SELECT min(run_date) FROM measurements").fetchone()[0] == dt.date(2026, 11, 1)
    vtypes = dict(con.execute("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'validations'").fetchall())
    assert vtypes["run_date"] == "DATE" and vtypes["success"] == "BOOLEAN"


def _findings_per_run() -> int:
    """Reproduction rows of one synthetic run: every large_document_update finding on both engines."""
    from jsonbench.checks.library import load_library

    return len(load_library().reproduction["large_document_update"]["findings"]) * 2


def test_latest_run_runs_findings_and_change_points(results: Path) -> None:
    con = _open(views.refresh(results))
    latest = con.execute("SELECT DISTINCT hardware_label, engine_id, run_id FROM latest_run ORDER BY engine_id").fetchall()
    assert latest == [
        ("local", "postgres-16", "scheduled__2026-11-05T02:00:00+00:00"),
        ("local", "postgres-17", "scheduled__2026-11-05T02:00:00+00:00"),
    ]
    runs = con.execute("SELECT run_id, scale, check_status, failed_checks, engines FROM runs ORDER BY logical_date").fetchall()
    assert [r[1] for r in runs] == ["laptop", "smoke", "smoke", "smoke", "smoke"]
    assert runs[-1][2] == "failed" and runs[-1][3] >= 1 and runs[0][2] == "passed"
    assert runs[0][4] == ["postgres-16", "postgres-17"]
    f = con.execute(
        "SELECT finding, engine_id, scale, seed_value, band_min, band_max, verdict, data_docs_page FROM findings "
        "WHERE run_id = 'scheduled__2026-11-05T02:00:00+00:00' AND finding = 'big_document_jsonb_update_slowdown' ORDER BY engine_id"
    ).fetchall()
    assert [r[1] for r in f] == ["postgres-16", "postgres-17"]
    from jsonbench.checks.library import load_library

    findings = load_library().reproduction["large_document_update"]["findings"]
    band = next(x for x in findings if x["id"] == "big_document_jsonb_update_slowdown")["bands"]["smoke"]
    assert all(
        r[2] == "smoke" and r[3] == pytest.approx(136.25) and r[4] == band["min"] and r[5] == band["max"] and r[6] == "pass" for r in f
    ), f
    per_run = con.execute("SELECT run_id, count(*) FROM findings GROUP BY ALL ORDER BY ALL").fetchall()
    assert [n for _, n in per_run] == [len(findings) * 2] * 5  # every finding x 2 engines per run
    cp = con.execute("SELECT engine_id, workload, metric, run_id, relative_change, pvalue, judged_in_run FROM change_points").fetchall()
    assert cp == [
        ("postgres-17", "json_big", "wal_bytes", "scheduled__2026-11-05T02:00:00+00:00", 1.0, 0.001, "scheduled__2026-11-05T02:00:00+00:00")
    ]


def test_damaged_file_is_left_out_and_listed(results: Path, tmp_path: Path) -> None:
    copy = tmp_path / "results"
    shutil.copytree(results, copy, ignore=shutil.ignore_patterns("gx", "report", "*.duckdb"))
    victim = sorted((copy / "measurements").rglob("part-0.parquet"))[0]
    victim.write_bytes(victim.read_bytes()[:100])  # cut short, as a full disk or a sync tool would
    con = _open(views.refresh(copy))
    assert con.execute("SELECT count(DISTINCT run_id) FROM measurements").fetchone()[0] == 4
    bad = con.execute("SELECT path, status FROM dataset_files WHERE status = 'damaged'").fetchall()
    assert bad == [(victim.relative_to(copy).as_posix(), "damaged")]


def test_moved_folder_says_where_it_is(results: Path, tmp_path: Path) -> None:
    views.refresh(results)
    moved = tmp_path / "elsewhere" / "results"
    shutil.copytree(results, moved, ignore=shutil.ignore_patterns("gx", "report"))
    # Hide the original so the copy can only be read through the variable.
    hidden = results.with_name("results.hidden")
    results.rename(hidden)
    try:
        con = _open(moved / "jsonbench.duckdb")
        with pytest.raises(duckdb.Error):
            con.execute("SELECT count(*) FROM measurements").fetchone()
        con.execute(f"SET VARIABLE {views.ROOT_VARIABLE} = '{moved}'")
        assert con.execute("SELECT count(*) FROM findings").fetchone()[0] == _findings_per_run() * 5
    finally:
        hidden.rename(results)


def test_empty_results_and_in_memory_connect(tmp_path: Path, results: Path) -> None:
    con = _open(views.refresh(tmp_path / "nothing"))
    assert con.execute("SELECT count(*) FROM measurements").fetchone()[0] == 0
    assert con.execute("SELECT count(*) FROM latest_run").fetchone()[0] == 0
    assert con.execute("SELECT count(*) FROM findings").fetchone()[0] == 0
    mem = views.connect(results)
    assert mem.execute("SELECT count(*) FROM validations WHERE check_kind = 'reproduction'").fetchone()[0] >= _findings_per_run() * 5
    assert not list(results.glob(".jsonbench.duckdb.tmp-*"))


def test_refresh_does_not_disturb_an_open_reader(results: Path) -> None:
    db = views.refresh(results)
    reader = _open(db)
    before = reader.execute("SELECT count(*) FROM measurements").fetchone()[0]
    views.refresh(results)  # renamed into place: the open reader keeps the file it opened
    assert reader.execute("SELECT count(*) FROM measurements").fetchone()[0] == before
    assert os.path.exists(db)
