"""Every suite estimates what its cells cost, from the scale: positive, growing with the scale, memory sized after memory_caps."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
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
    # That run predates the fixed-count update runs (issue 26): the model of its work leaves them out.
    monkeypatch.setattr(cost, "FIXED_UPDATE_RUNS", 0)
    monkeypatch.setattr(cost, "FAT_FIXED_RUNS", 0)
    assert get_suite(suite).estimate(cell).duration_s == pytest.approx(RECORDED_LAPTOP_S[(suite, engine)], rel=0.05)


def test_a_fresh_results_folder_plans_from_the_reference_machines_runs(
    make_cells: Callable[..., list[Any]], tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cell the results folder never ran is costed from the committed recorded run of the same cell and scale (x1.25),
    not extrapolated: seed 001 at full took 1,750 s on the reference machine (recorded/local-full-9a24bd8-ed7b53fa),
    1.7-2.2x the suite's estimate. A run under a CPU quota is not the reference machine's speed and is never used."""
    from jsonbench import paths as jsonbench_paths
    from jsonbench.dataset.read import read_dataset
    from jsonbench.orchestration import costs
    from jsonbench.paths import recorded_folders

    (full,) = make_cells("json_vs_jsonb", engines=["postgres-16"], scale="full", results_dir=str(tmp_path))
    planned = costs.plan_costs([full], str(tmp_path)).cells[full.cell_id]
    assert planned.source.startswith("reference machine's run manual__2026-12-02T09:32:52"), planned.source
    assert "ed7b53fa" in planned.source and planned.duration_s == pytest.approx(1750 * costs.MARGIN, rel=0.02)
    assert planned.duration_s > get_suite("json_vs_jsonb").estimate(full).duration_s
    # in sitting 40's folder the latest laptop run of the catalogue on 17 is a quota night: the plan takes the latest
    # one at full speed instead (the folder alone, so later sittings' runs do not change the premise)
    (laptop,) = make_cells("catalogue", engines=["postgres-17"], scale="laptop", results_dir=str(tmp_path))
    sitting40 = [d for d in recorded_folders() if d.name == "local-714acc6-ed7b53fa"]
    monkeypatch.setattr(jsonbench_paths, "recorded_folders", lambda root=None: sitting40)
    rows = pd.concat([read_dataset(d).to_pandas() for d in sitting40], ignore_index=True)
    cell_rows = rows[
        (rows.workload == "_cell") & (rows.suite == "catalogue") & (rows.engine_id == "postgres-17") & (rows.scale == "laptop")
    ]
    quota_runs = set(cell_rows[cell_rows.host_cpu_quota.notna()].run_id)
    assert cell_rows.sort_values("ended_at").run_id.iloc[-1] in quota_runs, "the premise: the latest recorded run is a quota run"
    source = costs.plan_costs([laptop], str(tmp_path)).cells[laptop.cell_id].source
    assert source.startswith("reference machine's run") and not any(r in source for r in quota_runs), source


def test_a_version_the_reference_machine_never_ran_plans_from_another_version_of_the_same_engine(
    make_cells: Callable[..., list[Any]], tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seed 001 at full on PostgreSQL 18, with only 16's run recorded: 16's figure (x1.25), named as 16's, not the
    suite's extrapolation (13m25s against 18-29 min measured)."""
    from jsonbench import paths
    from jsonbench.orchestration import costs

    reference = tmp_path / "recorded"
    reference.mkdir()
    (reference / "local-full-9a24bd8-ed7b53fa").symlink_to(paths.RECORDED_DIR / "local-full-9a24bd8-ed7b53fa")
    monkeypatch.setattr(paths, "RECORDED_DIR", reference)
    fresh = str(tmp_path / "results")
    (pg18,) = make_cells("json_vs_jsonb", engines=["postgres-18"], scale="full", results_dir=fresh)
    planned = costs.plan_costs([pg18], fresh).cells[pg18.cell_id]
    assert planned.source.startswith("reference machine's run manual__2026-12-02T09:32:52.488278+00:00 of postgres-16"), planned.source
    assert planned.duration_s == pytest.approx(1750 * costs.MARGIN, rel=0.02)
