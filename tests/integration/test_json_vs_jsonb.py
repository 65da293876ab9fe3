"""Suite "json vs jsonb" (seed 001) on real servers: every metric, the size physics, and lz4 gating both ways.

The workloads run through the DAG's own task functions (provision, run_workload, teardown) at the
smoke scale: all six shapes on the embedded PostgreSQL 17 (built without lz4: the lz4 rows are not
applicable, with the reason). The lz4 path runs on Debian's PostgreSQL 17 and 18 (built with lz4) in the
Docker tier's images: tests/docker/test_lz4_debian.py. No
assertion looks at a timing; sizes and compression are decided by PostgreSQL's storage format
and its TOAST threshold, so those are asserted.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from jsonbench.cell import RunRef
from jsonbench.dataset.measurement import Measurement
from jsonbench.dataset.staging import Staging
from jsonbench.orchestration import tasks
from jsonbench.orchestration.plan import plan_cells, resolve
from jsonbench.suites import get_suite
from jsonbench.suites.json_vs_jsonb import COMPRESSIONS, LAYOUT_METRICS, LAYOUTS, STORAGE_METRICS, TYPE_METRICS, TYPES
from tests.conftest import planned_of

SUITE = "json_vs_jsonb"
#: Below PostgreSQL's TOAST threshold (TOAST_TUPLE_THRESHOLD, about 2 kB for 8 kB pages) a row is
#: stored as it is; the tuple header and the id column take about 28 bytes of it.
TOAST_THRESHOLD = 2032

Measured = dict[tuple[str, str, str], Measurement]


def _run(
    results: Path, engine: str, workloads: tuple[str, ...], run_id: str, backend: str | None = None
) -> tuple[Measured, dict[str, Any], dict[str, Any]]:
    """Provision ``engine``, run ``workloads`` as the DAG's tasks do, tear down; return measurements, facts, cell."""
    params = {"scale": "smoke", "engines": [engine], "suites": [SUITE], "results_dir": str(results)}
    cfg = resolve({**params, **({"backend": backend} if backend else {})}, env={})
    run = RunRef(run_id=run_id, logical_date="2026-11-29T02:00:00+00:00", hardware_label="t", results_dir=str(results), scale=cfg.scale)
    cell = plan_cells(cfg, run)[0]
    handle = tasks.provision(planned_of(cell), cell.cell_id)
    try:
        for w in workloads:
            tasks.run_workload(planned_of(cell), cell.cell_id, handle, w)
    finally:
        tasks.teardown(planned_of(cell), cell.cell_id, handle)
    staging = Staging(results, run_id)
    measured: Measured = {}
    for rec in staging.records():
        for m in rec.measurements:
            key = (m.workload, m.variant, m.metric)
            assert key not in measured, f"{key} recorded twice"
            measured[key] = m
    facts = staging.read_engine(cell.cell_id)
    assert facts is not None
    return measured, facts, cell


@pytest.fixture(scope="module")
def on_17(tmp_path_factory: pytest.TempPathFactory) -> tuple[Measured, dict[str, Any], dict[str, Any]]:
    """Every workload once on the embedded PostgreSQL 17 (no lz4)."""
    return _run(tmp_path_factory.mktemp("jvj17"), "postgres-17", get_suite(SUITE).workloads, "jvj_test_17")


def _variants(kind: str) -> list[str]:
    """The variant names of one kind of metric: per layout, per (layout, type), per (layout, type, compression)."""
    if kind == "layout":
        return list(LAYOUTS)
    if kind == "type":
        return [f"{lay}.{typ}" for lay in LAYOUTS for typ in TYPES]
    return [f"{lay}.{typ}.{comp}" for lay in LAYOUTS for typ in TYPES for comp in COMPRESSIONS]


def test_every_metric_of_every_variant_is_present_or_not_applicable(on_17) -> None:
    measured, _, cell = on_17
    suite = get_suite(SUITE)
    grid = [(LAYOUT_METRICS, "layout"), (TYPE_METRICS, "type"), (STORAGE_METRICS, "storage")]
    for workload in suite.workloads:
        for metrics, kind in grid:
            for variant in _variants(kind):
                for metric, unit in metrics:
                    m = measured.get((workload, variant, metric))
                    assert m is not None, f"missing {workload}/{variant}/{metric}"
                    assert m.unit == unit
                    if m.status == "not_applicable":
                        assert m.reason and not m.samples, (workload, variant, metric)
                        continue
                    assert m.samples and all(math.isfinite(s) and s >= 0 for s in m.samples), (workload, variant, metric, m.samples)
    # The contract's list: every (workload, metric) it promises is among what was recorded.
    recorded = {(w, metric) for (w, _, metric) in measured}
    assert set(suite.expected_metrics()) <= recorded


