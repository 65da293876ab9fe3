"""The family verdict (`history.drift._family_verdicts`): a family that moved as a whole on two nights running, tonight
the same way, calls the series of it that went along; one night's excursion, or one that has ended, calls none.

Fixed inputs, no timing: three engines of one suite, ten series each, eight quiet earlier runs with a small
deterministic jitter, noisy series (15 % between starts, so no series passes its own test at the family's level) in
quiet families (5 % against the engines beside them, so a 25 % move of a whole family stands out by five of its
sigmas). The real test of the rule is `jsonbench-dev drift-recheck` on recorded hosts (tests/unit/test_driftcheck.py).
"""

from __future__ import annotations

from typing import Any

from jsonbench.history.drift import _Calibrated, _family_tests, _Prepared, _window_test

ENGINES = ("postgres-16", "postgres-17", "postgres-18")
SUITE = "catalogue"
HISTORY = 8
SERIES = 10


def _record() -> dict[str, Any]:
    fam = {"engine_build": "b", "sigma": 0.07, "contrast_sigma": 0.05, "suite": SUITE}
    return {"families": {f"{SUITE}/{e}": dict(fam) for e in ENGINES}}


def _prepared(
    moves: dict[str, list[float]], engines: tuple[str, ...] = ENGINES, history: int = HISTORY, early: dict[str, list[float]] | None = None
) -> dict[str, _Prepared]:
    """Each engine's series: the history at 0 (jittered), then the last nights moved by ``moves[engine]`` (slower positive,
    log; the list's last item is tonight). Durations in ms, so slower is larger. ``early[engine]``: runs of that engine
    alone before the shared history (the other engines were not measured then), at those levels."""
    rows: list[dict[str, Any]] = []
    cs: list[_Calibrated] = []
    nights = max((len(v) for v in moves.values()), default=1)  # every engine ran every night
    for e in engines:
        late = moves.get(e, [0.0] * nights)
        before = (early or {}).get(e, [])
        for i in range(SERIES):
            jitter = [0.01 * (((i * 7 + j * 3) % 5) - 2) for j in range(len(before) + history + len(late))]
            levels = [*before, *[0.0] * history, *late]
            points = [lv + jt for lv, jt in zip(levels, jitter, strict=True)]
            runs = [f"alone-{e}-{j}" for j in range(len(before))] + [f"r{j}" for j in range(history + len(late))]
            rows.append({"unit": "ms", "engine_id": e, "engine_build": "b"})
            c = _Calibrated(len(rows) - 1, points[:-1], points[-1], 0.15, {"kind": "timed"}, runs=runs)
            _window_test(c, 3, 1, None)
            cs.append(c)
    return {SUITE: _Prepared(rows, cs, _record())}


def _judged(
    moves: dict[str, list[float]], engines: tuple[str, ...] = ENGINES, history: int = HISTORY, early: dict[str, list[float]] | None = None
) -> dict[str, list[_Calibrated]]:
    prepared = _prepared(moves, engines, history, early)
    _family_tests(prepared, _record(), 0.01, 0.05)
    pr = prepared[SUITE]
    return {e: [c for c in pr.calibrated if pr.rows[c.row]["engine_id"] == e] for e in engines}


def test_a_family_that_moved_two_nights_running_calls_the_series_that_went_along() -> None:
    got = _judged({"postgres-17": [0.25, 0.25]})
    pg17 = got["postgres-17"]
    assert all(c.verdict is not None for c in pg17), [(c.verdict, c.p_family) for c in pg17]
    assert all(c.verdict[0] == 2 and 0.2 < c.verdict[1] < 0.3 and c.verdict[2] <= 0.01 for c in pg17 if c.verdict)
    assert all(c.family_selected and c.p_family <= 1.0 and c.nights == 2 for c in pg17)
    # Each series alone (15 % a start) is far from its own level at q * R / F: the verdict is what calls it.
    assert all(c.pvalue > 0.01 for c in pg17)
    assert not any(c.verdict or (c.family_selected and c.p_family <= 1.0) for e in ("postgres-16", "postgres-18") for c in got[e])


def test_one_nights_excursion_calls_no_series_by_a_verdict() -> None:
    """Tonight alone moved (the family test may select the family; the verdict waits for a second night)."""
    got = _judged({"postgres-17": [0.0, 0.25]})
    assert not any(c.verdict for cs in got.values() for c in cs)


def test_an_excursion_that_has_ended_carries_nothing() -> None:
    """The family moved last night and is back tonight: the two-night window still stands out, tonight does not go along."""
    got = _judged({"postgres-17": [0.4, 0.0]})
    assert not any(c.verdict for cs in got.values() for c in cs)


def test_a_series_that_went_the_other_way_is_not_the_familys_finding() -> None:
    prepared = _prepared({"postgres-17": [0.25, 0.25]})
    pr = prepared[SUITE]
    odd = next(c for c in pr.calibrated if pr.rows[c.row]["engine_id"] == "postgres-17")
    odd.logs[-1] -= 0.5  # last night this series ran faster, not slower
    odd.tonight -= 0.5
    _window_test(odd, 3, 1, None)
    _family_tests(prepared, _record(), 0.01, 0.05)
    assert odd.verdict is None and not (odd.family_selected and odd.p_family <= 1.0)
    assert sum(c.verdict is not None for c in pr.calibrated) == SERIES - 1


def test_every_engine_moving_together_is_the_hosts_move_not_a_verdict() -> None:
    got = _judged({e: [0.25, 0.25] for e in ENGINES})
    assert not any(c.verdict for cs in got.values() for c in cs)


def test_an_engine_measured_alone_earns_no_verdict() -> None:
    """PostgreSQL 17 alone, 25 % slower two nights running: nothing beside it tells a version from the host's hour (the
    catalogue of 17 alone moved 19-21 % over three honest runs of 431a3be6), so no series is called by a verdict."""
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
    the runs the others ran in too, it did not move (ed7b53fa's honest night raised 48 alarms the first way)."""
    got = _judged({}, early={"postgres-17": [0.4] * 5})
    assert not any(c.verdict for cs in got.values() for c in cs)


def test_tonights_family_test_compares_the_versions_on_the_runs_they_shared() -> None:
    """PostgreSQL 17 ran alone five times at a level 35 % slower (narrowed runs of other hours, as on ``2de39d7f``), then
    beside 16 and 18. Tonight 17 is 25 % slower: against its whole history (whose mean the lone runs lift by 13 %) that
    is a move of about 12 % beyond the others, against the runs all three shared it is the whole 25 %, and that is what
    its family is judged by (``drift._beside``). An honest night after the same history moves no family."""
    early = {"postgres-17": [0.3] * 5}
    moved = _judged({"postgres-17": [0.25]}, early=early)["postgres-17"]
    assert all(c.family_selected for c in moved), [c.p_family for c in moved]
    assert all(0.2 < c.family_sign < 0.3 for c in moved), [c.family_sign for c in moved]
    honest = _judged({}, early=early)
    assert not any(c.family_selected for cs in honest.values() for c in cs)
