"""The static report, built from runs published and checked by the real code (tests/unit/report_synth.py):
four nightly smoke runs and one earlier laptop run of PostgreSQL 16 and 17, the last one with a
planted WAL regression on 17 (drift, so its check fails) and a change point in its drift row.

Checked: the scorecard comes first and holds every finding x engine x scale with seed, observed,
band and verdict, linking to Data Docs pages that exist; every chart is a valid Vega-Lite spec;
trends carry the change point; the page references nothing on the network; the CLI; the report
DAG under `airflow dags test`; the DAG's wiring (scheduled on jsonbench_validations, not paused,
no polling). The page in a real browser: test_report_browser.py.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from jsonbench.report import build_report
from jsonbench.report.vendor import external_references
from tests.unit.report_synth import build_once

LAST = "scheduled__2026-11-05T02:00:00+00:00"


def _findings() -> list[dict]:
    from jsonbench.checks.library import load_library

    return load_library().reproduction["large_document_update"]["findings"]


FINDINGS = [f["id"] for f in _findings()]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    results = tmp_path_factory.mktemp("report") / "results"
    build_once(results, runs=4, docs_for_last=True)
    return results


@pytest.fixture(scope="module")
def page(dataset: Path) -> str:
    return build_report(dataset).read_text(encoding="utf-8")


def _specs(html: str) -> list[dict]:
    return [
        json.loads(s.replace("<\\/", "</"))
        for s in re.findall(r"<script type='application/json' id='spec-\d+'>(.*?)</script>", html, flags=re.S)
    ]


def test_scorecard_is_first_and_has_every_finding_engine_and_scale(dataset: Path, page: str) -> None:
    assert f"run {LAST}" in page and "checks FAILED" in page  # the drift failed the run's check
    sections = re.findall(r"<section[^>]*id='([^']+)'", page)
    assert sections[0] == "scorecard" and sections[1] == "suite-large_document_update", sections
    score = re.search(r"<table class='scorecard'>(.*?)</table>", page, flags=re.S).group(1)
    heads = re.findall(r"<th(?: class='current')? title='([^']+)'>([^<]+)<br><span class='muted'>([^<]+)</span>", score)
    assert [(h[1], h[2]) for h in heads] == [
        ("postgres-16", "16.14 · smoke"),
        ("postgres-17", "17.10 · smoke"),
        ("postgres-16", "16.14 · laptop"),
        ("postgres-17", "17.10 · laptop"),
    ]
    assert heads[0][0].startswith(LAST) and heads[2][0].startswith("scheduled__2026-11-01")
    rows = re.findall(r"<tr class='finding[^']*'><td><b>([^<]+)</b>.*?</tr>", score, flags=re.S)
    assert rows == FINDINGS
    slow = re.search(r"<b>big_document_jsonb_update_slowdown</b>.*?</tr>", score, flags=re.S).group(0)
    assert ">136<" in slow  # the seed's figure
    from jsonbench.report.charts import fmt

    bands = next(f for f in _findings() if f["id"] == "big_document_jsonb_update_slowdown")["bands"]
    for scale in ("smoke", "laptop"):  # observed, verdict and the band applied at that scale, in each column
        assert slow.count(f"<span class='band'>[{fmt(bands[scale]['min'])}, {fmt(bands[scale]['max'])}]</span>") == 2, scale
    assert slow.count("v-pass") == 4
    # This run's values link to their Data Docs page, and the page is there.
    links = re.findall(r"<a href='\.\./(gx/uncommitted/data_docs/local_site/validations/[^']+\.html)'>", score)
    assert len(links) == len(FINDINGS) * 2 and all((dataset / link).is_file() for link in links)
    assert "large_document_update/reproduction" in links[0]


def test_reproduction_table_ratio_and_trend_charts(page: str) -> None:
    table = re.search(r"<table class='repro'>(.*?)</table>", page, flags=re.S).group(1)
    assert "json_big update_time" in table and "1.09k" in table  # the seed's 1090 ms
    assert "scales with rows" in table  # counts proportional to the rows, compared scaled
    hot = re.search(r"<tr><td>rel_small n_tup_hot_upd</td>.*?</tr>", table, flags=re.S).group(0)
    # Seed: 1122 HOT updates of 5,000 rows; a smoke run has 500 rows, so 112.2 is the seed at its size: 119 is x1.06.
    assert "119<br><span class='muted'>×1.06</span>" in hot and "seed at this size: 112 rows" in hot
    specs = _specs(page)
    titles = [s.get("title", {}).get("text") if isinstance(s.get("title"), dict) else s.get("title") for s in specs]
    assert "large_document_update: findings, observed / seed (band shaded)" in titles
    assert "large_document_update: seed figures, measured / seed" in titles
    assert any(t and t.startswith("large_document_update: wal_bytes over runs") for t in titles), titles
    wal = specs[next(i for i, t in enumerate(titles) if t and t.startswith("large_document_update: wal_bytes over runs"))]
    rows = next(iter(wal["datasets"].values()))
    changes = [r for r in rows if r["kind"] == "change"]
    assert changes == [
        {
            "kind": "change",
            "engine": "postgres-17",
            "series": "json_big",
            "date": "2026-11-05T02:00:00+00:00",
            "run": LAST,
            "before": "6.05M",
            "after": "12.1M",
            "change": "+100 %",
            "pvalue": "0.001",
        }
    ]
    drifted = [r for r in rows if r["kind"] == "point" and r["drift"]]
    assert [(r["engine"], r["series"], r["run"]) for r in drifted] == [("postgres-17", "json_big", LAST)]
    point = next(r for r in rows if r["kind"] == "point")
    assert (
        point["run"].startswith("scheduled__") and point["build"].startswith("synthetic-") and point["samples"]
    )  # hover: run id, build, samples
    assert "Change points found over the history" in page


def test_every_chart_is_valid_vega_lite(page: str) -> None:
    from altair.utils.schemapi import validate_jsonschema
    from altair.vegalite.v6.schema.core import load_schema

    schema = load_schema()
    specs = _specs(page)
    assert len(specs) >= 7
    for spec in specs:
        assert validate_jsonschema(spec, schema, rootschema=schema, raise_error=False) is None, spec.get("title")


def test_page_opens_without_network(page: str) -> None:
    assert external_references(page) == []
    static = page.split("<script>", 1)[0]  # the page before the inlined Vega bundle
    assert "vegaEmbed" in page and "<svg" not in static  # charts are drawn by Vega from their specs, none is hand-written SVG


def test_a_run_that_published_nothing_still_gets_a_report(dataset: Path) -> None:
    html = build_report(dataset, run_id="manual__2026-11-06T09:00:00+00:00").read_text()
    assert "published no measurements" in html and f"run {LAST}" in html


def test_cli_report_and_empty_dataset(dataset: Path, tmp_path: Path) -> None:
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "jsonbench.cli",
            "report",
            "--results-dir",
            str(dataset),
            "--run-id",
            "scheduled__2026-11-03T02:00:00+00:00",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert str(dataset / "report" / "index.html") in res.stdout
    assert "run scheduled__2026-11-03T02:00:00+00:00" in (dataset / "report" / "index.html").read_text()
    empty = build_report(tmp_path / "nothing").read_text()
    assert "No published run" in empty


def test_triggering_run_comes_from_the_asset_event() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "dags"))
    from jsonb_benchmark_report import triggering_run

    old = SimpleNamespace(timestamp=1, extra={}, source_run_id="scheduled__old")
    new = SimpleNamespace(timestamp=2, extra={"run_id": "manual__x", "results_dir": "/data/results"}, source_run_id="manual__x")
    assert triggering_run({"triggering_asset_events": {"jsonbench_validations": [old, new]}}) == ("manual__x", "/data/results")
    plain = SimpleNamespace(timestamp=3, extra={}, source_run_id="scheduled__plain")
    assert triggering_run({"triggering_asset_events": {"a": [old, plain]}}) == ("scheduled__plain", None)
    assert triggering_run({}) == (None, None)


def test_report_dag_is_scheduled_on_the_checks_asset_not_paused_and_does_not_poll() -> None:
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(Path(__file__).resolve().parents[2] / "dags" / "jsonb_benchmark_report.py"))
    assert bag.import_errors == {}
    report = bag.dags["jsonb_benchmark_report"]
    assert "jsonbench_validations" in str(report.timetable.asset_condition) and report.catchup is False
    assert report.is_paused_upon_creation is False
    assert set(report.task_ids) == {"source", "views", "build"}
    assert not any("sensor" in type(t).__name__.lower() or "wait" in t.task_id for t in report.tasks)


@pytest.mark.dag
def test_report_dag_builds_the_views_and_the_report(dags_test, dataset: Path) -> None:
    (dataset / "report" / "index.html").unlink(missing_ok=True)
    (dataset / "jsonbench.duckdb").unlink(missing_ok=True)
    res = dags_test("jsonb_benchmark_report", {"results_dir": str(dataset)}, timeout=600)
    assert res["state"] == "success", res["log"][-4000:]
    html = (dataset / "report" / "index.html").read_text()
    assert "<section id='scorecard'>" in html and f"run {LAST}" in html
    assert (dataset / "jsonbench.duckdb").is_file()
