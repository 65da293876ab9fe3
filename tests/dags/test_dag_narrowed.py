"""The real benchmark DAG through `airflow dags test` at smoke scale, narrowed to one PostgreSQL and one SQLite version
with every default suite and the documents suite on its shipped sample: both engine families, every suite's tasks,
publication, the checks and their facts, in one run of the DAG that holds every group of the matrix (the groups
the run does not select are skipped at once).

The default tier's run of the DAG. The whole default matrix (every engine of both families) through the DAG is
tests/dags/test_dag_run.py, in the `matrix` tier that CI runs (./bin/test --tier matrix).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from jsonbench import paths
from jsonbench.dataset.measurement import CANARY_RECORDS, HOST_SUITE
from jsonbench.dataset.publish import VALIDATIONS, read_dataset
from jsonbench.dataset.staging import Staging
from jsonbench.matrix import load_matrix
from jsonbench.suites import get_suite
from jsonbench.suites.documents.input import SAMPLE
from jsonbench.suites.documents.summary import answers
from tests.dagrun import plant, rows_of, run_dag, task_states
from tests.runcheck import assert_run_correct

pytestmark = pytest.mark.dag

POSTGRES, SQLITE = "postgres-17", "sqlite-3.46.1"
ENGINES = [POSTGRES, SQLITE]
DOCUMENTS = {"documents": POSTGRES, "documents_sqlite": SQLITE}  # asking for `documents` runs its SQLite half too


def _suites() -> list[str]:
    return [*load_matrix().raw["default_suites"], "documents"]


def _cells() -> set[tuple[str, str]]:
    """``(suite, engine)`` of every cell the run plans: each default suite on the engine of its family, and the documents suite's two halves."""
    m = load_matrix()
    default = {(s, e) for s in m.raw["default_suites"] for e in ENGINES if m.suites[s]["family"] == m.engines[e]["family"]}
    return default | set(DOCUMENTS.items())


def _group(suite: str, engine: str) -> str:
    return f"{suite}__{engine.replace('.', '_')}"


@pytest.fixture(scope="module")
def narrowed_run(tmp_path_factory: pytest.TempPathFactory, airflow_env: dict[str, str]) -> dict[str, Any]:
    """One run at smoke scale, with its task states. Every group of the matrix is in the DAG (not only the run's
    engines'), so that the run shows the others skipped at once, never started one after another."""
    results = tmp_path_factory.mktemp("dagrun") / "results"
    conf = {
        "scale": "smoke",
        "results_dir": str(results),
        "hardware_label": "ci",
        "engines": ENGINES,
        "suites": _suites(),
        "documents": str(paths.PROJECT_ROOT / SAMPLE),
    }
    out = run_dag(airflow_env, conf, extra_env={"JSONBENCH_HOST_ENGINES": ""}, timeout=1500)
    assert out["run_id"], out["log"][-5000:]
    return {**out, "results": results, "states": task_states(airflow_env, out["run_id"])}


def test_the_run_covers_both_families_and_every_suite() -> None:
    """The premise of this module: one engine of each family, and every default suite and the documents suite have a cell."""
    m = load_matrix()
    assert {m.engines[e]["family"] for e in ENGINES} == {m.suites[s]["family"] for s in m.raw["default_suites"]} == {"postgres", "sqlite"}
    assert {s for s, _ in _cells()} == {*m.raw["default_suites"], *DOCUMENTS}


