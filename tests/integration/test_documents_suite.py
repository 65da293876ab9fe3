"""The documents suites end to end on real engines: the shipped sample and documents the project has
never seen (a folder of pretty-printed, TOASTed events) through PostgreSQL and SQLite, planned, measured,
published and checked the way the DAG does it; the answer's figures against the published rows; two inputs
with two drift histories; every kind of bad input refused before any engine starts, publishing nothing."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from jsonbench import paths
from jsonbench.checks.examine import ChecksFailed
from jsonbench.checks.outcome import check_outcome
from jsonbench.dataset.read import read_dataset
from jsonbench.orchestration import tasks
from jsonbench.suites import get_suite
from jsonbench.suites.documents.input import SAMPLE
from jsonbench.suites.documents.plan import DocumentsError
from jsonbench.suites.documents.summary import answers

ENGINES = ["postgres-17", "sqlite-3.46.1"]
SAMPLE_PATH = paths.PROJECT_ROOT / SAMPLE


def _events(folder: Path, count: int = 120) -> Path:
    """An input unlike the sample: one pretty-printed event per file; every other one carries a ~6 kB hex payload (TOASTed)."""
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        h = hashlib.sha256(f"event:{n}".encode()).hexdigest()
        doc: dict[str, Any] = {
            "event_id": f"ev-{n:05d}",
            "kind": ("click", "view", "buy")[n % 3],
            "at": f"2026-03-{1 + n % 28:02d}T12:{n % 60:02d}:00Z",
            "score": n % 7 + 0.5 if n % 4 else n % 7,
            "meta": {"source": ("ios", "android", "web")[n % 3], "tags": ["a", "b"][: n % 3]},
        }
        if n % 2:
            doc["payload"] = "".join(hashlib.sha256(f"{h}:{i}".encode()).hexdigest() for i in range(95))
        (folder / f"event-{n:05d}.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return folder


def _run(results: Path, run_id: str, logical: str, params: dict[str, Any]) -> dict[str, Any]:
    """Plan (the input read and checked there), provision, measure, tear down every cell; publish; check."""
    planned = tasks.plan({"suites": ["documents"], "scale": "smoke", "results_dir": str(results), **params}, run_id, logical)
    for cell in planned["cells"]:
        handle = tasks.provision(planned, cell["cell_id"])
        try:
            for workload in get_suite(cell["suite"]).workloads:
                tasks.run_workload(planned, cell["cell_id"], handle, workload)
        finally:
            tasks.teardown(planned, cell["cell_id"], handle)
    assert tasks.publish(planned)["rows"] > 0
    try:
        tasks.check(planned)
    except ChecksFailed:
        pass  # a timing judged on a busy machine; the tests read the stored validation rows instead
    rows = read_dataset(str(results), table="measurements").to_pandas()
    return {"planned": planned, "rows": rows[rows["run_id"] == run_id], "outcome": check_outcome(results, run_id)}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("documents_results")


@pytest.fixture(scope="module")
def sample_run(results: Path) -> dict[str, Any]:
    return _run(results, "documents_sample", "2026-11-29T02:00:00+00:00", {"engines": ENGINES, "documents": str(SAMPLE_PATH)})


@pytest.fixture(scope="module")
def unseen_run(results: Path, sample_run: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """After the sample, into the same results folder: its history must not be the sample's."""
    folder = _events(tmp_path_factory.mktemp("events") / "events")
    params = {"engines": ENGINES, "documents": str(folder), "read_keys": ["kind", "meta.source"], "update_keys": ["kind"]}
    return _run(results, "documents_events", "2026-11-30T02:00:00+00:00", params)


@pytest.fixture(scope="module")
def again_run(results: Path, unseen_run: dict[str, Any]) -> dict[str, Any]:
    """The sample again on SQLite: its facts are judged exactly against the first run of the same input."""
    return _run(
        results, "documents_sample_again", "2026-12-01T02:00:00+00:00", {"engines": ["sqlite-3.46.1"], "documents": str(SAMPLE_PATH)}
    )


