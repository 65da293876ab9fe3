"""The real benchmark DAG, run with `airflow dags test` against real servers at smoke scale."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jsonbench.matrix import load_matrix
from jsonbench.dataset.publish import read_dataset
from jsonbench.dataset.staging import Staging
from jsonbench.suites import get_suite

pytestmark = pytest.mark.dag


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory, airflow_env) -> dict:
    """One run of the default matrix (every default engine and suite) at smoke scale."""
    import subprocess
    import sys

    from tests.conftest import _FINISHED

    results = tmp_path_factory.mktemp("dagrun") / "results"
    conf = {"scale": "smoke", "results_dir": str(results), "hardware_label": "ci"}
    res = subprocess.run([str(Path(sys.executable).parent / "airflow"), "dags", "test", "jsonb_benchmark_matrix", "-c", json.dumps(conf)],
                         env=airflow_env, capture_output=True, text=True, timeout=900)
    log = res.stdout + res.stderr
    m = _FINISHED.search(log)
    assert m, log[-5000:]
    return {"results": results, "run_id": m.group(2), "state": m.group(3), "log": log}


def test_smoke_run_succeeds(smoke_run: dict) -> None:
    assert smoke_run["state"] == "success", smoke_run["log"][-8000:]


def test_every_engine_reports_every_metric_of_every_suite(smoke_run: dict) -> None:
    m = load_matrix()
    df = read_dataset(smoke_run["results"]).to_pandas()
    df = df[df.run_id == smoke_run["run_id"]]
    assert not df.empty
    for suite in m.raw["default_suites"]:
        family = m.suites[suite]["family"]
        engines = [e for e in m.raw["default_engines"] if m.engines[e]["family"] == family]
        scale_params = m.scales["smoke"][suite]
        expected = set(get_suite(suite).expected_metrics(scale_params))
        for engine in engines:
            got = df[(df.suite == suite) & (df.engine_id == engine)]
            have = set(zip(got.workload, got.metric))
            assert expected <= have, f"{suite} on {engine} misses {sorted(expected - have)[:10]}"
            ok = got[got.status == "ok"]
            assert ok.value.notna().all()
            na = got[got.status == "not_applicable"]
            assert na.reason.notna().all() and (na.reason.str.len() > 0).all()
            # Full context on every row.
            assert got.engine_version.str.startswith(m.engines[engine]["version"]).all()
            for col in ("engine_build", "settings", "git_revision", "host_cpu_model", "scale"):
                assert got[col].notna().all(), col
            assert (got.hardware_label == "ci").all() and (got.scale == "smoke").all()


def test_postgres_rows_record_build_and_checksums(smoke_run: dict) -> None:
    df = read_dataset(smoke_run["results"]).to_pandas()
    pg = df[df.engine == "postgres"]
    assert set(pg.engine_id) >= {"postgres-16", "postgres-17", "postgres-18"}
    assert pg.engine_configure.str.contains("--prefix").all()
    assert pg.data_checksums.all()
    assert all(json.loads(s)["max_connections"] for s in pg.settings)


def test_staging_has_phase_timings_for_the_overhead_report(smoke_run: dict) -> None:
    recs = list(Staging(smoke_run["results"], smoke_run["run_id"]).records())
    assert recs
    # Every setup record times the engine start, every workload record its task.
    assert all(("provision" in r.phases) if r.workload == "_setup" else ("task" in r.phases) for r in recs)
    # And the run as a whole spent time loading and measuring, the floor of the overhead ratio.
    assert sum(r.phases.get("load", 0) for r in recs) > 0 and sum(r.phases.get("measure", 0) for r in recs) > 0


def test_no_server_outlives_the_run(smoke_run: dict, leak_check) -> None:
    assert leak_check() == []


def test_failed_cell_publishes_nothing_and_keeps_earlier_runs(smoke_run: dict, dags_test, leak_check) -> None:
    """A server that cannot do its work (read-only by setting) fails the run; the earlier run stays intact."""
    before = read_dataset(smoke_run["results"]).to_pandas()
    conf = {"scale": "smoke", "results_dir": str(smoke_run["results"]), "hardware_label": "ci", "engines": ["postgres-17"],
            "suites": ["large_document_update"], "server_settings": {"default_transaction_read_only": "on"}}
    out = dags_test("jsonb_benchmark_matrix", conf)
    assert out["state"] == "failed"
    assert "read-only transaction" in out["log"]
    after = read_dataset(smoke_run["results"]).to_pandas()
    assert len(after) == len(before) and set(after.run_id) == set(before.run_id)
    assert leak_check() == []


def test_missing_build_fails_in_plan_before_any_engine_starts(smoke_run: dict, dags_test, leak_check, tmp_path: Path) -> None:
    conf = {"scale": "smoke", "results_dir": str(tmp_path / "r"), "engines": ["postgres-16"], "suites": ["large_document_update"]}
    out = dags_test("jsonb_benchmark_matrix", conf, extra_env={"JSONBENCH_ENGINES_DIR": str(tmp_path / "no-engines")})
    assert out["state"] == "failed"
    assert "run ./bin/setup" in out["log"]
    assert "provision" not in " ".join(l for l in out["log"].splitlines() if "[DAG TEST] starting" in l)
    assert not (tmp_path / "r" / "measurements").exists()


def test_bad_parameter_is_refused_before_the_run(dags_test, tmp_path: Path) -> None:
    out = dags_test("jsonb_benchmark_matrix", {"scale": "enormous", "results_dir": str(tmp_path)})
    assert out["returncode"] != 0 and out["state"] is None
    assert "Invalid input for param scale" in out["log"]