def test_the_run_completes_publishes_and_its_facts_hold(narrowed_run: dict[str, Any]) -> None:
    """Completion, publication, sanity and the deterministic facts of every cell (see ``assert_run_correct``)."""
    try:
        out = assert_run_correct(narrowed_run["results"], narrowed_run["run_id"], narrowed_run["states"])
    except AssertionError:
        print(narrowed_run["log"][-6000:])
        raise
    v = read_dataset(narrowed_run["results"], VALIDATIONS).to_pandas()
    v = v[v.run_id == narrowed_run["run_id"]]
    assert set(v["check_kind"]) == {"sanity", "reproduction", "drift"}
    rep = v[(v["check_kind"] == "reproduction") & (v.engine_id == POSTGRES)].set_index("expectation")
    assert rep.loc["rel_small_hot_count", "observed"] == 119 and rep.loc["expression_index_no_hot", "observed"] == 0
    assert out["rows"] == len(v)
    df = read_dataset(narrowed_run["results"]).to_pandas()
    published = set(zip(df.suite, df.engine_id, strict=True))
    assert published == _cells() | {(HOST_SUITE, e) for e in ENGINES}  # every cell, and the canary rows (suite host) beside them
    assert (narrowed_run["results"] / "gx" / "uncommitted" / "data_docs" / "local_site" / "index.html").is_file()  # GX Data Docs


def test_groups_the_run_does_not_select_are_skipped_at_once(narrowed_run: dict[str, Any]) -> None:
    """Every other cell of the matrix is in the DAG and skipped by ``select`` without being started: a narrowed run
    pays only for what it runs."""
    states, log = narrowed_run["states"], narrowed_run["log"]
    mine = {_group(s, e) for s, e in _cells()}
    assert all(states[f"{g}.provision"] == "success" for g in mine), states
    others = {t: s for t, s in states.items() if t.endswith(".provision") and t.removesuffix(".provision") not in mine}
    assert len(others) >= 20 and set(others.values()) == {"skipped"}, others
    walked = [t for t in others if f"starting task_id={t} " in log]
    assert walked == [], f"skipped groups were still started one by one: {walked}"


def test_one_cell_at_a_time(narrowed_run: dict[str, Any]) -> None:
    """Every cell started after the one before it was torn down, across the skipped groups between them (the chain
    runs through each group's ``done`` link; a skipped group's teardown is done at once). The whole-matrix run also
    samples the live engines from /proc (tests/dags/test_dag_run.py)."""
    log = narrowed_run["log"]
    order = sorted((_group(s, e) for s, e in _cells()), key=lambda g: log.index(f"starting task_id={g}.provision "))
    for first, second in zip(order, order[1:], strict=False):
        ended = log.index(f"end task task_id={first}.teardown ")
        assert ended < log.index(f"starting task_id={second}.provision "), f"{first} and {second} overlapped"


#: Three deterministic facts made wrong, each on its own cell and finding: a HOT count and a heap size on PostgreSQL,
#: a page ratio on SQLite.
PLANTS = {
    "hot_count": (rows_of(POSTGRES, "rel_small", "n_tup_hot_upd"), lambda x: x - 1, "rel_small_hot_count"),
    "heap_size": (rows_of(POSTGRES, "storage", "heap_bytes", "products_doc"), lambda x: x * 1.05, "document_heap_bytes"),
    "sqlite_page_ratio": (rows_of(SQLITE, "keys_10", "file_pages", "jsonb"), lambda x: x * 1.1, "keys_10_jsonb_fewer_pages"),
}


