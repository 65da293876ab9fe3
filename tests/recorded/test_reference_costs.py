"""A fresh results folder plans its cells from the committed runs of the reference machine (recorded/), not from
the suite's estimate: the latest run of the same cell and scale at full speed, or another version of the same engine."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pandas as pd
import pytest

from jsonbench import paths
from jsonbench.suites import get_suite


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
    host = json.loads((paths.RECORDED_DIR / "hosts.json").read_text(encoding="utf-8"))["folders"]["local-714acc6-ed7b53fa"]["host"]
    assert host in planned.source and planned.duration_s == pytest.approx(1750 * costs.MARGIN, rel=0.02)
    assert planned.duration_s > get_suite("json_vs_jsonb").estimate(full).duration_s
    # in local-714acc6-ed7b53fa the latest laptop run of the catalogue on 17 is a quota night: the plan takes the latest
    # one at full speed instead (that folder alone, so later recorded runs do not change the premise)
    (laptop,) = make_cells("catalogue", engines=["postgres-17"], scale="laptop", results_dir=str(tmp_path))
    quota_folder = [d for d in recorded_folders() if d.name == "local-714acc6-ed7b53fa"]
    monkeypatch.setattr(jsonbench_paths, "recorded_folders", lambda root=None: quota_folder)
    rows = pd.concat([read_dataset(d).to_pandas() for d in quota_folder], ignore_index=True)
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
