"""Suite "catalogue" (seed 000) end to end on real embedded PostgreSQL servers, at smoke scale.

Every workload runs through the driver (``tasks.provision`` / ``run_workload`` / ``teardown``) on
PostgreSQL 17; the checks are completeness (every expected metric present, or not applicable with a
reason) and the directions physics decides: a jsonb heap bigger than the relational one, more WAL
per fat-document update in jsonb, no HOT update of the document design with its GIN and expression
indexes, no TOAST growth when the stock has its own column. Also: the workloads leave the shared
tables as they found them, JSON_TABLE is not applicable on 16, and a missing pgbench stops the run
before anything is loaded. No timing is asserted.

In the matrix tier: every workload twice is minutes of a worker, and the default tier's narrowed DAG runs the
suite once through the real DAG.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

import pytest

from jsonbench.dataset.measurement import Measurement
from jsonbench.dataset.staging import Staging
from jsonbench.engines.base import engine_for
from jsonbench.matrix import Matrix, load_matrix
from jsonbench.orchestration import tasks
from jsonbench.pgbench import PgbenchUnavailable
from jsonbench.suites import get_suite
from tests.conftest import planned_of

SUITE = "catalogue"

#: A fingerprint of the shared tables: row counts and a hash over every row in id order.
FINGERPRINT = """
SELECT (SELECT md5(string_agg(md5(d::text), '' ORDER BY id)) FROM products_doc AS d),
       (SELECT md5(string_agg(md5(r::text), '' ORDER BY id)) FROM products_rel AS r),
       (SELECT md5(string_agg(md5(t::text), '' ORDER BY product_id, tag)) FROM product_tags AS t),
       (SELECT string_agg(indexrelid::regclass::text, ',' ORDER BY 1) FROM pg_index
         WHERE indrelid IN ('products_doc'::regclass, 'products_rel'::regclass, 'product_tags'::regclass)),
       (SELECT string_agg(relname, ',' ORDER BY relname) FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace),
       (SELECT count(*) FROM pg_statistic_ext)
