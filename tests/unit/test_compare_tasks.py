"""The comparison's plan and its start order, without starting an engine: the starts of each stage, the cells
of each start with its arm's settings, and the claims that make the starts run in the planned order whatever
order the scheduler runs the mapped instances in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jsonbench.compare import tasks

PARAMS: dict[str, Any] = {
    "a": {"engine": "postgres-17"},
    "b": {"engine": "postgres-17", "settings": {"work_mem": "8MB"}},
    "suites": ["large_document_update"],
    "scale": "smoke",
    "pairs": [8, 16],
}


@pytest.fixture
def planned(tmp_path: Path) -> dict[str, Any]:
    return tasks.plan({**PARAMS, "results_dir": str(tmp_path)}, "manual__t", "2026-12-01T00:00:00+00:00")


def test_each_stage_holds_its_pairs_both_arms_in_a_balanced_order(planned: dict[str, Any]) -> None:
    one, two = planned["stages"]
    assert [s["pair"] for s in one] == [p for p in range(8) for _ in range(2)]
    assert [s["pair"] for s in two] == [p for p in range(8, 16) for _ in range(2)]
    for stage in (one, two):
        firsts = [s["arm"] for s in stage[::2]]
        assert abs(firsts.count("A") - firsts.count("B")) <= 1
        assert all({x["arm"] for x in stage[i : i + 2]} == {"A", "B"} for i in range(0, len(stage), 2))


def test_each_start_is_a_cell_with_its_arms_settings(planned: dict[str, Any]) -> None:
    cells = {c["cell_id"]: c for c in planned["cells"]}
    assert len(cells) == 2 * 16
    a, b = cells["large_document_update__p000a"], cells["large_document_update__p000b"]
    assert b["postgres"]["server_settings"]["work_mem"] == "8MB" != a["postgres"]["server_settings"]["work_mem"]
    assert a["engine_id"] == b["engine_id"] == "postgres-17" and a["scale_params"] == b["scale_params"]
    assert planned["comparison"]["margin_source"] == "default"


def test_instances_claim_the_starts_in_the_planned_order_whatever_order_they_run(planned: dict[str, Any]) -> None:
    stage = planned["stages"][0]
    hint = stage[5]
    got = [tasks.claim(planned, hint, index) for index in (5, 2, 9, 0)]
    assert [(g["pair"], g["arm"]) for g in got] == [(s["pair"], s["arm"]) for s in stage[:4]]
    assert tasks.claim(planned, hint, 2) == got[1], "an instance cleared or rescheduled measures its own start again"


def test_stages_the_comparison_did_not_plan_decide_nothing(planned: dict[str, Any]) -> None:
    assert tasks.decide(planned, 2) == [] and tasks.decide(planned, 3) == []
    assert tasks.decide(planned, 0) == [], "stage 1 did not run: nothing to decide"


def test_the_fingerprint_follows_the_generator_inputs(planned: dict[str, Any]) -> None:
    from jsonbench.cell import Cell

    cells = [Cell.from_json(c) for c in planned["cells"][:2]]
    assert tasks.fingerprint(cells[0]) == tasks.fingerprint(cells[1])
    other = Cell.from_json({**planned["cells"][0], "scale_params": {**cells[0].scale_params, "rows": 7}})
    assert tasks.fingerprint(other) != tasks.fingerprint(cells[0])
