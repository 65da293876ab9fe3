"""A version judged over its suites (`history.drift.versions`): a move of one version in every suite, too small for
each family alone, calls the series that went along when this host's nights show its versions steady beside each
other, and not when they show them moving apart night after night; a move of every version is none of a version's.

Fixed inputs, no timing: two suites, three engines each, ten series a family, eight earlier runs on one host with a
small deterministic jitter; series 4 % a night; the record's family contrast 5 %. The real test is on recorded nights
(`tests/recorded/test_same_host.py`).
"""

from __future__ import annotations

from dataclasses import replace

from jsonbench.history.drift import CalibratedSeries, WindowedSeries, judge_families, window_test
from jsonbench.history.drift.beside import earlier_moves
from jsonbench.history.drift.family_verdicts import read_moves
from jsonbench.history.drift.versions import version_tests

ENGINES = ("postgres-16", "postgres-17", "postgres-18")
SUITES = ("catalogue", "json_vs_jsonb")
HISTORY = 8
SERIES = 10


def _record() -> dict[str, object]:
    return {
        "families": {f"{s}/{e}": {"engine_build": "b", "sigma": 0.07, "contrast_sigma": 0.05, "suite": s} for s in SUITES for e in ENGINES}
    }


def _tested(tonight: dict[str, float], apart: float = 0.0) -> list[WindowedSeries]:
    """Every series at 0 (jittered) over the history, tonight moved by ``tonight[engine]`` (log, slower positive);
    ``apart``: each earlier night, each engine's whole suite off by +/- that much (its versions moving apart)."""
    out: list[WindowedSeries] = []
    runs = tuple(f"r{j}" for j in range(HISTORY + 1))
    for s in SUITES:
        for n, e in enumerate(ENGINES):
            for i in range(SERIES):
                off = [apart * (((j + n + len(s)) % 3) - 1) for j in range(HISTORY)]
                jitter = [0.01 * (((i * 7 + j * 3) % 5) - 2) for j in range(HISTORY + 1)]
                points = [o + jt for o, jt in zip([*off, tonight.get(e, 0.0)], jitter, strict=True)]
                c = CalibratedSeries(
                    s, len(out), e, "b", "ms", {"kind": "timed"}, 0.04, tuple(points[:-1]), points[-1], runs=runs, hosts=("h",) * len(runs)
                )
                out.append(window_test(c, 3, 1, None))
    return out


def _version_calls(tested: list[WindowedSeries]) -> dict[str, int]:
    result = judge_families(tested, _record(), 0.01, 0.05)
    out: dict[str, int] = {}
    for t in tested:
        if result.call(t.series.key).version is not None:
            out[t.series.engine_id] = out.get(t.series.engine_id, 0) + 1
    return out


def test_earlier_moves_are_each_runs_move_from_their_mean_on_tonights_host() -> None:
    c = CalibratedSeries("s", 0, "e", "b", "ms", {"kind": "timed"}, 0.04, (0.0, 0.2, 0.1, 0.9), 0.5, runs=("a", "b", "c", "d", "t"))
    c = replace(c, hosts=("h", "h", "x", "h", "h"))
    moves = earlier_moves(c, 1, {"a", "b", "c", "d"})
    assert moves.keys() == {"a", "b", "d"}  # c ran on another host
    assert abs(moves["a"] + 0.3667) < 1e-3 and abs(sum(moves.values())) < 1e-9
    assert earlier_moves(c, 4, {"a", "b", "c", "d"}) == {}  # one run before a window of four


def test_a_version_moved_in_every_suite_is_called_where_no_family_alone_is() -> None:
    tested = _tested({"postgres-17": 0.12})
    fm = read_moves(tested, _record())
    one = [t for t in version_tests(fm) if t.engine == "postgres-17" and t.nights == 1]
    assert one and one[0].suites == SUITES and one[0].nights_learned == HISTORY
    assert one[0].own is not None and one[0].own < 0.005 and one[0].sigma < one[0].prior  # a steady host: below the record's
    result = judge_families(tested, _record(), 0.01, 0.05)
    pg17 = [result.call(t.series.key) for t in tested if t.series.engine_id == "postgres-17"]
    assert sum(c.version is not None for c in pg17) > len(pg17) // 2
    assert not any(c.verdict for c in pg17)  # one night: no family's sustained verdict
    assert _version_calls(tested).keys() == {"postgres-17"}


def test_the_same_move_on_a_host_whose_versions_move_apart_is_not_called() -> None:
    tested = _tested({"postgres-17": 0.12}, apart=0.16)
    fm = read_moves(tested, _record())
    one = next(t for t in version_tests(fm) if t.engine == "postgres-17" and t.nights == 1)
    assert one.own is not None and one.own > 0.05 and one.sigma > one.prior
    assert _version_calls(tested) == {}


def test_a_quiet_night_and_every_version_moving_together_call_no_version() -> None:
    assert _version_calls(_tested({})) == {}
    assert _version_calls(_tested(dict.fromkeys(ENGINES, 0.25))) == {}
