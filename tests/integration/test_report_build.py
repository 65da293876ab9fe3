"""The static report: built from a dataset of several checked runs, by function, CLI and the report DAG.

The runs are synthetic (the smoke run's values staged and published by the real functions, see
tests/unit/checks_synth.py) so that trends and drift have a history without minutes of benchmarking;
the DAG test runs the real report DAG with `airflow dags test`.
"""

from __future__ import annotations

import re
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from checks_synth import make_run, replace_metric  # noqa: E402

from jsonbench.checks import ChecksFailed, check_run  # noqa: E402
from jsonbench.report import build_report  # noqa: E402
from jsonbench.dataset.publish import MEASUREMENTS, partition_dir, read_dataset, replace_run  # noqa: E402


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four honest runs, then a fifth whose WAL doubled on PostgreSQL 17 (a drift), all checked; plus a second suite's rows."""
    from jsonbench.cell import RunRef
    from jsonbench.matrix import plan_cells, resolve

    results_dir = tmp_path_factory.mktemp("report") / "results"

    def make_cells(suite: str, engines: list[str], run_id: str, **params: object) -> list[Any]:
        cfg = resolve({"scale": "smoke", "results_dir": str(results_dir), "suites": [suite], "engines": engines, **params})
        run = RunRef(run_id=run_id, logical_date=None, hardware_label=cfg.hardware_label, results_dir=cfg.results_dir, scale=cfg.scale, git_revision="test")
        return plan_cells(cfg, run)

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JSONBENCH_DATA_DOCS", "0")
        for n in range(4):
            check_run(make_run(make_cells, n))
        mp.setenv("JSONBENCH_DATA_DOCS", "1")
        last = make_run(make_cells, 4, tamper=replace_metric("postgres-17", "json_big", "wal_bytes", lambda v: 2 * v))
        with pytest.raises(ChecksFailed):
            check_run(last)
    # Rows of another suite (no seed file, no reproduction file): the report must still chart them.
    # Its logical date is a day before the last run's, so "the latest run" is unambiguous.
    t = read_dataset(results_dir, MEASUREMENTS, run_id=last["run_id"]).drop_columns(["hardware_label", "run_date", "run_key"])
    other = t.set_column(t.schema.get_field_index("suite"), "suite", [["other_suite"] * t.num_rows])
    other = other.set_column(other.schema.get_field_index("run_id"), "run_id", [["other_suite_run"] * t.num_rows])
    earlier = pa.array([datetime(2026, 11, 4, 2, tzinfo=timezone.utc)] * t.num_rows, type=other.schema.field("logical_date").type)
    other = other.set_column(other.schema.get_field_index("logical_date"), "logical_date", earlier)
    replace_run(partition_dir(results_dir, MEASUREMENTS, last["hardware_label"], "2026-11-04", "other_suite_run"), other)
    return results_dir


def _svgs(html: str) -> list[str]:
    return re.findall(r"<svg .*?</svg>", html, flags=re.S)


def test_report_shows_seed_findings_trends_drift_and_environment(dataset: Path) -> None:
    path = build_report(dataset, run_id="scheduled__2026-11-05T02:00:00+00:00")
    html = path.read_text()
    assert path == dataset / "report" / "index.html"
    titles = re.findall(r"<svg [^>]*><title>(.*?)</title>", html)
    assert "large_document_update: update_time — seed vs this run" in titles
    assert "large_document_update: findings (band shaded, seed = diamond)" in titles
    assert any(t.startswith("wal_bytes on postgres-17") for t in titles), titles
    assert len(_svgs(html)) >= 10
    assert "1.09k ms" in html and "Reproduction of the seed's findings" in html
    assert "Trends over 5 run(s)" in html
    assert "DRIFT" in html and re.search(r"<td class='drift'>drift</td><td>postgres-17</td><td>json_big</td><td>wal_bytes</td>", html)
    assert "Environment" in html and "synthetic-postgres-16" in html and "shared_buffers=128MB" in html
    assert "../data_docs/scheduled__2026-11-05T02_00_00_00_00/index.html" in html
    assert (dataset / "data_docs" / "scheduled__2026-11-05T02_00_00_00_00" / "index.html").exists()
    pages = re.findall(r"<a href='\.\./(data_docs/scheduled__2026-11-05T02_00_00_00_00/validations/[^']+\.html)'>([^<]+)</a>", html)
    assert {name for _, name in pages} == {"sanity.measurements", "sanity.completeness", "large_document_update.reproduction", "large_document_update.drift"}
    assert all((dataset / href).exists() for href, _ in pages)


def test_every_suite_with_data_gets_charts(dataset: Path) -> None:
    html = build_report(dataset, run_id="other_suite_run").read_text()
    assert "Suite other_suite" in html
    assert any("other_suite:" in s for s in _svgs(html)), "a suite without seed or reproduction files still gets charts"
    latest = build_report(dataset).read_text()  # default: the latest run by logical date
    assert "run scheduled__2026-11-05T02:00:00+00:00" in latest and "run other_suite_run" not in latest
    assert "Suite other_suite" not in latest


def test_cli_report_and_empty_dataset(dataset: Path, tmp_path: Path) -> None:
    res = subprocess.run([sys.executable, "-m", "jsonbench.cli", "report", "--results-dir", str(dataset)], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert str(dataset / "report" / "index.html") in res.stdout
    empty = build_report(tmp_path / "nothing").read_text()
    assert "No published run" in empty


@pytest.mark.dag
def test_report_dag_builds_the_report(dags_test, dataset: Path) -> None:
    (dataset / "report" / "index.html").unlink(missing_ok=True)
    res = dags_test("jsonb_benchmark_report", {"results_dir": str(dataset)}, timeout=300)
    assert res["state"] == "success", res["log"][-4000:]
    assert "<svg" in (dataset / "report" / "index.html").read_text()


def test_dags_are_wired_report_on_the_asset_and_alert_on_the_check() -> None:
    from airflow.dag_processing.dagbag import DagBag

    from jsonbench.checks.alerts import CheckFailureNotifier

    bag = DagBag(dag_folder=str(Path(__file__).resolve().parents[2] / "dags"))
    assert bag.import_errors == {}
    report = bag.dags["jsonb_benchmark_report"]
    assert "jsonbench_measurements" in str(report.timetable.asset_condition) and report.catchup is False
    bench = bag.dags["jsonb_benchmark_matrix"]
    assert "jsonbench_measurements" in str(bench.get_task("publish").outlets)
    callbacks = bench.get_task("check").on_failure_callback
    callbacks = callbacks if isinstance(callbacks, list) else [callbacks]
    assert any(isinstance(cb, CheckFailureNotifier) for cb in callbacks)
    assert bench.get_task("check").retries == 0, "a retry would alert twice for one failed check"
