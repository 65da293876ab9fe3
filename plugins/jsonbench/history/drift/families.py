"""Did a whole family (one engine's suite) move? Benjamini-Bogomolov: BH over the families, then within each selected one.

A per-version regression moves every timing of an engine a little; one series' heavy-tailed noise hides a 1.25x
there, the median of a hundred does not. Per family and window (1 .. 3 nights), the median log change of its timed
series against the record's family sigma (how much honest runs move a whole family between engine starts) is a
z-test; BH at ``q`` over the run's families selects R of F. In a selected family each series is tested at the normal
p of that window, BH at ``q * R / F`` (Benjamini & Bogomolov 2014, selective inference on families), and must move the
same way.

Each family is judged against the host's own move of that window (:func:`jsonbench.history.stats.host_move`: the
median of its suite's engines, or of every family). A slower host moves every engine together (two honest laptop
reruns measured every family 2-6 % slower than the morning's runs, and the catalogue 8-12 % on all three versions,
with no other process and no steal to see), which no version change does; a version's regression moves its own
families away from the others. The host's move is not an alert about any engine: it is said in every judged row's
note. A family that stays apart over two or three nights gets a verdict of its own
(:mod:`~jsonbench.history.drift.family_verdicts`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from jsonbench.history.drift.beside import Beside, Family, Moves, UnitTest, beside_moves, own_contrasts, series_on_common
from jsonbench.history.drift.series import CalibratedSeries
from jsonbench.history.drift.window import WindowedSeries
from jsonbench.history.noise import CONTRAST, serves
from jsonbench.history.stats import benjamini_hochberg, family_p, host_move, host_seen, norm_sf, went_along_p

T = TypeVar("T", bound=UnitTest)
#: A calibrated series in a run: its suite and its row in the suite's frame.
SeriesId = tuple[str, int]


@dataclass(frozen=True)
class FamilyCall:
    """What a series' family said of it: ``selected`` (its family was selected, or its verdict or the run-wide move
    took it), the family's move (``sign``, log, slower positive), ``p_family`` (<= 1 exactly when discovered), the
    family's sustained ``verdict`` (nights, the family's move, BH-adjusted p), ``common`` (every engine of the suite
    moved this way while the canary held), the window (log change, nights, reference runs) the call judged, and
    ``version`` or ``workload`` when its whole version or its workload moved."""

    selected: bool = False
    sign: float = 0.0
    p_family: float = 1.0
    verdict: tuple[int, float, float] | None = None
    common: bool = False
    window: tuple[float, int, int] | None = None
    #: the version's test that called it (:mod:`~jsonbench.history.drift.versions`): nights, the version's move, its
    #: BH-adjusted p, its suites, the sigma it was judged at, and the earlier nights of this host that sigma learned from
    version: tuple[int, float, float, int, float, int] | None = None
    #: the workload's test that called it (:mod:`~jsonbench.history.drift.workloads`): nights, the workload's move, its
    #: BH-adjusted p, the sigma it was judged at, and the earlier nights of this host that sigma learned from
    workload: tuple[int, float, float, float, int] | None = None

    @property
    def discovered(self) -> bool:
        return self.selected and self.p_family <= 1.0


NOT_CALLED = FamilyCall()


@dataclass(frozen=True)
class FamilyMoves:
    """The run's families and how each moved, per window: what every family test reads.

    ``host``: the host's move per window and suite; ``seen``: per window, the suites where that move was read from
    engines beside each other; ``measured``: the suites where the canary took the host out of most timings and the
    record's families were calibrated with it; ``beside``: the families judged on the runs the versions shared."""

    fams: Mapping[str, Any]
    members: dict[Family, list[WindowedSeries]]
    moves: Moves
    host: dict[int, dict[str, float]]
    seen: dict[int, set[str]]
    measured: set[str]
    beside: Beside = field(default_factory=dict)
    #: per window, the sigma against the versions beside it each family judged beside them learned on this host
    contrasts: dict[int, dict[Family, float]] = field(default_factory=dict)

    def contrast(self, f: Family, k: int) -> float:
        """A family's sigma against the versions beside it in window ``k``: this host's where it was learned
        (:func:`~jsonbench.history.drift.beside.own_contrasts`), else the record's."""
        learned = self.contrasts.get(k, {}).get(f)
        return learned if learned is not None else float(self.fams[f"{f[0]}/{f[1]}"].get(CONTRAST) or 0.0)

    def against(self, f: Family, k: int) -> tuple[float, float]:
        """(the move a family's is judged beyond, the family sigma of that difference) in window ``k``.

        Beside the other versions on the runs they shared where it can be; else, where the record holds the family's
        sigma against the others (``CONTRAST``) and their move was seen, beyond their median; else as the record's
        ``sigma`` was calibrated: as it moved where the canary took the host out, beyond the engines' median otherwise.
        """
        suite = f[0]
        fam = self.fams[f"{f[0]}/{f[1]}"]
        if f in self.beside[k]:
            return self.beside[k][f][1], self.contrast(f, k)
        if fam.get(CONTRAST) and suite in self.seen[k]:
            return self.host[k].get(suite, 0.0), float(fam[CONTRAST])
        return (0.0 if suite in self.measured else self.host[k].get(suite, 0.0)), float(fam["sigma"])

    def host_move(self, f: Family) -> float:
        """The host's move tonight a family's notes quote: beside the other versions where it was judged so."""
        on = self.beside[1].get(f)
        return on[1] if on is not None else self.host[1].get(f[0], 0.0)