def test_repetitions_and_read_runs_as_configured(on_17) -> None:
    measured, _, cell = on_17
    reps, read_runs = cell.repetitions, cell.scale_params["read_runs"]
    for workload in get_suite(SUITE).workloads:
        for typ in TYPES:
            variant = f"compact.{typ}"
            assert len(measured[(workload, variant, "read_time")].samples) == read_runs
            for metric in ("load_time", "update_time"):
                assert len(measured[(workload, variant, metric)].samples) == reps
        assert len(measured[(workload, "pretty.jsonb", "gin_build_time")].samples) == reps
        gin_json = measured[(workload, "pretty.json", "gin_build_time")]
        assert gin_json.status == "not_applicable" and "GIN" in (gin_json.reason or "")


def test_seed_settings_in_force(on_17) -> None:
    _, facts, _ = on_17
    settings = facts["settings"]
    assert facts["data_checksums"] is True
    assert settings["autovacuum"] == "off"
    assert settings["jit"] == "off"
    assert settings["max_parallel_workers_per_gather"] == "0"
    assert "shared_buffers" in settings


def test_json_stores_the_input_text_verbatim(on_17) -> None:
    """A json value is the input text plus a 4-byte varlena header: the same text went into both tables."""
    measured, _, _ = on_17
    for workload in get_suite(SUITE).workloads:
        for layout in LAYOUTS:
            text = measured[(workload, layout, "avg_input_bytes")].value
            assert measured[(workload, f"{layout}.json", "avg_datum_bytes")].value == pytest.approx(text + 4)
            # Pretty-printing adds only whitespace, which jsonb drops: one binary form for both layouts.
        assert (
            measured[(workload, "compact.jsonb", "avg_datum_bytes")].value == measured[(workload, "pretty.jsonb", "avg_datum_bytes")].value
        )
        assert measured[(workload, "pretty", "avg_input_bytes")].value > measured[(workload, "compact", "avg_input_bytes")].value


def test_document_sizes_match_the_seed_shapes(on_17) -> None:
    """Compact input sizes near the seed's averages (203.4, 1,517.9, 20,532.0, 21,129.0, 20,692.3 bytes)."""
    measured, _, _ = on_17
    size = {w: measured[(w, "compact", "avg_input_bytes")].value for w in get_suite(SUITE).workloads}
    assert 170 <= size["small"] <= 240
    assert size["small_long_keys"] > size["small"] + 100
    assert 1300 <= size["medium"] <= 1800
    for w in ("large", "flat", "array"):
        assert 18_000 <= size[w] <= 23_000, (w, size[w])


def test_integer_array_is_much_larger_as_jsonb(on_17) -> None:
    """Each integer becomes a numeric plus a 4-byte entry header: about 16 bytes against 6 of text."""
    measured, _, _ = on_17
    json_c = measured[("array", "compact.json", "avg_datum_bytes")].value
    jsonb = measured[("array", "compact.jsonb", "avg_datum_bytes")].value
    assert jsonb > 2 * json_c
    assert jsonb > measured[("array", "pretty.json", "avg_datum_bytes")].value
    assert measured[("array", "compact", "datum_size_ratio")].value > 2


def test_medium_documents_straddle_the_toast_threshold(on_17) -> None:
    """Compact json stays under ~2 kB and is stored as is; its jsonb form and pretty json cross it and get compressed."""
    measured, _, _ = on_17
    assert measured[("medium", "compact.json", "avg_datum_bytes")].value < 2000
    assert measured[("medium", "compact.jsonb", "avg_datum_bytes")].value > TOAST_THRESHOLD
    assert measured[("medium", "pretty.json", "avg_datum_bytes")].value > TOAST_THRESHOLD
    assert measured[("medium", "compact.json.pglz", "compressed_share")].value == 0
    assert (
        measured[("medium", "compact.json.pglz", "avg_stored_bytes")].value == measured[("medium", "compact.json", "avg_datum_bytes")].value
    )
    assert measured[("medium", "compact.jsonb.pglz", "compressed_share")].value == 1
    assert measured[("medium", "pretty.json.pglz", "compressed_share")].value == 1
    assert (
        measured[("medium", "compact.jsonb.pglz", "avg_stored_bytes")].value
        < measured[("medium", "compact.jsonb", "avg_datum_bytes")].value
    )
    # Small documents never reach the threshold, whatever their type.
    for typ in TYPES:
        assert measured[("small", f"compact.{typ}.pglz", "compressed_share")].value == 0


def test_lz4_rows_not_applicable_without_lz4(on_17) -> None:
    measured, facts, _ = on_17
    assert facts["capabilities"]["lz4"] is False, "the embedded builds are expected to lack lz4"
    for workload in get_suite(SUITE).workloads:
        for layout in LAYOUTS:
            lz4_rows = [
                m
                for (w, v, _), m in measured.items()
                if w == workload and v.startswith(layout) and (v.endswith(".lz4") or m.metric.endswith("_lz4"))
            ]
            assert len(lz4_rows) == len(TYPES) * len(STORAGE_METRICS) + 1
            for m in lz4_rows:
                assert m.status == "not_applicable" and "lz4" in (m.reason or ""), m
            for typ in TYPES:
                assert measured[(workload, f"{layout}.{typ}.pglz", "table_bytes")].status == "ok"


