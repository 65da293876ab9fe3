"""Suite "large-document update" (seed 004) on a real server: every metric, and the physics the seed found."""

from __future__ import annotations

import math

import pytest

from jsonbench.dataset.staging import Staging
from jsonbench.orchestration import tasks
from jsonbench.suites import get_suite
from tests.conftest import planned_of

#: HOT updates of the 250 updated rows per workload at smoke (500 rows): facts of the page layout, not samples.
HOT_AT_SMOKE = {"rel_small": 119, "json_small": 117, "rel_big": 123, "json_big": 123, "json_big_idx": 0}


@pytest.fixture(scope="module")
def measured(tmp_path_factory) -> dict:
    """Run the whole suite once on PostgreSQL 16 (the seed's major version) at smoke scale."""
    from jsonbench.cell import RunRef
    from jsonbench.orchestration.plan import plan_cells, resolve

    results = tmp_path_factory.mktemp("ldu")
    cfg = resolve(
        {"scale": "smoke", "engines": ["postgres-16"], "suites": ["large_document_update"], "results_dir": str(results), "repetitions": 2},
        env={},
    )
    run = RunRef(run_id="ldu_test", logical_date="2026-11-29T02:00:00+00:00", hardware_label="t", results_dir=str(results), scale=cfg.scale)
    cell = plan_cells(cfg, run)[0]
    handle = tasks.provision(planned_of(cell), cell.cell_id)
    try:
        for w in get_suite("large_document_update").workloads:
            tasks.run_workload(planned_of(cell), cell.cell_id, handle, w)
    finally:
        tasks.teardown(planned_of(cell), cell.cell_id, handle)
    out: dict = {"rows": cell.scale_params["rows"]}
    for rec in Staging(results, "ldu_test").records():
        for m in rec.measurements:
            out[(m.workload, m.metric)] = m
    return out


def test_every_expected_metric_is_present_and_finite(measured: dict) -> None:
    suite = get_suite("large_document_update")
    for workload, metric in suite.expected_metrics():
        m = measured[(workload, metric)]
        assert m.status == "ok" and len(m.samples) == 2, (workload, metric)
        assert all(math.isfinite(s) for s in m.samples)
        assert m.value >= 0


def test_half_the_rows_updated_and_counted_after_flush(measured: dict) -> None:
    half = measured["rows"] // 2
    for w in get_suite("large_document_update").workloads:
        assert measured[(w, "rows_updated")].value == half
        assert measured[(w, "n_tup_upd")].value == half  # statistics really flushed before reading
        # Exact at 500 rows (fillfactor 70; include/expectations/large_document_update.reproduction.json).
        assert measured[(w, "n_tup_hot_upd")].value == HOT_AT_SMOKE[w], (w, measured[(w, "n_tup_hot_upd")].value)
        assert measured[(w, "hot_share")].value == pytest.approx(HOT_AT_SMOKE[w] / half), w


def test_expression_index_allows_no_hot_update(measured: dict) -> None:
    assert measured[("json_big_idx", "n_tup_hot_upd")].value == 0
    assert measured[("json_big", "n_tup_hot_upd")].value > 0  # fillfactor 70 leaves room without the index


def test_big_jsonb_update_rewrites_the_toasted_document(measured: dict) -> None:
    assert measured[("rel_big", "toast_growth")].value == 0
    assert measured[("json_big", "toast_growth")].value > 0
    # Each rewritten ~11 kB document lands in WAL; a status column update does not touch it.
    assert measured[("json_big", "wal_bytes")].value > 10 * measured[("rel_big", "wal_bytes")].value
    assert measured[("json_big", "avg_payload_bytes")].value > 2000 > measured[("json_small", "avg_payload_bytes")].value


def test_sizes_are_recorded_before_and_after(measured: dict) -> None:
    for w in ("rel_big", "json_big"):
        assert measured[(w, "toast_bytes_before")].value > 0
        assert measured[(w, "heap_bytes_after")].value >= measured[(w, "heap_bytes_before")].value
    assert measured[("json_big_idx", "index_bytes_after")].value > measured[("json_big", "index_bytes_after")].value
