"""Every suite estimates what its cells cost, from the scale: positive, growing with the scale, memory sized after memory_caps.

How a fresh results folder plans from the committed runs of recorded/ instead is a test of the recorded tier
(tests/recorded/test_reference_costs.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from jsonbench.matrix import load_matrix
from jsonbench.suites import get_suite
from jsonbench.suites.pgcost import server_sizes

SCALES = ("smoke", "laptop", "full")


def _cells(make_cells: Callable[..., list[Any]], suite: str, scale: str) -> list[Any]:
    family = load_matrix().suites[suite]["family"]
    engine = next(e for e in load_matrix().raw["default_engines"] if load_matrix().engines[e]["family"] == family)
    return make_cells(suite, engines=[engine], scale=scale)


@pytest.mark.parametrize("suite", sorted(load_matrix().suites))
def test_estimates_grow_with_the_scale(suite: str, make_cells: Callable[..., list[Any]]) -> None:
    costs = [get_suite(suite).estimate(_cells(make_cells, suite, scale)[0]) for scale in SCALES]
    for cost in costs:
        assert cost.duration_s > 0 and cost.disk_peak_bytes > 0 and cost.memory_peak_bytes > 0, cost
        assert cost.source != "no estimate"
    for small, big in zip(costs, costs[1:], strict=False):
        assert small.duration_s <= big.duration_s and small.disk_peak_bytes <= big.disk_peak_bytes and small.load_bytes <= big.load_bytes


def test_postgres_memory_follows_the_capped_settings(make_cells: Callable[..., list[Any]]) -> None:
    """The catalogue at full holds more data than shared_buffers: its memory includes all of it, as capped for this machine."""
    (cell,) = _cells(make_cells, "catalogue", "full")
    sizes = server_sizes(cell)
    cost = get_suite("catalogue").estimate(cell)
    assert sizes.shared_buffers <= 1024**3  # the matrix asks for 1GB; memory_caps may lower it, never raise it
    assert cost.memory_peak_bytes >= sizes.shared_buffers + sizes.work_mem
    big = make_cells("catalogue", engines=["postgres-17"], scale="full", server_settings={"shared_buffers": "2GB"})[0]
    assert get_suite("catalogue").estimate(big).memory_peak_bytes >= cost.memory_peak_bytes


#: Staged task seconds of the recorded laptop run the duration model is calibrated on
#: (``manual__2026-12-01T06:39:56.932407+00:00``, 2-core machine; the ``_cell`` rows' ``duration``).
RECORDED_LAPTOP_S = {
    ("large_document_update", "postgres-17"): 48.5,
    ("json_vs_jsonb", "postgres-17"): 125.2,
    ("catalogue", "postgres-17"): 221.3,
    ("sqlite_jsonb", "sqlite-3.46.1"): 60.9,
}


@pytest.mark.parametrize(("suite", "engine"), sorted(RECORDED_LAPTOP_S))
def test_laptop_estimate_gives_the_recorded_run_back(
    suite: str, engine: str, make_cells: Callable[..., list[Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The duration model's coefficients come from that run: at its scale the estimate must return its duration (within 5 %);
    a coefficient changed without recalibrating fails here."""
    from jsonbench.suites.catalogue import cost

    (cell,) = make_cells(suite, engines=[engine], scale="laptop")
    # That run predates the catalogue's fixed-count update runs: the model of its work leaves them out.
    monkeypatch.setattr(cost, "FIXED_UPDATE_RUNS", 0)
    monkeypatch.setattr(cost, "FAT_FIXED_RUNS", 0)
    assert get_suite(suite).estimate(cell).duration_s == pytest.approx(RECORDED_LAPTOP_S[(suite, engine)], rel=0.05)