"""


def _fingerprint(cell: dict[str, Any], handle: dict[str, Any]) -> tuple[Any, ...]:
    engine = engine_for(cell)
    with engine.session(engine.load_handle(handle)) as session:
        return tuple(session.execute(FINGERPRINT)[0])


def _staged(cell: dict[str, Any]) -> dict[tuple[str, str, str], Measurement]:
    out = {}
    for rec in Staging(cell.run.results_dir, cell.run.run_id).records():
        for m in rec.measurements:
            out[(m.workload, m.variant, m.metric)] = m
    return out


def _value(ms: dict[tuple[str, str, str], Measurement], workload: str, variant: str, metric: str) -> float:
    m = ms[(workload, variant, metric)]
    assert m.status == "ok", f"{workload}/{variant}/{metric} is {m.status}: {m.reason}"
    assert m.value is not None and math.isfinite(m.value), f"{workload}/{variant}/{metric} = {m.value}"
    return m.value


def _two_repetitions() -> Matrix:
    """The matrix with two pgbench repetitions at smoke, so that repetitions can be compared."""
    raw = copy.deepcopy(load_matrix().raw)
    raw["scales"]["smoke"][SUITE]["pgbench_repetitions"] = 2
    return Matrix(raw)


def test_every_workload_on_postgres_17(make_cells: Callable[..., list[Any]], leak_check: Callable[[], list[str]]) -> None:
    (cell,) = make_cells(SUITE, engines=["postgres-17"], run_id="catalogue_17", matrix=_two_repetitions())
    suite = get_suite(SUITE)
    suite.preflight(cell)
    handle = tasks.provision(planned_of(cell), cell.cell_id)
    try:
        before = _fingerprint(cell, handle)
        for workload in suite.workloads:
            tasks.run_workload(planned_of(cell), cell.cell_id, handle, workload)
        after = _fingerprint(cell, handle)
    finally:
        tasks.teardown(planned_of(cell), cell.cell_id, handle)
    assert leak_check() == []
    assert after == before, "a workload left the shared tables (or their indexes, statistics, extra tables) changed"

    ms = _staged(cell)
    # Completeness: every expected (workload, metric) is there, measured or not applicable with a reason.
    present = {(w, m): meas for (w, _v, m), meas in ms.items()}
    missing = [pair for pair in suite.expected_metrics() if pair not in present]
    assert missing == [], f"metrics missing: {missing}"
    for meas in ms.values():
        if meas.status == "not_applicable":
            assert meas.reason, f"{meas.workload}/{meas.variant}/{meas.metric} not applicable without a reason"
        elif meas.metric not in ("fpi_share",):
            assert all(math.isfinite(s) for s in meas.samples), f"{meas.workload}/{meas.variant}/{meas.metric}: {meas.samples}"

    products = cell.scale_params["products"]
    # One source, both designs: same rows, same values, about three de-duplicated tags per product.
    assert _value(ms, "load", "doc", "rows") == _value(ms, "load", "rel", "rows") == products
    assert _value(ms, "load", "default", "design_mismatches") == 0
    assert 2 * products < _value(ms, "load", "tags", "rows") <= 3 * products

    # Storage: every row carries its key names in jsonb.
    assert _value(ms, "storage", "products_doc", "heap_bytes") > _value(ms, "storage", "products_rel", "heap_bytes")
    assert _value(ms, "storage", "doc_document", "avg_value_bytes") > _value(ms, "storage", "rel_row", "avg_value_bytes")
    # Indexes: an expression B-tree stores the extracted value, so it is exactly its column twin's size.
    assert _value(ms, "indexes", "price_doc", "index_bytes") == _value(ms, "indexes", "price_rel", "index_bytes")
    assert _value(ms, "indexes", "gin_jsonb_ops", "index_bytes") > _value(ms, "indexes", "gin_path_ops", "index_bytes")

    # Reads: every script ran without failures, and the percentiles from the *sampled* transaction log are ordered.
    for script in ("cb_doc_gin", "cb_doc_btree", "cb_rel", "price_doc", "price_rel", "full_doc", "full_rel", "tag_doc", "tag_rel"):
        assert _value(ms, "reads", script, "tps") > 0
        assert _value(ms, "reads", script, "failures") == 0
        assert (
            _value(ms, "reads", script, "latency_p50")
            <= _value(ms, "reads", script, "latency_p95")
            <= _value(ms, "reads", script, "latency_p99")
        )
        rates = ms[("reads", script, "tps")].extra["log_sampling_rate"]
        assert len(rates) == 2 and all(0 < r <= 1 for r in rates)
        assert rates[0] < 1, "a timed run with no earlier tps samples its log at the default rate"
    assert _value(ms, "reads", "default", "clients") >= 1
    # Buffers: the GIN probe answers "tag X in category Y" inside the index; the join reads the category's rows.
    assert _value(ms, "buffers", "tag_rel", "buffers_total") > _value(ms, "buffers", "tag_doc", "buffers_total")
    assert _value(ms, "buffers", "tag_rel", "rows") == _value(ms, "buffers", "tag_doc", "rows")

    # Scan: every measured plan reads the whole table (no index-ordered early stop) and returns 50 categories;
    # workers that launched are recorded, never more than planned, none without parallel query.
    for variant in ("doc_workers_2", "rel_workers_2", "doc_workers_0", "rel_workers_0"):
        assert _value(ms, "scan", variant, "full_scan_plan") == 1
        assert _value(ms, "scan", variant, "groups") == 50
        assert 0 <= _value(ms, "scan", variant, "workers_launched") <= _value(ms, "scan", variant, "workers_planned") <= 2
    for design in ("doc", "rel"):
        assert _value(ms, "scan", f"{design}_workers_0", "workers_planned") == 0
        assert ms[("scan", f"{design}_workers_2", "workers_launched")].extra["min_parallel_table_scan_size"] == "0"

    # Updates: any expression or GIN index on the document makes every update of it non-HOT.
    for sync in ("off", "on"):
        assert _value(ms, "updates", f"doc_sync_{sync}", "n_tup_upd") > 0
        assert _value(ms, "updates", f"doc_sync_{sync}", "hot_share") == 0
        assert _value(ms, "updates", f"rel_sync_{sync}", "n_tup_upd") > 0
        fpi = ms[("updates", f"doc_sync_{sync}", "fpi_share")]
        assert fpi.status == "not_applicable" or 0 < fpi.value <= 1
    assert _value(ms, "updates", "rel_sync_off", "n_tup_hot_upd") > 0  # stock is not indexed
    # Every run, sync on included, starts on its own un-updated copy, and every committed update added 1 to the stock.
    for variant in ("doc_sync_on", "doc_sync_off", "rel_sync_on", "rel_sync_off"):
        upd = ms[("updates", variant, "n_tup_upd")]
        assert upd.extra["start_stock_offset"] == [0, 0], variant
        assert upd.extra["stock_added"] == list(ms[("updates", variant, "transactions")].samples), variant
        assert list(upd.samples) == list(ms[("updates", variant, "transactions")].samples), variant
    # The document update also maintains the GIN and expression indexes: more WAL per update.
    assert _value(ms, "updates", "doc_sync_off", "wal_bytes_per_update") > _value(ms, "updates", "rel_sync_off", "wal_bytes_per_update")
    # The fixed-count runs: the same number of updates on both sides (the seed's per row), whatever the host's speed,
    # by one client whatever the machine's clients, each on its own un-updated copy; the document's is never HOT, and
    # only the bytes that are not full-page images remain once those are paid for.
    from jsonbench.suites.catalogue.updates import SEED_PRODUCTS, SEED_UPDATES

    expected = round(SEED_UPDATES * int(products) / SEED_PRODUCTS)
    assert ms[("updates", "doc_over_rel_fixed_1client", "wal_ratio")].extra["clients"] == 1
    assert not any(v == "doc_fixed" for (_, v, _) in ms), "the two-client series name is gone"
    for design in ("doc", "rel"):
        upd = ms[("updates", f"{design}_fixed_1client", "n_tup_upd")]
        assert list(upd.samples) == [float(expected)] * 2, design
        assert upd.extra["start_stock_offset"] == [0, 0], design
        assert upd.extra["stock_added"] == [expected] * 2, design
        record = ms[("updates", f"{design}_fixed_1client", "wal_record_bytes_per_update")]
        wal = _value(ms, "updates", f"{design}_fixed_1client", "wal_bytes_per_update")
        assert record.status == "not_applicable" or 0 < record.value < wal
    assert _value(ms, "updates", "doc_fixed_1client", "n_tup_hot_upd") == 0
    assert ms[("updates", "doc_over_rel_fixed_1client", "wal_ratio")].extra["updates_per_client"] == expected

    # Fat documents: the TOASTed value is rewritten whole; the column update carries the TOAST pointer over.
    assert _value(ms, "fat_update", "doc", "avg_value_bytes") > 7000
    assert _value(ms, "fat_update", "doc", "wal_bytes_per_update") > 5 * _value(ms, "fat_update", "rel", "wal_bytes_per_update")
    assert _value(ms, "fat_update", "doc", "toast_growth") > 0
    assert _value(ms, "fat_update", "rel", "toast_growth") == 0
    # Every repetition starts from the same heap and TOAST: a fresh copy of the pristine documents.
    for design in ("doc", "rel"):
        for metric in ("toast_bytes_before", "heap_bytes_before"):
            before = ms[("fat_update", design, metric)].samples
            assert len(before) == 2 and before[0] == before[1] > 0, (design, metric, before)
        assert all(g > 0 for g in ms[("fat_update", "doc", "toast_growth")].samples)
    # The fat fixed-count runs: the seed's updates per document on each side, whatever the host's speed, each on
    # a fresh copy; the document's TOAST grows by about one copy per update, the column's not at all.
    from jsonbench.suites.catalogue.fat_update import SEED_FAT_DOCS
    from jsonbench.suites.catalogue.fat_update import SEED_UPDATES as FAT_SEED_UPDATES

    wal_fixed = ms[("fat_update", "doc_over_rel_fixed_1client", "wal_ratio")]
    assert wal_fixed.extra["clients"] == 1
    for design in ("doc", "rel"):
        total = round(FAT_SEED_UPDATES[design] * int(cell.scale_params["fat_docs"]) / SEED_FAT_DOCS)
        assert wal_fixed.extra["updates_per_client"][design] == total, design
        assert list(ms[("fat_update", f"{design}_fixed_1client", "transactions")].samples) == [float(total)] * 2, design
    assert wal_fixed.extra["updates_per_client"]["rel"] > wal_fixed.extra["updates_per_client"]["doc"]
    assert wal_fixed.value > 5
    assert all(g > 0 for g in ms[("fat_update", "doc_fixed_1client", "toast_growth")].samples)
    assert _value(ms, "fat_update", "rel_fixed_1client", "toast_growth") == 0
    # Reading one int from an 8 kB document vs from its column: both measured per repetition.
    assert len(ms[("fat_update", "doc", "read_latency_avg")].samples) == 2
    assert _value(ms, "fat_update", "rel", "read_latency_avg") > 0
    # ... and inside the server, the same reads on every host (one per document, 20,000 at least, from the fixed seed).
    from jsonbench.suites.catalogue.fat_update import MIN_SERVER_READS

    for design in ("doc", "rel"):
        server = ms[("fat_update", design, "read_server_avg")]
        assert len(server.samples) == 2 and all(v > 0 for v in server.samples), design
        assert server.extra["reads"] == max(int(cell.scale_params["fat_docs"]), MIN_SERVER_READS), design

    # Planner: 0.5 % default for equality on an unknown expression (1/6 of rows are red), 33 % for an inequality.
    assert _value(ms, "planner", "color_doc_expr", "error_factor_before") > 10
    assert _value(ms, "planner", "color_doc_expr", "error_factor_after") < 2
    assert _value(ms, "planner", "stock_doc_expr", "error_factor_after") > 5  # statistics cover the uncast text only
    assert _value(ms, "planner", "color_rel", "error_factor_before") < 2
    assert _value(ms, "planner", "color_doc_expr", "actual_rows") == _value(ms, "planner", "color_rel", "actual_rows")

    # JSON_TABLE (17): the same values as ->>.
    assert _value(ms, "json_table", "json_table", "results_match") == 1
    assert _value(ms, "json_table", "json_table", "scan_time") > 0

    # Hybrid: stock outside the document, unindexed, fillfactor 90: HOT updates; a fresh table per repetition.
    assert _value(ms, "hybrid", "default", "hot_share") > 0.5
    heap = ms[("hybrid", "default", "heap_bytes")].samples
    assert len(heap) == 2 and heap[0] == heap[1]


def test_json_table_not_applicable_on_16(make_cells: Callable[..., list[Any]], leak_check: Callable[[], list[str]]) -> None:
    (cell,) = make_cells(SUITE, engines=["postgres-16"], run_id="catalogue_16")
    handle = tasks.provision(planned_of(cell), cell.cell_id)
    try:
        tasks.run_workload(planned_of(cell), cell.cell_id, handle, "json_table")
    finally:
        tasks.teardown(planned_of(cell), cell.cell_id, handle)
    assert leak_check() == []
    ms = [m for m in _staged(cell).values() if m.workload == "json_table"]
    assert ms and all(m.status == "not_applicable" for m in ms)
    assert all("json_table" in (m.reason or "") and "17" in (m.reason or "") for m in ms)
    assert {m.metric for m in ms} >= {"point_latency", "scan_time", "results_match", "time_ratio"}


def test_missing_pgbench_fails_before_any_load(
    make_cells: Callable[..., list[Any]], results_dir: Any, leak_check: Callable[[], list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JSONBENCH_PGBENCH", "/nonexistent/pgbench")
    # The DAG's plan task: refused before any engine starts.
    with pytest.raises(PgbenchUnavailable, match="/nonexistent/pgbench"):
        tasks.plan({"scale": "smoke", "suites": [SUITE], "engines": ["postgres-16"], "results_dir": str(results_dir)}, "no_pgbench", None)
    assert leak_check() == []
    # And the setup task on its own (a caller that skipped plan): the load refuses before loading anything.
    (cell,) = make_cells(SUITE, engines=["postgres-16"], run_id="no_pgbench")
    with pytest.raises(PgbenchUnavailable, match="cannot be run"):
        tasks.provision(planned_of(cell), cell.cell_id)
    assert leak_check() == []
    assert not any(rec.workload == "_setup" for rec in Staging(cell.run.results_dir, "no_pgbench").records())
