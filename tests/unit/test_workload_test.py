"""A workload judged beside the same workload of the other versions (`history.drift.workloads`): one version's few
timings of one workload 1.5x slower call those timings, where the family's median does not move; a quiet night, and
the same workload slower on every version, call none.

Fixed inputs, no timing: one suite, three engines, a workload of six timings beside one of thirty, eight earlier runs
on one host with a small deterministic jitter, series 4 % a night, the record's family contrast 5 %. The real test is
on recorded nights (`tests/recorded/test_same_host.py`).
"""

from __future__ import annotations

from jsonbench.history.drift import CalibratedSeries, WindowedSeries, judge_families, window_test
from jsonbench.history.drift.family_verdicts import read_moves
from jsonbench.history.drift.workloads import workload_tests

ENGINES = ("postgres-16", "postgres-17", "postgres-18")
SUITE = "catalogue"
HISTORY = 8
WORKLOADS = {"reads": 6, "updates": 30}


def _record() -> dict[str, object]:
    return {"families": {f"{SUITE}/{e}": {"engine_build": "b", "sigma": 0.07, "contrast_sigma": 0.05, "suite": SUITE} for e in ENGINES}}


def _tested(tonight: dict[tuple[str, str], float]) -> list[WindowedSeries]:
    """Every timing at 0 (jittered) over the history; tonight ``(engine, workload)`` moved by that much (log, slower positive)."""
    out: list[WindowedSeries] = []
    runs = tuple(f"r{j}" for j in range(HISTORY + 1))
    for e in ENGINES:
        for w, n in WORKLOADS.items():
            for i in range(n):
                jitter = [0.01 * (((i * 7 + j * 3) % 5) - 2) for j in range(HISTORY + 1)]
                points = [*jitter[:-1], jitter[-1] + tonight.get((e, w), 0.0)]
                entry = {"kind": "timed", "workload": w}
                c = CalibratedSeries(
                    SUITE, len(out), e, "b", "ms", entry, 0.04, tuple(points[:-1]), points[-1], runs=runs, hosts=("h",) * len(runs)
                )
                out.append(window_test(c, 3, 1, None))
    return out


def _called(tested: list[WindowedSeries]) -> dict[tuple[str, str], int]:
    result = judge_families(tested, _record(), 0.01, 0.05)
    out: dict[tuple[str, str], int] = {}
    for t in tested:
        if result.call(t.series.key).workload is not None:
            key = (t.series.engine_id, str(t.series.entry["workload"]))
            out[key] = out.get(key, 0) + 1
    return out


def test_one_versions_workload_moved_is_called_where_its_family_did_not_move() -> None:
    tested = _tested({("postgres-17", "reads"): 0.4})
    fm = read_moves(tested, _record())
    assert abs(fm.moves[(SUITE, "postgres-17")][1][0]) < 0.02  # the family's median: 6 of 36 timings moved
    one = next(t for t in workload_tests(fm) if (t.engine, t.workload, t.nights) == ("postgres-17", "reads", 1))
    assert 0.38 < one.move < 0.42 and one.nights_learned == HISTORY and one.sigma < one.prior and one.p < 1e-6
    assert _called(tested) == {("postgres-17", "reads"): 6}


def test_a_quiet_night_and_a_workload_slower_on_every_version_call_no_workload() -> None:
    assert _called(_tested({})) == {}
    assert _called(_tested({(e, "reads"): 0.4 for e in ENGINES})) == {}


def test_a_neighbour_apart_from_the_median_engine_a_slower_version_made_is_not_called() -> None:
    """PostgreSQL 16's reads 1.5x slower make the higher of the other two the median engine; PostgreSQL 17's reads, 10 %
    below PostgreSQL 18's tonight, would seem to have moved by that gap. With the moved workload left out of the median
    beside them, only PostgreSQL 16's reads are called."""
    tonight = {("postgres-16", "reads"): 0.4, ("postgres-17", "reads"): -0.05, ("postgres-18", "reads"): 0.05}
    tested = _tested(tonight)
    plain = next(
        t for t in workload_tests(read_moves(tested, _record())) if (t.engine, t.workload, t.nights) == ("postgres-17", "reads", 1)
    )
    assert plain.move < -0.09 and plain.p < 1e-4, "beside the median of all three, the gap alone looks like a move"
    assert _called(tested) == {("postgres-16", "reads"): 6}
