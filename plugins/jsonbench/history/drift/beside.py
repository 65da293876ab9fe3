"""A family beside the other versions of its suite: its moves on the runs where they ran with it.

A contrast (one version's move less its suite's median engine's) cancels the host only when every engine's move is
measured against the same earlier runs. Against each series' whole history, one version's narrowed runs (one engine,
two suites, other hours) enter its own reference and not the others': on one recorded host PostgreSQL 17's json_vs_jsonb
history is mostly such runs, several of them 25-40 % slower than its whole-matrix nights, while 16 and 18 have
whole-matrix nights only. A 1.25x regression of 17 on its last three nights then moved it 12-15 % (log) against its
whole history, 5-15 % beyond 16's and 18's moves against theirs, and its family was never selected; on the one run
all three shared it moved 22 % (+24.7 %) beyond them. So where :data:`~jsonbench.history.stats.HOST_MIN_FAMILIES`
engines of a suite have a reference of runs they all ran in (:func:`common_runs`, the runs a family's sustained verdict
reads too), the window is judged on those runs alone. Fewer reference runs, less power the first night (a planted
version on one recorded host: 8 series the first night, not 22; 199 within three nights either way; docs/methods/drift.md).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from jsonbench.history.drift.series import CalibratedSeries
from jsonbench.history.drift.window import WindowedSeries
from jsonbench.history.noise import CONTRAST
from jsonbench.history.stats import FAMILY_MIN_SERIES, HOST_MIN_FAMILIES, benjamini_hochberg, nightly_medians, norm_sf, on_common, shrunk

#: A family: one engine's suite, ``(suite, engine id)``.
Family = tuple[str, str]
#: Per family and window (nights): (the median change of its timings, their median reference runs, their median host mix).
Moves = dict[Family, dict[int, tuple[float, float, float]]]
#: Per window, the families judged beside the other versions: (its median move, its suite's median family's move, the
#: median reference runs, the runs they shared).
Beside = dict[int, dict[Family, tuple[float, float, float, set[str]]]]


#: Weight, in nights, of the record's sigma against this host's own nights when a family's, a version's or a workload's
#: sigma beside the other versions is learned (:func:`own_contrasts`): two. Each night's contrast is a median over many
#: timings, so a few nights say much of it; the record pools hosts whose versions move apart several times more (one
#: SQLite version's 8 % in the record, 1-2 % on a quiet host), and at four nights' worth a 1.25x cell hid in it.
CONTRAST_PRIOR_DF = 2


@dataclass(frozen=True)
class UnitTest:
    """A unit judged as a whole beside the other versions (a version, a workload of one) in a window of ``nights``: its
    ``move`` (log, slower positive), the sigma it was judged at (this host's ``own`` over ``nights_learned`` earlier
    nights shrunk towards ``prior`` by ``CONTRAST_PRIOR_DF``), the median reference runs and the two-sided normal p."""

    nights: int
    move: float
    sigma: float
    own: float | None
    nights_learned: int
    prior: float
    nref: float
    p: float


def unit_test(nights: int, move: float, earlier: Sequence[float], prior: float, nref: float) -> dict[str, Any]:
    """The fields of a :class:`UnitTest` whose earlier nights on this host moved it by ``earlier``."""
    own_var = statistics.variance(earlier) if len(earlier) >= 2 else None
    sigma = shrunk(own_var, len(earlier) - 1, prior, CONTRAST_PRIOR_DF)
    p = 2 * norm_sf(abs(move) / (sigma * math.sqrt(1.0 / nights + 1.0 / max(nref, 1.0))))
    own = math.sqrt(own_var) if own_var is not None else None
    return {
        "nights": nights,
        "move": move,
        "sigma": sigma,
        "own": own,
        "nights_learned": len(earlier),
        "prior": prior,
        "nref": nref,
        "p": p,
    }


K = TypeVar("K", bound=Hashable)
T = TypeVar("T", bound=UnitTest)


def moved_units(tests: Iterable[T], key: Callable[[T], K], q: float) -> dict[K, tuple[T, float]]:
    """The units that moved: each one's best window, Bonferroni over its windows, then Benjamini-Hochberg at ``q`` over
    the run's units; per unit, its best test and its adjusted p."""
    best: dict[K, T] = {}
    tried: dict[K, int] = {}
    for t in tests:
        k = key(t)
        tried[k] = tried.get(k, 0) + 1
        if k not in best or t.p < best[k].p:
            best[k] = t
    keys = sorted(best)  # type: ignore[type-var]
    adjusted = benjamini_hochberg([min(1.0, best[k].p * tried[k]) for k in keys])
    return {k: (best[k], a) for k, a in zip(keys, adjusted, strict=True) if a <= q}


def common_runs(members: Mapping[Family, Sequence[WindowedSeries]], suite: str) -> set[str]:
    """The runs in which at least ``HOST_MIN_FAMILIES`` engines of ``suite`` were measured: where a family's move can be
    told from the host's by the versions beside it."""
    engines: dict[str, set[str]] = {}
    for (sx, e), ts in members.items():
        if sx == suite:
            for t in ts:
                for r in t.series.runs:
                    engines.setdefault(r, set()).add(e)
    return {r for r, es in engines.items() if len(es) >= HOST_MIN_FAMILIES}


def series_on_common(c: CalibratedSeries, way: int, k: int, common: Collection[str]) -> tuple[list[float], float, int] | None:
    """A series' last ``k`` nights against its earlier runs of its current level that ran beside the suite's other
    engines (:func:`jsonbench.history.stats.on_common`).

    These keep the nights its lone reference leaves out as far from the others
    (:attr:`~jsonbench.history.drift.series.CalibratedSeries.far`): the engines' moves cancel the host only against the
    same runs, and each series leaves out nights of its own; one series' far night does not move its family's median
    move, nor the engines' beside it, and a night far for most of them is the host's, which the contrast cancels. A
    family's sigma against the others is learned from the same runs, those nights kept (:func:`own_contrasts`)."""
    return on_common([*c.logs, c.tonight], c.runs, c.base, way, k, common)


