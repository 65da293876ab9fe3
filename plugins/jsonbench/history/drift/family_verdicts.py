"""A family's own verdicts: a move sustained over nights, and a move of every engine at once; and the family stage.

The family test (:mod:`~jsonbench.history.drift.families`) finds a 1.25x version (the median of 50-180 timings stands
out by 4-5 of its sigmas), but each series of it must still pass its own test at ``q * R / F``, and at 10-20 % between
starts a 1.25x reaches that in 2-21 % of the series whose own noise allows it (``jsonbench drift-recheck``, three
hosts). Calling every series of a family selected on one night raised 72 and 357 alarms on honest nights, and the
family test still selects a family on about one honest night in five, never the same family twice in a row: an honest
family's excursion does not last, a version's regression does. So the verdict is the family's, and only a *sustained*
move beyond the versions measured beside it earns it (:func:`verdict_calls`).
"""

from __future__ import annotations

import logging
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from jsonbench.history.drift.beside import common_runs, nightly, series_on_common
from jsonbench.history.drift.families import (
    FamilyCall,
    FamilyJudgement,
    FamilyMoves,
    SeriesId,
    family_test,
    hearing_of,
    read_moves,
    selected_calls,
)
from jsonbench.history.drift.versions import version_calls, version_tests
from jsonbench.history.drift.window import WindowedSeries
from jsonbench.history.drift.workloads import workload_calls, workload_tests
from jsonbench.history.noise import CONTRAST
from jsonbench.history.stats import HOST_MIN_FAMILIES, benjamini_hochberg, common_p, contrast_p, nights_apart, norm_sf, went_along_p

log = logging.getLogger(__name__)

#: The fewest earlier runs beside the suite's other engines a family's verdict is judged against: every night of its
#: window is compared with the same reference, and with one run of it, one odd start of one version would make every
#: night look apart. Two and three raised the same honest alarms over every recorded host (``drift-recheck``), and two
#: caught more of a planted version where whole-matrix history is short (on one recorded host: 30 % of the series whose
#: noise allows it, against 4 %).
VERDICT_MIN_REF = 2


def judge_families(tested: Sequence[WindowedSeries], record: Mapping[str, Any], q: float, attribute_p: float) -> FamilyJudgement:
    """The family stage of a run: the family test, the families' sustained verdicts, every engine moving the same way,
    and the run-wide move, each calling the series the ones before it did not discover."""
    fm = read_moves(tested, record)
    tests = family_test(fm, q)
    calls: dict[SeriesId, FamilyCall] = {}
    if tests:
        adj = benjamini_hochberg([t[2] for t in tests])
        selected = [t for t, a in zip(tests, adj, strict=True) if a <= q]
        level = q * len(selected) / len(tests)
        for suite, engine, _, k, med in selected:
            calls.update(selected_calls(fm, (suite, engine), k, med, level))
        calls.update(verdict_calls(fm, calls, q, attribute_p))
        calls.update(_every_engine_selected(fm, calls, [(sx, e, m) for sx, e, _, _, m in selected]))
    versions, workloads = version_tests(fm), workload_tests(fm)
    calls.update(version_calls(fm, calls, q, attribute_p, versions))
    calls.update(workload_calls(fm, calls, q, attribute_p, workloads))
    calls.update(common_calls(fm, record, q, calls))
    hearing = {
        **hearing_of(versions, lambda t: ("", t.engine, "")),
        **hearing_of(workloads, lambda t: (t.suite, t.engine, t.workload)),
    }
    return FamilyJudgement(calls, fm, hearing)


def _verdict_test(
    f: tuple[str, str], fm: FamilyMoves, nights: Mapping[tuple[tuple[str, str], int], tuple[list[float], float, float]], attribute_p: float
) -> tuple[float, float, int, float] | None:
    """A family's sustained test: (p, its move beyond the host's, the window, the host's move) of its best window of two
    or three nights in which each night stood apart the same way; None when no window did."""
    suite, engine = f
    has_contrast = bool((fm.fams.get(f"{suite}/{engine}") or {}).get(CONTRAST))
    best: tuple[float, float, int, float] | None = None
    for k in (2, 3):
        contrast = fm.contrast(f, k) if has_contrast else 0.0
        got = nights.get((f, k))
        beside = [v for ((sx, _), kk), v in nights.items() if kk == k and sx == suite]
        if not contrast or got is None or got[2] < VERDICT_MIN_REF or len(beside) < HOST_MIN_FAMILIES:
            continue
        host = statistics.median(v[1] for v in beside)
        rel = got[1] - host
        p = contrast_p(rel, contrast, k, got[2])
        # Each night of the window apart from the suite's median engine that night, the same way.
        zs = nights_apart(got[0], [v[0] for v in beside], contrast, got[2])
        log.debug(
            "family %s/%s window %d: %+.3f beyond the host, p %.2g, nights' z %s", suite, engine, k, rel, p, [round(z, 2) for z in zs]
        )
        if all(z * rel > 0 and norm_sf(abs(z)) <= attribute_p for z in zs) and (best is None or p < best[0]):
            best = (p, rel, k, host)
    return best