@dataclass(frozen=True)
class UnitHearing:
    """What a unit judged as a whole (a version, or a workload of one) could see tonight: the sigma it was judged at in
    one night and over three, its median reference runs, and the earlier nights of this host those sigmas learned from."""

    sigma_1: float
    sigma_3: float
    ref_runs: float
    nights: int

    def figures(self) -> list[float]:
        return [self.sigma_1, self.sigma_3, self.ref_runs, float(self.nights)]


#: A unit's key in :attr:`FamilyJudgement.hearing`: ``("", engine, "")`` a version, ``(suite, engine, workload)`` a workload.
UnitKey = tuple[str, str, str]


def hearing_of(tests: Iterable[T], key: Callable[[T], UnitKey]) -> dict[UnitKey, UnitHearing]:
    """Per unit, from its tests: its hearing, where it was tested in one night."""
    by: dict[UnitKey, dict[int, T]] = {}
    for t in tests:
        by.setdefault(key(t), {})[t.nights] = t
    return {k: UnitHearing(w[1].sigma, w.get(3, w[1]).sigma, w[1].nref, w[1].nights_learned) for k, w in by.items() if 1 in w}


@dataclass(frozen=True)
class FamilyJudgement:
    """The family stage's result: each called series' :class:`FamilyCall`, the families' moves, and what each version
    and workload judged as a whole could see (:class:`UnitHearing`)."""

    calls: dict[SeriesId, FamilyCall]
    moves: FamilyMoves
    hearing: dict[UnitKey, UnitHearing] = field(default_factory=dict)

    def call(self, key: SeriesId) -> FamilyCall:
        return self.calls.get(key, NOT_CALLED)

    def host_move(self, f: Family) -> float:
        return self.moves.host_move(f)

    def unit_hearing(self, suite: str, engine: str, workload: str | None) -> dict[str, list[float]]:
        """A series' version's and workload's hearing (:meth:`UnitHearing.figures`), where each was judged as a whole."""
        out: dict[str, list[float]] = {}
        if (v := self.hearing.get(("", engine, ""))) is not None:
            out["version"] = v.figures()
        if workload and (w := self.hearing.get((suite, engine, workload))) is not None:
            out["workload"] = w.figures()
        return out


def members_of(tested: Sequence[WindowedSeries]) -> dict[Family, list[WindowedSeries]]:
    """The run's calibrated series by family, in the order they were judged."""
    members: dict[Family, list[WindowedSeries]] = {}
    for t in tested:
        members.setdefault((t.series.suite, t.series.engine_id), []).append(t)
    return members


def family_moves(members: Mapping[Family, Sequence[WindowedSeries]], fams: Mapping[str, Any]) -> Moves:
    """Per family the record serves and window (1 .. 3 nights): its timings' median change (slower positive), their
    median reference runs, and the median host mix of its series; a window needs five timings."""
    moves: Moves = {}
    for f, ts in members.items():
        fam = fams.get(f"{f[0]}/{f[1]}")
        if not fam or not serves(fam, ts[0].series.engine_build):
            continue
        for k in (1, 2, 3):
            ds = [(t.series.way * w.change, w.ref_runs) for t in ts if t.series.timed for w in t.test.windows if w.nights == k]
            if len(ds) >= 5:
                mixes = [t.test.mix.get(k, 0.0) for t in ts if k in t.test.mix]
                moves.setdefault(f, {})[k] = (
                    statistics.median(d for d, _ in ds),
                    statistics.median(n for _, n in ds),
                    statistics.median(mixes) if mixes else 0.0,
                )
    return moves


def _measured(tested: Sequence[WindowedSeries], fams: Mapping[str, Any]) -> set[str]:
    """The suites where the canary measured the host beside each cell (most of their timed series shifted by it) and
    the record's families were calibrated with it: a change common to every engine there, which the canary did not
    show, is a harness or setting change (:func:`~jsonbench.history.drift.family_verdicts.common_calls`)."""
    by_suite: dict[str, list[WindowedSeries]] = {}
    for t in tested:
        by_suite.setdefault(t.series.suite, []).append(t)
    return {
        suite
        for suite, ts in by_suite.items()
        if (timed := [t for t in ts if t.series.timed])
        and sum(t.series.canary is not None for t in timed) * 2 > len(timed)
        and any(f.get("canary") for f in fams.values() if f.get("suite") == suite)
    }


