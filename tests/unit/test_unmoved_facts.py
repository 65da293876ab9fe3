"""A figure that never moved is judged exactly: any change of it fails, with both values in the note; one that moved
keeps its tolerance."""

from __future__ import annotations

from types import SimpleNamespace

from jsonbench.history.drift import Settings
from jsonbench.history.drift.facts import judge_deterministic, judge_still_series, unmoved
from jsonbench.history.rules import Rule

RULE = Rule("deterministic", tolerance=0.02)
SETTINGS = Settings.of({})
RUN = {"run_id": "tonight", "logical_date": "2026-12-07"}


def _runs(values: list[float], quiet: bool | None = True) -> list[SimpleNamespace]:
    return [
        SimpleNamespace(run_id=f"r{i}", logical_date=f"2026-12-0{i}", value=v, samples=[v, v], quiet=quiet) for i, v in enumerate(values)
    ]


def test_unmoved_needs_two_runs_that_agree() -> None:
    assert unmoved([234.70006, 234.70006]) == 234.70006
    assert unmoved([234.70006]) is None
    assert unmoved([234.70006, 234.70007]) is None


def test_a_fact_that_never_moved_fails_on_one_percent_and_names_both_values() -> None:
    row = judge_deterministic(_runs([234.70006] * 6), RULE, 237.05, RUN, SETTINGS)
    assert row["verdict"] == "drift" and row["drift_score"] > 1 and row["method"] == "unmoved"
    assert "234.70006 in every one of 6 earlier nights, tonight 237.05" in row["note"]


def test_a_fact_that_never_moved_passes_unchanged() -> None:
    row = judge_deterministic(_runs([234.70006] * 6), RULE, 234.70006, RUN, SETTINGS)
    assert row["verdict"] == "ok" and row["drift_score"] == 0.0


def test_a_fact_that_moved_before_keeps_its_tolerance() -> None:
    row = judge_deterministic(_runs([100.0, 101.0, 100.0]), RULE, 101.5, RUN, SETTINGS)
    assert row["verdict"] == "ok" and row.get("method") is None
    assert judge_deterministic(_runs([100.0, 101.0, 100.0]), RULE, 103.0, RUN, SETTINGS)["verdict"] == "drift"


def test_a_sampled_series_with_no_spread_is_judged_exactly() -> None:
    row = judge_still_series(_runs([0.5, 0.5]), 0.505, SETTINGS, "sampled")
    assert row is not None and row["verdict"] == "drift" and "0.5 in every one of 2 earlier nights" in row["note"]
    assert judge_still_series(_runs([0.5, 0.51]), 0.505, SETTINGS, "sampled") is None


def test_a_series_still_by_rounding_is_not_judged_exactly() -> None:
    """A timing printed to a coarse step, or a figure whose repetitions moved, or one the record saw move, holds still
    by chance: it keeps its statistical test."""
    assert judge_still_series(_runs([0.057, 0.057]), 0.058, SETTINGS, "timed") is None
    moved = [SimpleNamespace(**{**vars(x), "samples": [0.5, 0.49]}) for x in _runs([0.5, 0.5])]
    assert judge_still_series(moved, 0.505, SETTINGS, "sampled") is None
    assert judge_still_series(_runs([0.5, 0.5]), 0.505, SETTINGS, "sampled", {"run_sd": 0.01, "host_sd": 0.0}) is None
    still = judge_still_series(_runs([0.057, 0.057]), 0.058, SETTINGS, "timed", {"run_sd": 0.0, "host_sd": 0.0})
    assert still is not None and still["verdict"] == "drift"


def test_disturbed_runs_do_not_count_for_a_series_that_held_still() -> None:
    assert judge_still_series([*_runs([0.5]), *_runs([0.5], quiet=False)], 0.6, SETTINGS, "sampled") is None