def _value(rows: pd.DataFrame, engine: str, workload: str, variant: str, metric: str) -> float:
    got = rows[(rows["engine_id"] == engine) & (rows["workload"] == workload) & (rows["variant"] == variant) & (rows["metric"] == metric)]
    assert len(got) == 1, (engine, workload, variant, metric, got)
    return float(got["value"].iloc[0])


def test_every_promised_metric_is_published_with_the_inputs_fingerprint(sample_run: dict[str, Any]) -> None:
    rows = sample_run["rows"]
    sha = hashlib.sha256(SAMPLE_PATH.read_bytes()).hexdigest()
    assert {"documents", "documents_sqlite"} <= set(rows["suite"])  # asking for documents ran its SQLite half too
    for suite_name, engine in (("documents", "postgres-17"), ("documents_sqlite", "sqlite-3.46.1")):
        mine = rows[(rows["suite"] == suite_name) & (rows["engine_id"] == engine)]
        for workload, metric in get_suite(suite_name).expected_metrics():
            got = mine[(mine["workload"] == workload) & (mine["metric"] == metric)]
            assert len(got) > 0, (suite_name, workload, metric)
            ok = got[got["status"] == "ok"]
            assert all(math.isfinite(v) for v in ok["value"]), (suite_name, workload, metric)
        for raw in mine["scale_params"]:
            p = json.loads(raw)
            assert (p["input_sha256"], p["input_documents"], p["input_bytes"]) == (sha, 10_000, SAMPLE_PATH.stat().st_size)
        assert _value(mine, engine, "storage", "input", "input_documents") == 1000  # smoke loads the first 1,000


def test_the_run_is_sane_and_its_facts_pass(sample_run: dict[str, Any]) -> None:
    out = sample_run["outcome"]
    assert out["sanity_ok"], out["failed"]
    assert out["facts_ok"], out["failed"]


def test_the_summary_figures_equal_the_published_rows(sample_run: dict[str, Any]) -> None:
    rows = sample_run["rows"]
    found = answers(rows.to_dict("records"))
    assert {a.engine_id for a in found} == set(ENGINES)
    for a in found:
        assert len(a.sentences) >= 3, a.sentences  # storage, a read per key, an update per key
        for f in a.figures:
            assert _value(rows, a.engine_id, f.workload, f.variant, f.metric) == f.value, f


def test_the_command_line_and_the_report_print_the_answer(sample_run: dict[str, Any], results: Path) -> None:
    from jsonbench.report import build_report
    from jsonbench.report.summary import summary

    text = summary(str(results), "documents_sample")
    found = answers(sample_run["rows"].to_dict("records"))
    assert "Your documents, orders.jsonl: 10,000 documents" in text
    for a in found:
        for sentence in a.sentences:
            assert sentence in text
    page = build_report(str(results), "documents_sample").read_text(encoding="utf-8")
    assert "<h2>Your documents</h2>" in page and found[0].sentences[0].split(" (")[0] in page


def test_postgres_measures_the_seeds_mechanisms_on_the_sample(sample_run: dict[str, Any]) -> None:
    rows, pg = sample_run["rows"], "postgres-17"
    # A few of the sample's orders are over 2 kB, more of them as jsonb than as json (seed 001).
    assert 0 < _value(rows, pg, "storage", "json", "over_threshold_share") <= _value(rows, pg, "storage", "jsonb", "over_threshold_share")
    assert _value(rows, pg, "storage", "jsonb.pglz", "toast_bytes") > 0
    # Every read key was found in the documents, the same count from every design.
    assert _value(rows, pg, "read", "jsonb:status", "rows_read") == 1000
    # The fixed count: 50 single-row updates per design and run at smoke, every one counted by the server.
    for design in ("jsonb", "column", "twin"):
        assert _value(rows, pg, "update", f"{design}:status", "updates") == 50


