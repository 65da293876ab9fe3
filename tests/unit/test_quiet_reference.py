"""The reference tonight is judged against leaves out the host's nights too far from the others to teach its noise
(:meth:`jsonbench.history.stats.OwnNoise.far`, :attr:`jsonbench.history.drift.CalibratedSeries.far`): a sigma learned
without such a night, against a level that holds it, would read the night's excursion as tonight's move. Fixed inputs,
no timing."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import pytest

from jsonbench.history.drift import CalibratedSeries, FamilyCall, window_test
from jsonbench.history.drift.policy import Settings
from jsonbench.history.drift.verdict import judge_calibrated
from jsonbench.history.stats import own_noise, reference, windows

PRIOR, FLOOR = 0.001, 0.001  # a WAL volume's: a count moves a few hundredths of a per cent between starts
#: A host's quiet nights of a count, the first of them one start 4.7 % high (its figure too), then quiet ones.
EARLY_HIGH = [math.log(1.047), 0.0, 0.0005]
HONEST = -0.0004


def _series(nights: list[float], tonight: float, *, learn: bool = True, base: int = 0, hosts: tuple[str, ...] = ()) -> CalibratedSeries:
    own = own_noise(nights, [], PRIOR, FLOOR)
    return CalibratedSeries(
        suite="catalogue",
        row=0,
        engine_id="postgres-17",
        engine_build="b",
        unit="bytes",
        entry={"kind": "sampled", "sigma": PRIOR},
        sigma=own.sigma,
        logs=tuple(nights),
        tonight=tonight,
        runs=tuple(f"r{i}" for i in range(len(nights) + 1)),
        hosts=hosts or ("h",) * (len(nights) + 1),
        base=base,
        own=own if learn else None,
    )


def _verdict(c: CalibratedSeries) -> dict[str, Any]:
    t = window_test(c, 3, 1, None)
    return judge_calibrated({"suite": c.suite}, t, FamilyCall(), 0.0, t.test.pvalue, 1, Settings.of({}), None)


def test_an_early_night_five_per_cent_high_is_not_what_an_honest_night_is_judged_against() -> None:
    c = _series(EARLY_HIGH, HONEST)
    assert c.own is not None and c.own.left_out == 1 and c.sigma == pytest.approx(FLOOR, rel=0.2)
    assert c.far == {0} and c.reference_runs == [1, 2]
    got = _verdict(c)
    assert got["verdict"] == "ok", got["note"]
    assert got["reference"] == pytest.approx(math.exp(0.00025)) and abs(got["relative_change"]) < 0.001
    assert "1 far from the others left out, of the reference too" in got["note"]
    # The same sigma against a reference that holds the night reads it as tonight's move: -1.6 %, some 14 sigmas.
    held = _verdict(_series(EARLY_HIGH, HONEST, learn=False))
    assert held["verdict"] == "drift" and held["relative_change"] < -0.015


def test_a_night_left_out_of_the_reference_still_counts_in_a_window_that_holds_it() -> None:
    series = [0.0, 0.01, math.log(1.05), 0.0, 0.05]
    tried, _ = windows(series, [""] * 5, 0, 3, 1, 0.01, 0.0, {2})
    assert [(w.nights, w.ref_runs) for w in tried] == [(1, 3), (2, 2), (3, 2)]
    assert tried[2].change == pytest.approx(sum(series[2:]) / 3 - 0.005)
    assert reference(1, 4, {2}) == [1, 3]


def test_a_new_level_its_history_found_stays_the_reference() -> None:
    """Two of six nights at a new level (a change point before them): far from the median of the six, they teach the
    noise nothing, yet they are the level tonight is judged against; a night far from them would not be."""
    step = math.log(1.2)
    nights = [0.0, 0.0005, -0.0005, 0.0002, step, step + 0.0004]
    c = _series(nights, step, base=4)
    assert c.own is not None and c.own.far() == [4, 5], "left out of the noise"
    assert c.far == frozenset() and c.reference_runs == [4, 5]
    late = _series([*nights, step + 0.0003, step + 0.05], step, base=4)
    assert late.far == {7}


def test_only_tonights_hosts_nights_leave_the_reference() -> None:
    nights = [0.3, math.log(1.047), 0.0, 0.0005]  # another host's night first, far from this host's
    c = replace(_series(nights, 0.0, hosts=("other", "h", "h", "h", "h")), own=own_noise(nights[1:], [], PRIOR, FLOOR))
    assert c.far == {1} and c.reference_runs == [0, 2, 3]
