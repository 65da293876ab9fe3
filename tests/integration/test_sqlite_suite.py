"""Suite sqlite_jsonb at smoke scale on real SQLite builds, driven the way the DAG drives it (jsonbench.orchestration.tasks)."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from jsonbench.dataset.measurement import Measurement
from jsonbench.dataset.staging import SETUP_RECORD, Staging
from jsonbench.engines.base import engine_for
from jsonbench.orchestration import tasks
from jsonbench.suites import get_suite
from jsonbench.suites.sqlite_jsonb import KEYS, NAME, POSITIONS, TABLES, key_path, rows_for
from tests.conftest import planned_of

ENGINES = ["sqlite-3.45.0", "sqlite-3.54.1"]


@pytest.fixture(scope="module")
def staged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One smoke run of the whole suite on two SQLite versions: every cell provisioned, every workload run, torn down."""
    from jsonbench.cell import RunRef
    from jsonbench.orchestration.plan import plan_cells, resolve

    results = tmp_path_factory.mktemp("results")
    cfg = resolve({"scale": "smoke", "results_dir": str(results), "suites": [NAME], "engines": ENGINES})
    run = RunRef(
        run_id="sqlite_suite_test",
        logical_date=None,
        hardware_label=cfg.hardware_label,
        results_dir=cfg.results_dir,
        scale=cfg.scale,
        git_revision="test",
    )
    cells = plan_cells(cfg, run)
    assert sorted(c.engine_id for c in cells) == ENGINES
    for cell in cells:
        handle = tasks.provision(planned_of(cell), cell.cell_id)
        try:
            for workload in get_suite(NAME).workloads:
                tasks.run_workload(planned_of(cell), cell.cell_id, handle, workload)
                # The file-backed copies are dropped by the workload itself, not left for teardown.
                assert sorted(p.name for p in Path(handle["workdir"]).iterdir()) == []
        finally:
            tasks.teardown(planned_of(cell), cell.cell_id, handle)
        assert not cell.identity.workdir().exists()
    staging = Staging(results, run.run_id)
    by_cell: dict[str, dict[str, list[Measurement]]] = {}
    phases: dict[tuple[str, str], dict[str, float]] = {}
    for rec in staging.records():
        by_cell.setdefault(rec.cell.engine_id, {})[rec.workload] = rec.measurements
        phases[(rec.cell.engine_id, rec.workload)] = rec.phases
    return {"cells": cells, "staging": staging, "measurements": by_cell, "phases": phases}


def values(measurements: list[Measurement]) -> dict[tuple[str, str], Measurement]:
    return {(m.metric, m.variant): m for m in measurements}


@pytest.mark.parametrize("engine_id", ENGINES)
def test_every_expected_metric_is_measured(staged: dict[str, Any], engine_id: str) -> None:
    suite = get_suite(NAME)
    got = staged["measurements"][engine_id]
    assert set(got) - {"_canary_before", "_canary_after"} == {SETUP_RECORD, *suite.workloads}  # and the host's canary beside the cell
    expected = suite.expected_metrics()
    for workload, metric in expected:
        ms = [m for m in got[workload] if m.metric == metric]
        assert ms, f"{workload}/{metric} missing on {engine_id}"
        assert all(m.status == "ok" and m.value is not None and math.isfinite(m.value) for m in ms), ms
    for workload in suite.workloads:
        assert {m.metric for m in got[workload]} == {m for w, m in expected if w == workload}  # nothing unpromised
        assert staged["phases"][(engine_id, workload)]["load"] > 0 and staged["phases"][(engine_id, workload)]["measure"] > 0


@pytest.mark.parametrize("engine_id", ENGINES)
@pytest.mark.parametrize("workload", list(KEYS))
def test_physics_of_each_cell(staged: dict[str, Any], engine_id: str, workload: str) -> None:
    cell = next(c for c in staged["cells"] if c.engine_id == engine_id)
    v = values(staged["measurements"][engine_id][workload])
    keys, reps = KEYS[workload], cell.repetitions
    rows = rows_for(keys, cell.scale_params)
    assert v[("rows", "text")].value == v[("rows", "jsonb")].value == rows
    # JSONB drops quotes, colons, commas and spaces: smaller per document, never more pages.
    assert v[("doc_bytes", "jsonb")].value < v[("doc_bytes", "text")].value
    assert 0 < v[("size_ratio", "jsonb_vs_text")].value < 1
    assert 0 < v[("file_pages", "jsonb")].value <= v[("file_pages", "text")].value
    assert v[("file_bytes", "text")].value >= rows * v[("doc_bytes", "text")].value  # the file holds every document
    for (metric, variant), m in v.items():
        if m.unit == "ns":
            assert m.aggregate == "min" and len(m.samples) == reps and all(s > 0 for s in m.samples), (metric, variant)
            assert m.extra["best_of"] == cell.scale_params["best_of"]
        if m.unit == "x":
            assert m.value > 0, (metric, variant)
        if metric.endswith("_speedup"):
            assert len(m.samples) == reps and m.spread is not None  # every repetition kept
    for pos in POSITIONS:
        for variant in ("text", "jsonb", "text_file", "jsonb_file"):
            assert v[(f"extract_{pos}_ns_per_row", variant)].value > 0
    assert (engine_id, workload) in staged["phases"]


@pytest.mark.parametrize("engine_id", ENGINES)
def test_engine_facts_are_staged_with_the_results(staged: dict[str, Any], engine_id: str) -> None:
    cell = next(c for c in staged["cells"] if c.engine_id == engine_id)
    facts = staged["staging"].read_engine(cell.cell_id)
    assert facts["version"] == cell.version
    assert "ENABLE_MATH_FUNCTIONS" in facts["configure"]  # the suite's SQL uses mod()
    assert facts["capabilities"]["jsonb"] is True


def test_documents_are_deterministic_and_identical_across_versions(make_cells: Callable[..., list[Any]], scratch_dir: Path) -> None:
    """Version comparisons compare the same data: the generator gives the same documents in every build."""
    docs = {}
    for engine_id in ENGINES:
        (cell,) = make_cells(NAME, engines=[engine_id])
        engine = engine_for(cell)
        handle = engine.provision()
        try:
            with engine.session(handle) as s:
                s.run_file(NAME, "create_text", table=TABLES["text"])
                s.run_file(NAME, "load_text", {"rows": 20, "keys": 10}, table=TABLES["text"])
                docs[engine_id] = s.execute('SELECT id, doc FROM "docs_text" ORDER BY id')
                first = s.scalar('SELECT doc FROM "docs_text" WHERE id = 1')
                # Flat object, keys in order, two thirds integers and one third 8-letter strings.
                kinds = s.execute("SELECT key, type, value FROM json_each(:doc)", {"doc": first})
                assert [k for k, _, _ in kinds] == [f"key_{i}" for i in range(10)]
                assert [t for _, t, _ in kinds] == ["text" if i % 3 == 1 else "integer" for i in range(10)]
                assert all(len(val) == 8 and val.isalpha() for _, t, val in kinds if t == "text")
                assert s.scalar("SELECT json_extract(:doc, :path)", {"doc": first, "path": key_path("last", 10)}) == kinds[-1][2]
                assert first.startswith('{"key_0": ') and ', "key_1": "' in first  # json.dumps separators, as the seed
        finally:
            engine.teardown(handle)
    assert len(docs[ENGINES[0]]) == 20
    assert docs[ENGINES[0]] == docs[ENGINES[1]]