def nightly(cs: Sequence[WindowedSeries], k: int, common: Collection[str]) -> tuple[list[float], float, float] | None:
    """A family over the last ``k`` nights, every timing against its earlier runs beside the suite's other engines:
    the median move of each night, of the window, and the median number of reference runs (None: too few timings)."""
    got = [
        x for t in cs if t.series.kind == "timed" and (way := t.series.way) if (x := series_on_common(t.series, way, k, common)) is not None
    ]
    return nightly_medians(got, k)


def earlier_moves(c: CalibratedSeries, k: int, common: Collection[str]) -> dict[str, float]:
    """A series' earlier runs of its current level on tonight's host, beside its suite's other engines and before the
    window of ``k`` nights: each one's move (slower positive) from their mean; empty with fewer than two."""
    series = [*c.logs, c.tonight]
    n = len(series)
    if len(c.runs) != n or c.way == 0:
        return {}
    here = c.hosts[-1] if len(c.hosts) == n else None
    idx = [i for i in range(c.base, n - k) if c.runs[i] in common and (here is None or c.hosts[i] == here)]
    if len(idx) < 2:
        return {}
    mean = statistics.fmean(series[i] for i in idx)
    return {c.runs[i]: c.way * (series[i] - mean) for i in idx}


def suite_contrasts(
    members: Mapping[Family, Sequence[WindowedSeries]],
    suite: str,
    k: int,
    common: Collection[str],
    part: Callable[[CalibratedSeries], str | None] = lambda c: "",
    least: int = FAMILY_MIN_SERIES,
) -> dict[tuple[str, str], dict[str, float]]:
    """Per engine of ``suite`` and part of it (``part``: the whole family by default, or a workload), its median move
    beyond the same part's median engine on each earlier run (run -> log): the contrast it is judged by tonight, night by
    night before the window. A part needs ``least`` timings on a run, and ``HOST_MIN_FAMILIES`` engines beside it."""
    parts: dict[tuple[str, str], dict[str, float]] = {}
    for (sx, engine), ts in members.items():
        if sx != suite:
            continue
        per_run: dict[tuple[str, str], dict[str, list[float]]] = {}
        for t in ts:
            if t.series.timed and (name := part(t.series)) is not None:
                for r, v in earlier_moves(t.series, k, common).items():
                    per_run.setdefault((engine, name), {}).setdefault(r, []).append(v)
        for key, runs in per_run.items():
            parts[key] = {r: statistics.median(v) for r, v in runs.items() if len(v) >= least}
    out: dict[tuple[str, str], dict[str, float]] = {key: {} for key in parts}
    for name in {n for _, n in parts}:
        mine = {key: m for key, m in parts.items() if key[1] == name}
        for r in {r for m in mine.values() for r in m}:
            here = {key: m[r] for key, m in mine.items() if r in m}
            if len(here) >= HOST_MIN_FAMILIES:
                mid = statistics.median(here.values())
                for key, v in here.items():
                    out[key][r] = v - mid
    return out


def beside_moves(
    members: Mapping[Family, Sequence[WindowedSeries]], moves: Moves, seen: Mapping[int, set[str]], fams: Mapping[str, Any]
) -> Beside:
    """Per window, the families judged against the versions beside them on the runs where those versions ran beside
    them (see the module): only in suites where the host's move was seen and for families the record holds a contrast
    sigma of, and only where ``HOST_MIN_FAMILIES`` of them have such runs."""
    out: Beside = {1: {}, 2: {}, 3: {}}
    suites = {sx for sx, _ in moves}
    common = {sx: common_runs(members, sx) for sx in suites}
    for k in (1, 2, 3):
        for suite in suites:
            if suite not in seen[k]:
                continue
            got = {
                f: x
                for f, by_k in moves.items()
                if f[0] == suite and k in by_k and (fams.get(f"{f[0]}/{f[1]}") or {}).get(CONTRAST)
                if (x := nightly(members[f], k, common[suite])) is not None
            }
            if len(got) < HOST_MIN_FAMILIES:
                continue
            host = statistics.median(x[1] for x in got.values())
            for f, x in got.items():
                out[k][f] = (x[1], host, x[2], common[suite])
    return out


def own_contrasts(
    members: Mapping[Family, Sequence[WindowedSeries]], beside: Beside, fams: Mapping[str, Any]
) -> dict[int, dict[Family, float]]:
    """Per window, each family judged beside the other versions: its sigma against them learned on this host.

    The spread of its contrast over its earlier nights here (:func:`suite_contrasts`), shrunk toward the record's
    ``contrast_sigma`` by ``CONTRAST_PRIOR_DF``: the record pools hosts whose versions move apart several times more than a
    quiet machine's, and a version's 1.1x in one suite hid in it for three nights."""
    out: dict[int, dict[Family, float]] = {}
    for k, by_f in beside.items():
        seen: dict[str, dict[tuple[str, str], dict[str, float]]] = {}
        for f, (_, _, _, common) in by_f.items():
            suite, engine = f
            if suite not in seen:
                seen[suite] = suite_contrasts(members, suite, k, common)
            values = list(seen[suite].get((engine, ""), {}).values())
            own = statistics.variance(values) if len(values) >= 2 else None
            out.setdefault(k, {})[f] = shrunk(own, len(values) - 1, float(fams[f"{suite}/{engine}"][CONTRAST]), CONTRAST_PRIOR_DF)
    return out
