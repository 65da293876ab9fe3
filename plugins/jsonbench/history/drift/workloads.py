"""A workload judged as a whole: one version's timings of one workload moving beyond the same workload on the versions
beside it.

A workload 1.5x slower moves a few of its family's hundred timings: the family's median does not move, and each timing
alone must pass the run's false-discovery control over thousands of series. The median of the workload's timings, less
the same workload's median engine that night, moves by the whole change while the host's move cancels. Its sigma is
this host's: the spread of that contrast over the earlier nights here, shrunk by ``CONTRAST_PRIOR_DF`` toward the
median sigma of its timings on this host. A workload's timings share their engine start, so their median moves about
as much as one of them: the family's sigma as the prior (a median of a hundred timings) raised honest alarms on 11 of
the 75 recorded nights where a workload's few nights of history had not yet shown its spread.

When a workload moved (Bonferroni over the windows of one to three nights, Benjamini-Hochberg at ``q`` over the run's
workloads), a timing of it is its finding when it went the workload's way at one-sided p <= ``attribute_p``.

With three versions the median engine is one of them: one version's workload 1.25x slower makes the higher of the other
two the median, and the lower one seems to have moved by their gap. So a workload that moved is left out of the median
its neighbours are judged beside (a moved one further out than the one judged), and the run's workloads are judged
again until the called set holds.
"""

from __future__ import annotations

import logging
import math
import statistics
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from jsonbench.history.drift.beside import Family, UnitTest, moved_units, series_on_common, suite_contrasts, unit_test
from jsonbench.history.drift.families import FamilyCall, FamilyMoves, SeriesId, went_along
from jsonbench.history.drift.series import CalibratedSeries
from jsonbench.history.drift.window import WindowedSeries
from jsonbench.history.stats import HOST_MIN_FAMILIES

log = logging.getLogger(__name__)

#: The fewest timings of a workload whose median is its move on a night.
WORKLOAD_MIN_SERIES = 3


def workload_of(c: CalibratedSeries) -> str | None:
    """The series' workload, as the record's entry names it (None without one)."""
    return str(c.entry.get("workload")) if c.entry.get("workload") else None


@dataclass(frozen=True)
class WorkloadTest(UnitTest):
    """One workload of one version: its move is the median of its timings beyond the same workload's median engine
    (``beside`` that engine's move); its prior the median sigma of its timings."""

    suite: str = ""
    engine: str = ""
    workload: str = ""
    beside: float = 0.0


#: The most times the run's workloads are judged again with the moved ones left out of the median beside them.
MASK_ROUNDS = 3

Unit = tuple[str, str, str]  # (suite, engine, workload)


#: The engine that stands in for a version whose workload was not judged tonight: the suite's median family.
SUITE = ""


def tonight_moves(
    members: Mapping[Family, list[WindowedSeries]],
    suite: str,
    k: int,
    common: Collection[str],
    moved: Collection[Unit] = (),
    host: float | None = None,
) -> dict[tuple[str, str], tuple[float, float, float]]:
    """Per (engine, workload) of ``suite`` over the last ``k`` nights: (its median move beyond the same workload's median
    engine, that engine's move, the median reference runs), where ``HOST_MIN_FAMILIES`` engines measured it; where one
    fewer did (a version's timings of it disturbed tonight), ``host`` (the suite's median family's move) stands in for
    the missing one. A workload in ``moved`` that stands further from the median than this one is left out of its
    median (all are kept when fewer than two would be left)."""
    per: dict[tuple[str, str], list[tuple[float, int]]] = {}
    for (sx, engine), ts in members.items():
        if sx != suite:
            continue
        for t in ts:
            c = t.series
            if c.timed and (w := workload_of(c)) and (x := series_on_common(c, c.way, k, common)) is not None:
                per.setdefault((engine, w), []).append((x[1], x[2]))  # slower positive already
    meds = {
        key: (statistics.median(d for d, _ in v), statistics.median(n for _, n in v))
        for key, v in per.items()
        if len(v) >= WORKLOAD_MIN_SERIES
    }
    out: dict[tuple[str, str], tuple[float, float, float]] = {}
    for w in {w for _, w in meds}:
        mine = {key: m for key, m in meds.items() if key[1] == w}
        if len(mine) == HOST_MIN_FAMILIES - 1 and host is not None:
            mine[(SUITE, w)] = (host, 0.0)
        if len(mine) >= HOST_MIN_FAMILIES:
            first = statistics.median(m for m, _ in mine.values())
            for key, (m, n) in mine.items():
                steady = [x for other, (x, _) in mine.items() if not _masks(suite, other, x, key, m, first, moved)]
                mid = statistics.median(steady) if len(steady) >= 2 else first
                if key[0] != SUITE:
                    out[key] = (m - mid, mid, n)
    return out