def test_size_and_threshold_findings_reproduce_at_smoke(on_17) -> None:
    """The reproduction file's deterministic findings (sizes, threshold) hold exactly on this run: physics, not noise."""
    import json

    from jsonbench import paths
    from jsonbench.checks.findings import finding_value

    measured, _, _ = on_17
    values = {key: (m.value, m.status) for key, m in measured.items()}
    definition = json.loads((paths.expectations_dir() / f"{SUITE}.reproduction.json").read_text(encoding="utf-8"))
    checked = 0
    for f in definition["findings"]:
        band = f["bands"]["smoke"]
        if (
            f.get("kind") != "deterministic"
            or "not_applicable" in band
            or f.get("scope") == "cross_engine"
            or "lz4" in (f.get("requires") or [])
        ):
            continue  # timings are judged by the run's check, never by a test; lz4 is not in this build
        observed, problem, _ = finding_value(values, f)
        assert not problem, (f["id"], problem)
        assert band["min"] <= observed <= band["max"], (f["id"], observed, band)
        checked += 1
    assert checked >= 10


def test_the_reads_are_taken_in_the_scale_s_order(on_17) -> None:
    """The scale says the order of json's and jsonb's timed reads (the seed's, ``sequential``, by default; ``interleaved``
    for the interleaved arm), and the read speed-up keeps each round's pair. The order itself, on a stand-in session for
    speed (the real reads are above, and the real interleaved reads below): rounds alternate which type goes first;
    ``sequential`` is the seed's, one table's runs and then the other's."""
    from jsonbench.suites.json_vs_jsonb import JsonVsJsonb

    measured, _, cell = on_17
    assert cell.scale_params["read_order"] == "sequential"
    for workload in get_suite(SUITE).workloads:
        sp = measured[(workload, "compact", "read_speedup")]
        assert len(sp.extra["round_ratios"]) == cell.scale_params["read_runs"], sp.extra

    class _Session:
        seen: list[str] = []

        def scalar(self, sql: Any) -> list[dict[str, float]]:
            self.seen.append("jsonb" if "Identifier('t_jsonb')" in repr(sql) else "json")
            return [{"Execution Time": 1.0}]

    class _Ctx:
        session = _Session()

        def measure(self, fn: Any, retry_disturbed: bool = False) -> tuple[Any, None]:
            return fn(), None

    tables = {"json": "t_json", "jsonb": "t_jsonb"}
    got = JsonVsJsonb._reads(_Ctx(), tables, 3, "interleaved")  # type: ignore[arg-type]
    assert _Ctx.session.seen == ["json", "jsonb", "jsonb", "json", "json", "jsonb"] and len(got["jsonb"]) == 3
    _Ctx.session.seen.clear()
    JsonVsJsonb._reads(_Ctx(), tables, 2, "sequential")  # type: ignore[arg-type]
    assert _Ctx.session.seen == ["json", "json", "jsonb", "jsonb"]


def test_interleaved_reads_measure_the_same_tables(tmp_path: Path) -> None:
    """The interleaved order on a real server (two shapes, smoke): every metric of the sequential order is there, the
    sizes are the same facts, and each read speed-up keeps its rounds' pairs."""
    import dataclasses

    params = {"scale": "smoke", "engines": ["postgres-17"], "suites": [SUITE], "results_dir": str(tmp_path)}
    cfg = resolve(params, env={})
    run = RunRef(
        run_id="jvj_rmit", logical_date="2026-11-29T02:00:00+00:00", hardware_label="t", results_dir=str(tmp_path), scale=cfg.scale
    )
    cell = plan_cells(cfg, run)[0]
    cell = dataclasses.replace(cell, scale_params={**cell.scale_params, "read_order": "interleaved"})
    get_suite(SUITE).preflight(cell)
    handle = tasks.provision(planned_of(cell), cell.cell_id)
    try:
        for w in ("medium", "array"):
            tasks.run_workload(planned_of(cell), cell.cell_id, handle, w)
    finally:
        tasks.teardown(planned_of(cell), cell.cell_id, handle)
    got = {(m.workload, m.variant, m.metric): m for rec in Staging(tmp_path, "jvj_rmit").records() for m in rec.measurements}
    for w in ("medium", "array"):
        for layout in LAYOUTS:
            sp = got[(w, layout, "read_speedup")]
            assert len(sp.extra["round_ratios"]) == cell.scale_params["read_runs"] and sp.value > 0
            for typ in TYPES:
                assert len(got[(w, f"{layout}.{typ}", "read_time")].samples) == cell.scale_params["read_runs"]
                assert got[(w, f"{layout}.{typ}", "avg_datum_bytes")].value > 0
    # the integer array is larger as jsonb whatever the read order (a fact)
    assert got[("array", "compact.jsonb.pglz", "avg_stored_bytes")].value > 0
    bad = dataclasses.replace(cell, scale_params={**cell.scale_params, "read_order": "shuffled"})
    with pytest.raises(Exception, match="read_order"):
        get_suite(SUITE).preflight(bad)
