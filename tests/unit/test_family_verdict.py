"""The family verdict (`history.drift.family_verdicts`): a family that moved as a whole on two nights running, tonight
the same way, calls the series of it that went along; one night's excursion, or one that has ended, calls none.

Fixed inputs, no timing: three engines of one suite, ten series each, eight quiet earlier runs with a small
deterministic jitter, noisy series (15 % between starts, so no series passes its own test at the family's level) in
quiet families (5 % against the engines beside them, so a 25 % move of a whole family stands out by five of its
sigmas). The real test of the rule is `jsonbench-dev drift-recheck` on recorded hosts (tests/unit/test_driftcheck.py).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from jsonbench.history.drift import CalibratedSeries, FamilyCall, WindowedSeries, judge_families, window_test

ENGINES = ("postgres-16", "postgres-17", "postgres-18")
SUITE = "catalogue"
HISTORY = 8
SERIES = 10
#: (a series tested, and what its family said of it)
Judged = tuple[WindowedSeries, FamilyCall]


def _record() -> dict[str, Any]:
    fam = {"engine_build": "b", "sigma": 0.07, "contrast_sigma": 0.05, "suite": SUITE}
    return {"families": {f"{SUITE}/{e}": dict(fam) for e in ENGINES}}


def _tested(
    moves: dict[str, list[float]], engines: tuple[str, ...] = ENGINES, history: int = HISTORY, early: dict[str, list[float]] | None = None
) -> list[WindowedSeries]:
    """Each engine's series: the history at 0 (jittered), then the last nights moved by ``moves[engine]`` (slower positive,
    log; the list's last item is tonight). Durations in ms, so slower is larger. ``early[engine]``: runs of that engine
    alone before the shared history (the other engines were not measured then), at those levels."""
    out: list[WindowedSeries] = []
    nights = max((len(v) for v in moves.values()), default=1)  # every engine ran every night
    for e in engines:
        late = moves.get(e, [0.0] * nights)
        before = (early or {}).get(e, [])
        for i in range(SERIES):
            jitter = [0.01 * (((i * 7 + j * 3) % 5) - 2) for j in range(len(before) + history + len(late))]
            levels = [*before, *[0.0] * history, *late]
            points = [lv + jt for lv, jt in zip(levels, jitter, strict=True)]
            runs = [f"alone-{e}-{j}" for j in range(len(before))] + [f"r{j}" for j in range(history + len(late))]
            c = CalibratedSeries(SUITE, len(out), e, "b", "ms", {"kind": "timed"}, 0.15, tuple(points[:-1]), points[-1], runs=tuple(runs))
            out.append(window_test(c, 3, 1, None))
    return out


def _judge(tested: list[WindowedSeries]) -> list[Judged]:
    result = judge_families(tested, _record(), 0.01, 0.05)
    return [(t, result.call(t.series.key)) for t in tested]


def _judged(
    moves: dict[str, list[float]], engines: tuple[str, ...] = ENGINES, history: int = HISTORY, early: dict[str, list[float]] | None = None
) -> dict[str, list[FamilyCall]]:
    judged = _judge(_tested(moves, engines, history, early))
    return {e: [call for t, call in judged if t.series.engine_id == e] for e in engines}


def test_a_family_that_moved_two_nights_running_calls_the_series_that_went_along() -> None:
    judged = _judge(_tested({"postgres-17": [0.25, 0.25]}))
    pg17 = [(t, c) for t, c in judged if t.series.engine_id == "postgres-17"]
    assert all(c.verdict is not None for _, c in pg17), [(c.verdict, c.p_family) for _, c in pg17]
    assert all(c.verdict[0] == 2 and 0.2 < c.verdict[1] < 0.3 and c.verdict[2] <= 0.01 for _, c in pg17 if c.verdict)
    assert all(c.discovered and c.window is not None and c.window[1] == 2 for _, c in pg17)
    # Each series alone (15 % a start) is far from its own level at q * R / F: the verdict is what calls it.
    assert all(t.test.pvalue > 0.01 for t, _ in pg17)
    assert not any(c.verdict or c.discovered for t, c in judged if t.series.engine_id != "postgres-17")


def test_one_nights_excursion_calls_no_series_by_a_verdict() -> None:
    """Tonight alone moved (the family test may select the family; the verdict waits for a second night)."""
    got = _judged({"postgres-17": [0.0, 0.25]})
    assert not any(c.verdict for cs in got.values() for c in cs)


def test_an_excursion_that_has_ended_carries_nothing() -> None:
    """The family moved last night and is back tonight: the two-night window still stands out, tonight does not go along."""
    got = _judged({"postgres-17": [0.4, 0.0]})
    assert not any(c.verdict for cs in got.values() for c in cs)


def test_a_series_that_went_the_other_way_is_not_the_familys_finding() -> None:
    tested = _tested({"postgres-17": [0.25, 0.25]})
    at = next(i for i, t in enumerate(tested) if t.series.engine_id == "postgres-17")
    odd = tested[at].series
    # last night and tonight this series ran faster, not slower
    tested[at] = window_test(replace(odd, logs=(*odd.logs[:-1], odd.logs[-1] - 0.5), tonight=odd.tonight - 0.5), 3, 1, None)
    judged = _judge(tested)
    odd_call = judged[at][1]
    assert odd_call.verdict is None and not odd_call.discovered
    assert sum(c.verdict is not None for _, c in judged) == SERIES - 1


def test_every_engine_moving_together_is_the_hosts_move_not_a_verdict() -> None:
    got = _judged({e: [0.25, 0.25] for e in ENGINES})
    assert not any(c.verdict for cs in got.values() for c in cs)


def test_an_engine_measured_alone_earns_no_verdict() -> None:
    """PostgreSQL 17 alone, 25 % slower two nights running: nothing beside it tells a version from the host's hour (the
    catalogue of 17 alone moved 19-21 % over three honest runs of one host), so no series is called by a verdict."""
    got = _judged({"postgres-17": [0.25, 0.25]}, engines=("postgres-17",))
    assert not any(c.verdict for c in got["postgres-17"])


def test_a_reference_of_one_run_earns_no_verdict() -> None:
    """Every night of the window is compared with the same reference: one run of it (an odd start of one version) would
    make each night look apart, so a verdict needs two."""
    assert not any(c.verdict for cs in _judged({"postgres-17": [0.3, 0.3]}, history=1).values() for c in cs)
    assert all(c.verdict for c in _judged({"postgres-17": [0.3, 0.3]}, history=2)["postgres-17"])


def test_a_family_is_compared_only_with_runs_the_versions_beside_it_ran_in() -> None:
    """PostgreSQL 17 ran alone for five runs in an hour 1.5x slower, then beside 16 and 18 at the same level as they:
    against all of its own history it would look about 15 % faster on the last two nights (four of its sigmas); against
    the runs the others ran in too, it did not move (a recorded honest night raised 48 alarms the first way)."""
    got = _judged({}, early={"postgres-17": [0.4] * 5})
    assert not any(c.verdict for cs in got.values() for c in cs)


def test_tonights_family_test_compares_the_versions_on_the_runs_they_shared() -> None:
    """PostgreSQL 17 ran alone five times at a level 35 % slower (narrowed runs of other hours, as one recorded host ran), then
    beside 16 and 18. Tonight 17 is 25 % slower: against its whole history (whose mean the lone runs lift by 13 %) that
    is a move of about 12 % beyond the others, against the runs all three shared it is the whole 25 %, and that is what
    its family is judged by (``drift.beside``). An honest night after the same history moves no family."""
    early = {"postgres-17": [0.3] * 5}
    moved = _judged({"postgres-17": [0.25]}, early=early)["postgres-17"]
    assert all(c.selected for c in moved), [c.p_family for c in moved]
    assert all(0.2 < c.sign < 0.3 for c in moved), [c.sign for c in moved]
    honest = _judged({}, early=early)
    assert not any(c.selected for cs in honest.values() for c in cs)
