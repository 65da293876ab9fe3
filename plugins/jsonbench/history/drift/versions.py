"""A version judged as a whole: every suite of one engine moving beyond the versions beside it.

A version's regression moves each of its suites beyond the other versions of that suite. Each family (one suite of the
version) is judged alone against its contrast sigma, and a small change of a whole version can hide in each; the mean of its
contrasts over its suites moves by the whole change while their noise averages down as far as the suites' engine starts
are independent. How far is this host's to say: the version's own contrast sigma is the spread of that mean over its
earlier nights on this host beside the others, shrunk towards the record's (the suites' contrast sigmas averaged, as if
they moved together: the cautious prior) by ``CONTRAST_PRIOR_DF``. A new machine starts from the prior and after a few quiet
nights is judged by its own noise.

When the version moved (Bonferroni over the windows of one to three nights, Benjamini-Hochberg at ``q`` over the run's
versions), a series of it is the version's finding when its own change over that window went the version's way beyond
its suite's median engine at one-sided p <= ``attribute_p``, as a family's sustained verdict calls its series.
"""

from __future__ import annotations

import logging
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from jsonbench.history.drift.beside import Family, UnitTest, moved_units, suite_contrasts, unit_test
from jsonbench.history.drift.families import FamilyCall, FamilyMoves, SeriesId, went_along
from jsonbench.history.noise import CONTRAST

log = logging.getLogger(__name__)

#: The fewest suites a version is judged over as a whole: one suite is its family, judged as such.
VERSION_MIN_SUITES = 2


@dataclass(frozen=True)
class VersionTest(UnitTest):
    """One version's test over its ``suites``: its move is the mean of its contrasts over them; its prior the record's
    contrast sigmas of those suites averaged."""

    engine: str = ""
    suites: tuple[str, ...] = ()


def version_tests(fm: FamilyMoves) -> list[VersionTest]:
    """Each version judged over every suite where it was measured beside the others, in each window of 1 .. 3 nights."""
    tests: list[VersionTest] = []
    engines = sorted({e for by_f in fm.beside.values() for (_, e) in by_f})
    for k in (1, 2, 3):
        beside = fm.beside.get(k) or {}
        contrasts: dict[str, dict[tuple[str, str], dict[str, float]]] = {}
        for engine in engines:
            suites = tuple(sorted(sx for (sx, e) in beside if e == engine))
            if len(suites) < VERSION_MIN_SUITES:
                continue
            for sx in suites:
                if sx not in contrasts:
                    contrasts[sx] = suite_contrasts(fm.members, sx, k, beside[(sx, engine)][3])
            move = statistics.fmean(beside[(sx, engine)][0] - beside[(sx, engine)][1] for sx in suites)
            nref = statistics.median(beside[(sx, engine)][2] for sx in suites)
            prior = statistics.fmean(float(fm.fams[f"{sx}/{engine}"][CONTRAST]) for sx in suites)
            runs = set.intersection(*(set(contrasts[sx].get((engine, ""), {})) for sx in suites))
            nightly = [statistics.fmean(contrasts[sx][(engine, "")][r] for sx in suites) for r in sorted(runs)]
            tests.append(VersionTest(**unit_test(k, move, nightly, prior, nref), engine=engine, suites=suites))
    return tests


def version_calls(
    fm: FamilyMoves, calls: Mapping[SeriesId, FamilyCall], q: float, attribute_p: float, tests: Sequence[VersionTest] | None = None
) -> dict[SeriesId, FamilyCall]:
    """The series of each version that moved as a whole (``tests``: :func:`version_tests`, computed when not given), not
    yet discovered by their families, that went its way."""
    out: dict[SeriesId, FamilyCall] = {}
    moved = moved_units(version_tests(fm) if tests is None else tests, lambda t: t.engine, q)
    for engine, (best, a) in sorted(moved.items()):
        log.info("the version %s moved as a whole (BH-adjusted p %.2g): %s", engine, a, version_summary([best])[0])
        out.update(_went_along(fm, best, a, calls, attribute_p))
    return out


def _went_along(
    fm: FamilyMoves, v: VersionTest, adjusted: float, calls: Mapping[SeriesId, FamilyCall], attribute_p: float
) -> dict[SeriesId, FamilyCall]:
    out: dict[SeriesId, FamilyCall] = {}
    why = (v.nights, v.move, adjusted, len(v.suites), v.sigma, v.nights_learned)
    for sx in v.suites:
        f: Family = (sx, v.engine)
        _, host, _, common = fm.beside[v.nights][f]
        series = [t.series for t in fm.members[f]]
        out.update(went_along(series, host, v.nights, common, v.move, calls, attribute_p, version=why))
    return out


def version_summary(tests: Sequence[VersionTest]) -> list[str]:
    """One line per version and window, for the log: what each version's test saw."""
    return [
        f"{t.engine} over {len(t.suites)} suites, {t.nights} night(s): {math.expm1(t.move):+.1%} beyond the versions beside it, "
        f"sigma {t.sigma:.1%} (own {'-' if t.own is None else f'{t.own:.1%}'} over {t.nights_learned} nights, prior {t.prior:.1%}), p {t.p:.2g}"
        for t in tests
    ]