def verdict_calls(fm: FamilyMoves, calls: Mapping[SeriesId, FamilyCall], q: float, attribute_p: float) -> dict[SeriesId, FamilyCall]:
    """The series of a family that stood apart from the versions beside it on each of the last two or three nights.

    * every night of the window, and every run it is compared with, ran at least ``HOST_MIN_FAMILIES`` engines of the
      suite (:func:`~jsonbench.history.drift.beside.common_runs`), and the record holds the family's sigma against them
      (``contrast_sigma``): the host's hour moves every version alike and cancels, on both sides of the comparison. One
      engine alone cannot be told from the host's hour, which the canary does not feel (on one recorded host the catalogue of
      PostgreSQL 17, run alone, moved 19-21 % over three honest runs, each 2.2-2.9 of its sigmas); nor can a family whose
      history holds hours the versions beside it were not measured in;
    * its median change over the last two or three nights (tonight's included), less the suite's median engine's,
      against at least ``VERDICT_MIN_REF`` such runs before them: Bonferroni over the two windows, Benjamini-Hochberg at
      ``q`` over the run's families;
    * each night of that window alone apart the same way (one-sided p <= ``attribute_p``): neither one night's
      excursion (which a window of two carries half of) nor one that has ended earns it.

    In a family with a verdict, a series is its finding when its own change over that window (against the same runs),
    less the host's, went the family's way at one-sided p <= ``attribute_p`` (and exceeds ``min_effect``, as every alarm
    must): the discovery is the family's, controlled at ``q``; the series are the ones that carried it.
    """
    fam_keys = [f for f, by_k in fm.moves.items() if 1 in by_k]
    common = {sx: common_runs(fm.members, sx) for sx in {sx for sx, _ in fam_keys}}
    nights = {(f, k): got for f in fam_keys for k in (2, 3) if (got := nightly(fm.members[f], k, common[f[0]])) is not None}
    tests = [(f, _verdict_test(f, fm, nights, attribute_p)) for f in fam_keys]
    ps = [1.0 if best is None else min(1.0, 2 * best[0]) for _, best in tests]
    out: dict[SeriesId, FamilyCall] = {}
    for (f, best), a in zip(tests, benjamini_hochberg(ps), strict=True):
        if a > q or best is None or not best[2]:
            continue
        _, rel, k, host = best
        log.info(
            "the family %s/%s moved %+.1f%% beyond the versions beside it over %d nights, each night the same way: its verdict "
            "(BH-adjusted p %.2g)",
            f[0],
            f[1],
            100 * (math.exp(rel) - 1),
            k,
            a,
        )
        for t in fm.members[f]:
            c = t.series
            if c.way == 0 or c.kind != "timed" or calls.get(c.key, FamilyCall()).discovered:
                continue
            mine = series_on_common(c, c.way, k, common[f[0]])
            if mine is None:
                continue
            _, d, nref = mine
            p_one = went_along_p(d, host, c.sigma, k, nref, rel)
            if p_one > attribute_p:
                continue
            prev = calls.get(c.key, FamilyCall())
            out[c.key] = replace(
                prev, selected=True, sign=rel, verdict=(k, rel, a), p_family=p_one / attribute_p, window=(c.way * d, k, nref)
            )
    return out