def test_planted_wrong_facts_fail_the_assertion(narrowed_run: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's published rows with three facts made wrong, checked again: the checks fail, and the assertion of every
    DAG test (``assert_run_correct``) fails naming each. A test that passed any run would pass this."""
    from jsonbench.checks.examine import ChecksFailed, check_run

    monkeypatch.setenv("JSONBENCH_DATA_DOCS", "0")  # the pages take seconds and prove nothing here
    results = tmp_path / "results"
    shutil.copytree(narrowed_run["results"], results, ignore=shutil.ignore_patterns("gx", "alerts", VALIDATIONS))
    for pick, change, _ in PLANTS.values():
        assert plant(results, narrowed_run["run_id"], pick, change) >= 1
    planned = {r.cell.cell_id: r.cell for r in Staging(results, narrowed_run["run_id"]).records()}  # the plan's cells, as staged
    run = dataclasses.replace(next(iter(planned.values())).run, results_dir=str(results))
    with pytest.raises(ChecksFailed):
        check_run(run, list(planned.values()))
    states = {**narrowed_run["states"], "check": "failed"}
    with pytest.raises(AssertionError) as caught:
        assert_run_correct(results, narrowed_run["run_id"], states)
    for name, (_, _, finding) in PLANTS.items():
        assert finding in str(caught.value), (name, str(caught.value)[:2000])


def test_every_engine_reports_every_metric_of_every_suite(narrowed_run: dict[str, Any]) -> None:
    m = load_matrix()
    df = read_dataset(narrowed_run["results"]).to_pandas()
    df = df[df.run_id == narrowed_run["run_id"]]
    assert not df.empty
    for suite, engine in sorted(_cells()):
        expected = set(get_suite(suite).expected_metrics())
        got = df[(df.suite == suite) & (df.engine_id == engine)]
        have = set(zip(got.workload, got.metric, strict=True))
        assert expected <= have, f"{suite} on {engine} misses {sorted(expected - have)[:10]}"
        ok = got[got.status == "ok"]
        assert ok.value.notna().all()
        na = got[got.status == "not_applicable"]
        assert na.reason.notna().all() and (na.reason.str.len() > 0).all()
        # Full context on every row, including what else used the machine while it was measured.
        assert got.engine_version.str.startswith(m.engines[engine]["version"]).all()
        for col in ("engine_build", "settings", "git_revision", "host_cpu_model", "scale"):
            assert got[col].notna().all(), col
        assert (got.hardware_label == "ci").all() and (got.scale == "smoke").all()
        measured = got[(got.status == "ok") & (got.workload != "_cell")]
        assert measured.quiet.notna().any() and measured.host_other_cpu.dropna().between(0, 1).all()
        # And the cell's own cost, for the next plan.
        cell = got[got.workload == "_cell"].set_index("metric")
        assert cell.loc["duration", "value"] > 0 and cell.loc["peak_rss", "value"] > 0, f"{suite} on {engine}"


def test_the_documents_suite_answers_on_the_sample(narrowed_run: dict[str, Any]) -> None:
    """The README's documents command, narrowed: both halves measured the shipped sample and answer in sentences."""
    df = read_dataset(narrowed_run["results"]).to_pandas()
    mine = df[(df.run_id == narrowed_run["run_id"]) & df.suite.isin(list(DOCUMENTS))]
    assert set(mine.engine_id) == set(ENGINES)
    assert mine.scale_params.map(lambda sp: json.loads(sp)["input_documents"]).eq(10_000).all()
    found = answers(mine.to_dict("records"))
    assert len(found) == 2 and all(a.sentences for a in found)


def test_postgres_rows_record_build_and_checksums(narrowed_run: dict[str, Any]) -> None:
    df = read_dataset(narrowed_run["results"]).to_pandas()
    pg = df[df.engine == "postgres"]
    assert set(pg.engine_id) == {POSTGRES}
    assert pg.engine_configure.str.contains("--prefix").all()
    assert pg.data_checksums.all()
    assert all(json.loads(s)["max_connections"] for s in pg.settings)


def test_staging_has_phase_timings_for_the_overhead_report(narrowed_run: dict[str, Any]) -> None:
    recs = [r for r in Staging(narrowed_run["results"], narrowed_run["run_id"]).records() if r.workload not in CANARY_RECORDS]
    assert recs
    # Every setup record times the engine start, every workload record its task.
    assert all(("provision" in r.phases) if r.workload == "_setup" else ("task" in r.phases) for r in recs)
    # And the run as a whole spent time loading and measuring, the floor of the overhead ratio.
    assert sum(r.phases.get("load", 0) for r in recs) > 0 and sum(r.phases.get("measure", 0) for r in recs) > 0


def test_no_server_outlives_the_run(narrowed_run: dict[str, Any], leak_check: Any) -> None:
    assert leak_check() == []


def test_failed_cell_publishes_nothing_keeps_earlier_runs_and_alerts(
    narrowed_run: dict[str, Any], dags_test: Callable[..., dict[str, Any]], airflow_env: dict[str, str], leak_check: Any
) -> None:
    """A server that cannot do its work (read-only by setting) fails every workload: nothing is published, the earlier
    run stays intact, and the run itself alerts (its check never ran, so only the run's outcome can)."""
    before = read_dataset(narrowed_run["results"]).to_pandas()
    conf = {
        "scale": "smoke",
        "results_dir": str(narrowed_run["results"]),
        "hardware_label": "ci",
        "engines": [POSTGRES],
        "suites": ["large_document_update"],
        "server_settings": {"default_transaction_read_only": "on"},
    }
    out = dags_test("jsonb_benchmark_matrix", conf)
    assert out["state"] == "failed"
    assert "read-only transaction" in out["log"]
    states = task_states(airflow_env, out["run_id"])
    assert states["publish"] == "failed" and states["check"] == "upstream_failed" and states["outcome"] == "failed"
    assert "ALERT jsonbench: run " + out["run_id"] in out["log"]
    alert = narrowed_run["results"] / "alerts"
    assert any(f"{_group('large_document_update', POSTGRES)}.rel_small" in p.read_text() for p in alert.glob("*.md"))
    after = read_dataset(narrowed_run["results"]).to_pandas()
    assert len(after) == len(before) and set(after.run_id) == set(before.run_id)
    assert leak_check() == []


def test_missing_build_fails_in_plan_before_any_engine_starts(
    dags_test: Callable[..., dict[str, Any]], airflow_env: dict[str, str], leak_check: Any, tmp_path: Path
) -> None:
    conf = {"scale": "smoke", "results_dir": str(tmp_path / "r"), "engines": [POSTGRES], "suites": ["large_document_update"]}
    out = dags_test("jsonb_benchmark_matrix", conf, extra_env={"JSONBENCH_ENGINES_DIR": str(tmp_path / "no-engines")})
    assert out["state"] == "failed"
    assert "run ./bin/setup" in out["log"]
    states = task_states(airflow_env, out["run_id"])
    assert states["plan"] == "failed"
    provisions = {t: s for t, s in states.items() if t.endswith(".provision")}
    assert provisions and set(provisions.values()) == {"skipped"}, provisions  # every cell's setup ran, and skipped: nothing started
    assert not any(t.endswith(".teardown") and s == "success" for t, s in states.items())
    assert not (tmp_path / "r" / "measurements").exists()
    assert leak_check() == []


def test_bad_documents_fail_the_plan_and_start_nothing(
    dags_test: Callable[..., dict[str, Any]], airflow_env: dict[str, str], tmp_path: Path, leak_check: Any
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1}\n{"id": 2,}\n', encoding="utf-8")
    conf = {"scale": "smoke", "results_dir": str(tmp_path / "r"), "engines": ENGINES, "suites": ["documents"], "documents": str(bad)}
    out = dags_test("jsonb_benchmark_matrix", conf)
    assert out["state"] == "failed"
    assert f"{bad}, line 2: not valid JSON" in out["log"]
    states = task_states(airflow_env, out["run_id"])
    assert states["plan"] == "failed"
    provisions = {t: s for t, s in states.items() if t.endswith(".provision")}
    assert provisions and set(provisions.values()) == {"skipped"}, provisions
    assert not (tmp_path / "r" / "measurements").exists()
    assert leak_check() == []


def test_bad_parameter_is_refused_before_the_run(dags_test: Callable[..., dict[str, Any]], tmp_path: Path) -> None:
    out = dags_test("jsonb_benchmark_matrix", {"scale": "enormous", "results_dir": str(tmp_path)})
    assert out["returncode"] != 0 and out["state"] is None
    assert "Invalid input for param scale" in out["log"]