def test_toasted_documents_never_seen_before(unseen_run: dict[str, Any]) -> None:
    rows, pg, sq = unseen_run["rows"], "postgres-17", "sqlite-3.46.1"
    assert unseen_run["outcome"]["sanity_ok"], unseen_run["outcome"]["failed"]
    assert _value(rows, pg, "storage", "jsonb", "over_threshold_share") == pytest.approx(0.5)
    assert _value(rows, pg, "storage", "jsonb.pglz", "toast_bytes") > 60 * 2000  # 60 documents stored out of line
    # Rewriting TOASTed documents costs more WAL than writing the key in its own column (seeds 000 and 004).
    assert _value(rows, pg, "update", "jsonb_vs_column:kind", "wal_ratio") > 1
    # Seed 004: the jsonb update rewrites the TOASTed payload; the key in its own column leaves it alone.
    assert _value(rows, pg, "update", "jsonb:kind", "toast_growth") > 0
    assert _value(rows, pg, "update", "column:kind", "toast_growth") == 0
    # A nested key has no twin column: recorded as not applicable, with the reason.
    na = rows[(rows["engine_id"] == pg) & (rows["variant"] == "twin_vs_jsonb:meta.source")]
    assert list(na["status"]) == ["not_applicable"] and "no typed column" in na["reason"].iloc[0]
    assert _value(rows, sq, "read", "jsonb:meta.source", "rows_read") == 120
    assert _value(rows, sq, "storage", "input", "input_documents") == 120


def test_two_inputs_keep_two_drift_histories(unseen_run: dict[str, Any]) -> None:
    """The events come after the sample in the same results folder: judged against the sample's sizes, every fact would fail."""
    out = unseen_run["outcome"]
    assert out["facts_ok"], out["failed"]


def test_the_same_input_again_is_judged_exactly(again_run: dict[str, Any]) -> None:
    out = again_run["outcome"]
    assert out["sanity_ok"] and out["facts_ok"], out["failed"]
    assert out["by_tag"]["deterministic"]["passed"] > 0, "the sample's sizes and counts were judged against its first run"


def _bad_inputs(tmp: Path) -> dict[str, tuple[dict[str, Any], str]]:
    """Each kind of bad input: the run's parameters and what the error must name."""
    good = SAMPLE_PATH.read_text(encoding="utf-8").splitlines()[:3]
    malformed = tmp / "malformed.jsonl"
    malformed.write_text("\n".join([good[0], good[1], good[2][:-5]]) + "\n", encoding="utf-8")
    empty = tmp / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    not_object = tmp / "not_object.jsonl"
    not_object.write_text(good[0] + "\n" + json.dumps([1, 2]) + "\n", encoding="utf-8")
    return {
        "malformed": ({"documents": str(malformed)}, f"{malformed}, line 3"),
        "empty": ({"documents": str(empty)}, f"{empty}: is empty"),
        "not an object": ({"documents": str(not_object)}, f"{not_object}, line 2, field (top level)"),
        "missing key": ({"documents": str(SAMPLE_PATH), "read_keys": ["stauts"]}, "field read_keys[0]"),
        "missing file": ({"documents": str(tmp / "nope.jsonl")}, "does not exist"),
    }


@pytest.mark.parametrize("kind", ["malformed", "empty", "not an object", "missing key", "missing file"])
def test_bad_input_is_refused_before_any_engine_starts(kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Through the plan task and through `jsonbench run` (which stops before Airflow starts): nothing staged, started or published."""
    from jsonbench.cli import main

    params, named = _bad_inputs(tmp_path)[kind]
    results = tmp_path / "results"
    scratch_before = sorted(p.name for p in paths.scratch_dir().iterdir())
    with pytest.raises(DocumentsError) as exc:
        tasks.plan({"suites": ["documents"], "engines": ENGINES, "scale": "smoke", "results_dir": str(results), **params}, "bad", None)
    assert named in str(exc.value)
    argv = ["run", "--suites", "documents", "--engines", ",".join(ENGINES), "--scale", "smoke", "--results-dir", str(results)]
    argv += ["--documents", params["documents"]] + (["--read-keys", ",".join(params["read_keys"])] if "read_keys" in params else [])
    assert main(argv) == 2
    assert named in capsys.readouterr().err
    assert not results.exists() or not any(results.rglob("*.parquet")), "bad input published nothing"
    assert sorted(p.name for p in paths.scratch_dir().iterdir()) == scratch_before, "no engine was started"