def _masks(suite: str, other: tuple[str, str], x: float, key: tuple[str, str], m: float, mid: float, moved: Collection[Unit]) -> bool:
    """Whether ``other`` (move ``x``) is left out of the median ``key`` (move ``m``) is judged beside."""
    return other != key and (suite, *other) in moved and abs(x - mid) > abs(m - mid)


def workload_tests(fm: FamilyMoves, moved: Collection[Unit] = ()) -> list[WorkloadTest]:
    """Each workload of each version judged beside the same workload of the others (less those in ``moved``), in each
    window of 1 .. 3 nights, in the suites whose families were judged beside each other."""
    tests: list[WorkloadTest] = []
    for k in (1, 2, 3):
        beside = fm.beside.get(k) or {}
        for suite in sorted({sx for sx, _ in beside}):
            common, host = next((x[3], x[1]) for f, x in beside.items() if f[0] == suite)
            history = suite_contrasts(fm.members, suite, k, common, workload_of, WORKLOAD_MIN_SERIES)
            for (engine, w), (move, mid, nref) in sorted(tonight_moves(fm.members, suite, k, common, moved, host).items()):
                sigmas = [t.series.sigma for t in fm.members.get((suite, engine), []) if t.series.timed and workload_of(t.series) == w]
                prior = statistics.median(sigmas) if sigmas else 0.0
                if not prior:
                    continue
                earlier = list(history.get((engine, w), {}).values())
                fields = unit_test(k, move, earlier, prior, nref)
                tests.append(WorkloadTest(**fields, suite=suite, engine=engine, workload=w, beside=mid))
    return tests


def workload_calls(
    fm: FamilyMoves, calls: Mapping[SeriesId, FamilyCall], q: float, attribute_p: float, first: list[WorkloadTest] | None = None
) -> dict[SeriesId, FamilyCall]:
    """The timings of each workload that moved as a whole, not yet discovered, that went its way (``first``: the tests
    with nothing left out of the median, :func:`workload_tests`, computed when not given)."""
    moved: dict[Unit, tuple[WorkloadTest, float]] = {}
    for _ in range(MASK_ROUNDS):
        called = judged(workload_tests(fm, set(moved)) if moved or first is None else first, q)
        if set(called) == set(moved):
            break
        moved = called
    out: dict[SeriesId, FamilyCall] = {}
    for w, a in (moved[key] for key in sorted(moved)):
        log.info(
            "the workload %s/%s of %s moved %+.1f%% beyond the versions beside it over %d night(s), sigma %.1f%% (BH-adjusted p %.2g)",
            w.suite, w.workload, w.engine, 100 * math.expm1(w.move), w.nights, 100 * w.sigma, a,
        )  # fmt: skip
        out.update(_went_along(fm, w, a, {**calls, **out}, attribute_p))
    return out


def judged(tests: list[WorkloadTest], q: float) -> dict[Unit, tuple[WorkloadTest, float]]:
    """The workloads that moved (:func:`~jsonbench.history.drift.beside.moved_units` over the run's workloads)."""
    return moved_units(tests, lambda t: (t.suite, t.engine, t.workload), q)


def _went_along(
    fm: FamilyMoves, w: WorkloadTest, adjusted: float, calls: Mapping[SeriesId, FamilyCall], attribute_p: float
) -> dict[SeriesId, FamilyCall]:
    common = fm.beside[w.nights][(w.suite, w.engine)][3]
    series = [t.series for t in fm.members[(w.suite, w.engine)] if workload_of(t.series) == w.workload]
    why = (w.nights, w.move, adjusted, w.sigma, w.nights_learned)
    return went_along(series, w.beside, w.nights, common, w.move, calls, attribute_p, workload=why)