def read_moves(tested: Sequence[WindowedSeries], record: Mapping[str, Any]) -> FamilyMoves:
    """The run's families, their moves per window, and the host's move they are judged beyond."""
    fams = record.get("families") or {}
    members = members_of(tested)
    moves = family_moves(members, fams)
    by_window = {k: {f: by_k[k][0] for f, by_k in moves.items() if k in by_k} for k in (1, 2, 3)}
    host = {k: host_move(by_window[k]) for k in (1, 2, 3)}
    seen = {k: host_seen(by_window[k]) for k in (1, 2, 3)}
    beside = beside_moves(members, moves, seen, fams)
    return FamilyMoves(fams, members, moves, host, seen, _measured(tested, fams), beside, own_contrasts(members, beside, fams))


def family_test(fm: FamilyMoves, q: float) -> list[tuple[str, str, float, int, float]]:
    """Each family's test: (suite, engine, p over its windows (Bonferroni), the window, its move beyond the host's)."""
    tests: list[tuple[str, str, float, int, float]] = []
    for f, by_k in fm.moves.items():
        host_sigma = float(fm.fams[f"{f[0]}/{f[1]}"].get("host_sigma") or 0.0)
        best: tuple[float, int, float] | None = None
        for k, move in by_k.items():
            on = fm.beside[k].get(f)
            # beside the other versions: the family's move on the runs where they ran beside it
            p, rel = family_p((on[0], on[2], move[2]) if on else move, k, fm.against(f, k), host_sigma)
            if best is None or p < best[0]:
                best = (p, k, rel)
        if best is not None:
            tests.append((f[0], f[1], min(1.0, best[0] * len(by_k)), best[1], best[2]))
    return tests


def selected_calls(fm: FamilyMoves, f: Family, k: int, med: float, level: float) -> dict[SeriesId, FamilyCall]:
    """The series of a selected family, each tested at ``level`` (``q * R / F``) on its window of ``k`` nights beyond the
    host's move, the family's way: discovered when its BH-adjusted p is within the level.

    Each series still needs its own test at q * R / F. Calling every timing that moved the family's way its finding
    caught 73-100 % of a planted 1.25x version within 3 nights, and raised 72 and 357 alarms on two honest nights of
    hosts the record never saw: the family sigma is not yet right for that.
    """
    cs = [(t, w) for t in fm.members[f] if (w := t.test.of(k)) is not None]
    ps: list[float] = []
    windows: list[tuple[float, int, int]] = []  # per series: (its log change, nights, reference runs) if discovered
    on_common = fm.beside[k].get(f)
    for t, w in cs:
        c = t.series
        d, se, nref, way = w.change, w.se, w.ref_runs, c.way
        if on_common is not None:
            # judged as its family was: against its own runs beside the other versions, beyond their median's move
            mine = series_on_common(c, way, k, on_common[3]) if way else None
            if mine is None:
                ps.append(1.0)
                windows.append((d, k, nref))
                continue
            d, nref = way * mine[1], mine[2]
            se = c.sigma * math.sqrt(1.0 / k + 1.0 / nref)
        windows.append((d, k, nref))
        rel = d - way * fm.against(f, k)[0]  # the series' change beyond the host's, in its own direction
        ps.append(2 * norm_sf(abs(rel) / se) if way == 0 or way * rel * med > 0 else 1.0)
    return {
        t.series.key: replace(
            NOT_CALLED, selected=True, sign=med, p_family=a / level if level > 0 else 1.0, window=win if a <= level else None
        )
        for (t, _), a, win in zip(cs, benjamini_hochberg(ps), windows, strict=True)
    }


def went_along(
    series: Iterable[CalibratedSeries],
    host: float,
    k: int,
    common: Collection[str],
    move: float,
    calls: Mapping[SeriesId, FamilyCall],
    attribute_p: float,
    **why: Any,
) -> dict[SeriesId, FamilyCall]:
    """The timings of a unit that moved (a version, a workload) that are not yet discovered and whose change over ``k``
    nights on the ``common`` runs went the unit's ``move`` way beyond ``host`` at one-sided p <= ``attribute_p``: each
    called, with ``why`` (the unit's own field of :class:`FamilyCall`)."""
    out: dict[SeriesId, FamilyCall] = {}
    for c in series:
        prev = calls.get(c.key, NOT_CALLED)
        if not c.timed or prev.discovered or (mine := series_on_common(c, c.way, k, common)) is None:
            continue
        _, d, nref = mine
        p_one = went_along_p(d, host, c.sigma, k, nref, move)
        if p_one <= attribute_p:
            out[c.key] = replace(prev, selected=True, sign=move, p_family=p_one / attribute_p, window=(c.way * d, k, nref), **why)
    return out
