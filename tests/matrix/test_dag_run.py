"""The real benchmark DAG, run with `airflow dags test` against real servers at smoke scale."""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from jsonbench.dataset.measurement import CANARY_RECORDS
from jsonbench.dataset.publish import MEASUREMENTS, VALIDATIONS, read_dataset
from jsonbench.dataset.staging import Staging
from jsonbench.matrix import load_matrix
from jsonbench.suites import get_suite
from tests.runcheck import assert_run_correct

pytestmark = pytest.mark.dag


def task_states(airflow_env: dict, run_id: str) -> dict[str, str]:
    """Every task instance's state of one run, from Airflow's own metadata database."""
    import subprocess
    import sys

    airflow = str(Path(sys.executable).parent / "airflow")
    res = subprocess.run(
        [airflow, "tasks", "states-for-dag-run", "jsonb_benchmark_matrix", run_id, "-o", "json"],
        env=airflow_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    start = res.stdout.index("[")
    return {r["task_id"]: r["state"] for r in json.loads(res.stdout[start:])}


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory, airflow_env, scratch_dir: Path) -> dict:
    """One run of the default matrix (every default engine and suite) at smoke scale, with a census of live engines."""
    import subprocess
    import sys

    from jsonbench.host.census import Census
    from tests.conftest import _FINISHED

    results = tmp_path_factory.mktemp("dagrun") / "results"
    conf = {"scale": "smoke", "results_dir": str(results), "hardware_label": "ci"}
    with Census(scratch_dir) as census:
        res = subprocess.run(
            [str(Path(sys.executable).parent / "airflow"), "dags", "test", "jsonb_benchmark_matrix", "-c", json.dumps(conf)],
            env=airflow_env,
            capture_output=True,
            text=True,
            timeout=1200,
        )
    log = res.stdout + res.stderr
    m = _FINISHED.search(log)
    assert m, log[-5000:]
    return {
        "results": results,
        "run_id": m.group(2),
        "state": m.group(3),
        "log": log,
        "census": census,
        "states": task_states(airflow_env, m.group(2)),
    }


def test_smoke_run_completes_publishes_and_its_facts_hold(smoke_run: dict) -> None:
    """Completion, publication, sanity and the deterministic facts of all 12 cells (see ``assert_run_correct``)."""
    try:
        out = assert_run_correct(smoke_run["results"], smoke_run["run_id"], smoke_run["states"])
    except AssertionError:
        print(smoke_run["log"][-6000:])
        raise
    # Exact facts read back from the stored rows, per engine (the check compares them to the same numbers).
    v = read_dataset(smoke_run["results"], VALIDATIONS).to_pandas()
    v = v[v.run_id == smoke_run["run_id"]]
    assert set(v["check_kind"]) == {"sanity", "reproduction", "drift"}
    rep = v[v["check_kind"] == "reproduction"]
    for engine in ("postgres-16", "postgres-17", "postgres-18"):
        mine = rep[rep.engine_id == engine].set_index("expectation")
        assert mine.loc["rel_small_hot_count", "observed"] == 119 and mine.loc["expression_index_no_hot", "observed"] == 0, engine
    assert out["rows"] == len(v)
    assert (smoke_run["results"] / "gx" / "uncommitted" / "data_docs" / "local_site" / "index.html").is_file()  # GX Data Docs


def _plant(results: Path, run_id: str, pick: Any, change: Callable[[float], float]) -> int:
    """Rewrite the run's published measurements with ``change`` applied to the rows ``pick(df)`` selects; return how many."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from jsonbench.dataset.publish import replace_run

    for path in sorted((results / MEASUREMENTS).rglob("part-0.parquet")):
        table = pq.read_table(path)
        df = table.to_pandas()
        if not (df.run_id == run_id).any():
            continue
        rows = (df.run_id == run_id) & pick(df)
        df.loc[rows, "value"] = df.loc[rows, "value"].map(change)
        df.loc[rows, "samples"] = df.loc[rows, "samples"].map(lambda s: None if s is None else [change(x) for x in s])
        replace_run(path.parent, pa.Table.from_pandas(df, schema=table.schema, preserve_index=False))
        return int(rows.sum())
    raise AssertionError(f"no published file holds run {run_id}")


def _row(engine: str | None, workload: str, metric: str, variant: str | None = None) -> Callable[[Any], Any]:
    def pick(df: Any) -> Any:
        rows = (df.workload == workload) & (df.metric == metric)
        if engine is None:  # the first engine of the family that has the row
            engine_id = df[rows].engine_id.min()
            rows &= df.engine_id == engine_id
        else:
            rows &= df.engine_id == engine
        return rows & (df.variant == variant) if variant is not None else rows

    return pick


PLANTS = {
    "hot_count": (_row("postgres-17", "rel_small", "n_tup_hot_upd"), lambda x: x - 1, "rel_small_hot_count"),
    "heap_size": (_row("postgres-18", "storage", "heap_bytes", "products_doc"), lambda x: x * 1.05, "document_heap_bytes"),
    "sqlite_page_ratio": (_row(None, "keys_10", "file_pages", "jsonb"), lambda x: x * 1.1, "keys_10_jsonb_fewer_pages"),
}


def test_planted_wrong_facts_fail_the_assertion(smoke_run: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The smoke run's published rows with three deterministic facts made wrong (a HOT count on PostgreSQL 17, a heap
    size on 18, an SQLite page ratio), checked again: the assertion above (``assert_run_correct``) fails and names each.
    One check of the three plants (each on its own cell and finding): a test that passed any run would pass this."""
    from jsonbench.checks.examine import ChecksFailed, check_run

    monkeypatch.setenv("JSONBENCH_DATA_DOCS", "0")  # the pages take seconds and prove nothing here
    results = tmp_path / "results"
    shutil.copytree(smoke_run["results"], results, ignore=shutil.ignore_patterns("gx", "alerts", VALIDATIONS))
    for pick, change, _ in PLANTS.values():
        assert _plant(results, smoke_run["run_id"], pick, change) >= 1
    planned = {r.cell.cell_id: r.cell for r in Staging(results, smoke_run["run_id"]).records()}  # the plan's cells, as staged
    run = dataclasses.replace(next(iter(planned.values())).run, results_dir=str(results))
    with pytest.raises(ChecksFailed):
        check_run(run, list(planned.values()))
    states = {**smoke_run["states"], "check": "failed"}
    with pytest.raises(AssertionError) as caught:
        assert_run_correct(results, smoke_run["run_id"], states)
    for plant, (_, _, finding) in PLANTS.items():
        assert finding in str(caught.value), (plant, str(caught.value)[:2000])