def _every_engine_selected(
    fm: FamilyMoves, calls: Mapping[SeriesId, FamilyCall], selected: Sequence[tuple[str, str, float]]
) -> dict[SeriesId, FamilyCall]:
    """Every engine of a suite selected, the same way, while the canary held: each of their series says it is that."""
    out: dict[SeriesId, FamilyCall] = {}
    for suite in fm.measured:
        moved = [(e, m) for sx, e, m in selected if sx == suite]
        engines = {e for (sx, e) in fm.moves if sx == suite}
        if (
            len(engines) >= HOST_MIN_FAMILIES
            and len(moved) == len(engines)
            and (all(m > 0 for _, m in moved) or all(m < 0 for _, m in moved))
        ):
            for e, _ in moved:
                for t in fm.members[(suite, e)]:
                    out[t.series.key] = replace(calls.get(t.series.key, FamilyCall()), common=True)
    return out


def common_calls(fm: FamilyMoves, record: Mapping[str, Any], q: float, calls: Mapping[SeriesId, FamilyCall]) -> dict[SeriesId, FamilyCall]:
    """Did every engine move at once while the canary held? One test of the run-wide move: a harness or setting change.

    Each family's own test is judged against how much a family moves between engine starts (5-16 % on one host), so a
    change that moves every engine by 25 % in one night hides in each of them; the median family of a run moves far
    less between starts (the record's ``common`` level), so the median over tonight's families, in the suites where the
    canary took the host out, is tested against that, once, at ``q``. When it moved, every series of those families that
    moved the same way is the same finding, said once in each note: "every engine moved this way while the host measured
    the same: a harness or setting change, not the host". Then each such suite alone (:func:`suite_calls`).
    """
    sigma = float((record.get("common") or {}).get("sigma") or 0.0)
    fams = [(f, by_k[1]) for f, by_k in fm.moves.items() if f[0] in fm.measured and 1 in by_k]
    if not sigma or len(fams) < HOST_MIN_FAMILIES:
        return {}
    out = _moved_together(fm, fams, sigma, q, 1, calls)
    return {**out, **suite_calls(fm, q, {**calls, **out})}


def suite_calls(fm: FamilyMoves, q: float, calls: Mapping[SeriesId, FamilyCall]) -> dict[SeriesId, FamilyCall]:
    """Did every engine of one suite move at once while the canary held? That suite's harness (or its engines' shared
    setting), which the run-wide median cannot see when the suite's engines are a minority of the run's families: every
    SQLite 1.3x slower moved 3 of 12 families. Each suite of ``HOST_MIN_FAMILIES`` engines or more whose canary took
    the host out is tested against how much one of its families moves as a whole between honest runs (the median of
    their record ``sigma``), Bonferroni over those suites: an hour of the host the canary does not feel moves every
    version of the catalogue 8-12 % together, and the run-wide ``common`` level (4 %) alarmed on every timing of it."""
    suites = sorted({f[0] for f in fm.moves if f[0] in fm.measured})
    out: dict[SeriesId, FamilyCall] = {}
    for suite in suites:
        fams = [(f, by_k[1]) for f, by_k in fm.moves.items() if f[0] == suite and 1 in by_k]
        sigmas = [float(s) for f, _ in fams if (s := fm.fams[f"{f[0]}/{f[1]}"].get("sigma"))]
        if len(fams) >= HOST_MIN_FAMILIES and sigmas:
            out.update(_moved_together(fm, fams, statistics.median(sigmas), q, len(suites), {**calls, **out}))
    return out


def _moved_together(
    fm: FamilyMoves,
    fams: Sequence[tuple[Any, tuple[float, float, float]]],
    sigma: float,
    q: float,
    tests: int,
    calls: Mapping[SeriesId, FamilyCall],
) -> dict[SeriesId, FamilyCall]:
    """The median move of ``fams`` tested against ``sigma`` (one of ``tests`` tests); when it moved, each series of a
    family that moved its way, not yet discovered, called as that common move."""
    med = statistics.median(m for _, (m, _, _) in fams)
    nref = statistics.median(n for _, (_, n, _) in fams)
    p = min(1.0, common_p(med, sigma, nref) * tests)
    if p > q:
        return {}
    out: dict[SeriesId, FamilyCall] = {}
    for f, (fmed, _, _) in fams:
        if fmed * med <= 0:
            continue
        for t in fm.members[f]:
            c, w = t.series, t.test.of(1)
            prev = calls.get(c.key, FamilyCall())
            if w is None or c.way == 0 or c.way * w.change * med <= 0 or prev.discovered:
                continue  # not this way, or already discovered by its family's own test
            out[c.key] = replace(prev, selected=True, sign=fmed, common=True, p_family=p / q, window=(w.change, w.nights, w.ref_runs))
    return out
