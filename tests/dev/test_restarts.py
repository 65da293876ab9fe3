"""`jsonbench-dev restart-check`'s arithmetic: the spread between restarts of one engine against that between fresh engines.

Synthetic rounds with known effects (the command itself runs real engines: a benchmark, see the README's table).
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from jsonbench_dev.restarts import summarize


def _data(fresh: list[float], restart: list[list[float]], series: int = 8) -> dict[str, Any]:
    """Rows whose log value is ``fresh[f] + restart[f][r]`` plus a per-series level, for ``series`` timed series."""
    rows = []
    for s in range(series):
        for f, a in enumerate(fresh):
            for r, b in enumerate(restart[f]):
                v = math.exp(1.0 + 0.1 * s + a + b)
                rows.append(
                    {
                        "fresh": f,
                        "round": r,
                        "workload": "w",
                        "variant": f"v{s}",
                        "metric": "t",
                        "unit": "ms",
                        "kind": "timed",
                        "samples": [v],
                    }
                )
    rows.append(
        {"fresh": 0, "round": 0, "workload": "w", "variant": "n", "metric": "rows", "unit": "rows", "kind": "deterministic", "samples": [5]}
    )
    return {"rows": rows}


def test_engines_that_differ_only_between_loads_show_no_restart_share() -> None:
    s = summarize(_data([0.0, 0.2, -0.2], [[0.0, 0.0, 0.0]] * 3))
    assert s["series"] == 8, "timed series only"
    assert s["restart_sd"] == pytest.approx(0.0, abs=1e-9) and s["fresh_sd"] == pytest.approx(0.2, rel=1e-6)
    assert s["restart_share"] == pytest.approx(0.0, abs=1e-9)


def test_restarts_that_move_as_much_as_loads_take_the_whole_share() -> None:
    moves = [[0.1, -0.1, 0.0], [0.0, 0.1, -0.1], [-0.1, 0.0, 0.1]]
    s = summarize(_data([0.0, 0.0, 0.0], moves))
    assert s["restart_sd"] == pytest.approx(0.1, rel=1e-6)
    assert s["fresh_sd"] == pytest.approx(0.0, abs=1e-9) and s["restart_share"] == pytest.approx(1.0)


def test_a_round_that_runs_slower_after_each_restart_is_said_as_a_shift() -> None:
    s = summarize(_data([0.0, 0.1, -0.1], [[0.0, 0.05, 0.1]] * 3))
    assert s["round_shift"][1] == pytest.approx(math.exp(0.05) - 1) and s["round_shift"][2] == pytest.approx(math.exp(0.1) - 1)


def test_a_disturbed_round_is_left_out() -> None:
    data = _data([0.0, 0.2, -0.2], [[0.0, 0.0, 0.0]] * 3)
    for row in data["rows"]:
        if row["fresh"] == 1 and row["round"] == 2:
            row["disturbed"] = True
            row["samples"] = [x * 3 for x in row["samples"]]
    assert summarize(data)["restart_sd"] == pytest.approx(0.0, abs=1e-9)