def test_one_engine_at_a_time(smoke_run: dict) -> None:
    """Sampled every 0.2 s from /proc during the real run: never two engines alive at once, and every cell's was seen."""
    census = smoke_run["census"]
    assert census.samples > 100, "the census did not sample the run"
    assert len(census.peak) <= 1, f"engines alive at the same time: {census.peak}"
    planned_cells = {r.cell.cell_id for r in Staging(smoke_run["results"], smoke_run["run_id"]).records()}
    assert len({line.split()[2] for line in census.seen}) >= len(planned_cells) - 2  # a 1-2 s cell may fall between samples


def test_every_engine_reports_every_metric_of_every_suite(smoke_run: dict) -> None:
    m = load_matrix()
    df = read_dataset(smoke_run["results"]).to_pandas()
    df = df[df.run_id == smoke_run["run_id"]]
    assert not df.empty
    for suite in m.raw["default_suites"]:
        family = m.suites[suite]["family"]
        engines = [e for e in m.raw["default_engines"] if m.engines[e]["family"] == family]
        expected = set(get_suite(suite).expected_metrics())
        for engine in engines:
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


def test_postgres_rows_record_build_and_checksums(smoke_run: dict) -> None:
    df = read_dataset(smoke_run["results"]).to_pandas()
    pg = df[df.engine == "postgres"]
    assert set(pg.engine_id) >= {"postgres-16", "postgres-17", "postgres-18"}
    assert pg.engine_configure.str.contains("--prefix").all()
    assert pg.data_checksums.all()
    assert all(json.loads(s)["max_connections"] for s in pg.settings)


def test_staging_has_phase_timings_for_the_overhead_report(smoke_run: dict) -> None:
    recs = [r for r in Staging(smoke_run["results"], smoke_run["run_id"]).records() if r.workload not in CANARY_RECORDS]
    assert recs
    # Every setup record times the engine start, every workload record its task.
    assert all(("provision" in r.phases) if r.workload == "_setup" else ("task" in r.phases) for r in recs)
    # And the run as a whole spent time loading and measuring, the floor of the overhead ratio.
    assert sum(r.phases.get("load", 0) for r in recs) > 0 and sum(r.phases.get("measure", 0) for r in recs) > 0


def test_no_server_outlives_the_run(smoke_run: dict, leak_check) -> None:
    assert leak_check() == []


def test_failed_cell_publishes_nothing_keeps_earlier_runs_and_alerts(smoke_run: dict, dags_test, airflow_env, leak_check) -> None:
    """A server that cannot do its work (read-only by setting) fails every workload: nothing is published, the earlier
    run stays intact, and the run itself alerts (its check never ran, so only the run's outcome can)."""
    before = read_dataset(smoke_run["results"]).to_pandas()
    conf = {
        "scale": "smoke",
        "results_dir": str(smoke_run["results"]),
        "hardware_label": "ci",
        "engines": ["postgres-17"],
        "suites": ["large_document_update"],
        "server_settings": {"default_transaction_read_only": "on"},
    }
    out = dags_test("jsonb_benchmark_matrix", conf)
    assert out["state"] == "failed"
    assert "read-only transaction" in out["log"]
    states = task_states(airflow_env, out["run_id"])
    assert states["publish"] == "failed" and states["check"] == "upstream_failed" and states["outcome"] == "failed"
    assert "ALERT jsonbench: run " + out["run_id"] in out["log"]
    alert = smoke_run["results"] / "alerts"
    assert any("large_document_update__postgres-17.rel_small" in p.read_text() for p in alert.glob("*.md"))
    after = read_dataset(smoke_run["results"]).to_pandas()
    assert len(after) == len(before) and set(after.run_id) == set(before.run_id)
    assert leak_check() == []


def test_missing_build_fails_in_plan_before_any_engine_starts(smoke_run: dict, dags_test, airflow_env, leak_check, tmp_path: Path) -> None:
    conf = {"scale": "smoke", "results_dir": str(tmp_path / "r"), "engines": ["postgres-16"], "suites": ["large_document_update"]}
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


def test_bad_parameter_is_refused_before_the_run(dags_test, tmp_path: Path) -> None:
    out = dags_test("jsonb_benchmark_matrix", {"scale": "enormous", "results_dir": str(tmp_path)})
    assert out["returncode"] != 0 and out["state"] is None
    assert "Invalid input for param scale" in out["log"]
