"""A host's own noise, learned from its quiet nights and shrunk towards a prior (log space, plain numbers).

Each night of a series on one host gives its statistic (the nightly level) and, under a design of several engine
starts, one best per start. Two levels follow, as Kalibera and Jones estimate each level of an experiment from the
experiment at hand: the spread between starts (pooled inside each night) and the spread between nights. A night's
figure averages its ``k`` starts, so its variance is at least the starts' over ``k``; the nights' spread holds that and
what moves between nights. The host's estimate is then shrunk towards a prior (the calibration record's level inside
one host, or the global defaults) weighted ``prior_df`` degrees of freedom against the host's own, so that a new
machine starts from the prior and after a few quiet nights is judged by its own noise.

Only quiet nights teach it (:func:`quiet_nights`): a night whose level sits far from the others' (a backup job, a noisy
neighbour, a change its history has not segmented yet) stays in the series' history, but not in what the host learns of
its noise, which one such night would otherwise widen for as long as it stays in the window. Nor is tonight judged
against it (:meth:`OwnNoise.far`): a noise learned without the night, against a level that holds it, reads the
night's excursion as tonight's move.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

#: Weight, in degrees of freedom, of the prior level against a host's own nights: four nights' worth, so a host's first
#: quiet night moves its sigma a fifth of the way, and six quiet nights a little more than half.
HOST_PRIOR_DF = 4

#: How far from the median of a host's nights a night may sit, in the nights' spread (:func:`quiet_nights`), and still
#: teach the host its noise: far enough that an honest night is left out of a few series in a thousand at most.
OUTLYING = 5.0
#: A normal distribution's sd over its median absolute deviation.
MAD_SD = 1.4826


@dataclass(frozen=True)
class OwnNoise:
    """A series' noise on one host: the nightly sd learned (``sigma``, log), the host's own estimate before shrinking
    (``own``, None without one), its degrees of freedom (``df``), how many quiet nights it rests on (``nights``), the
    prior it was shrunk towards (``prior``, an sd) and the floor it never goes below."""

    sigma: float
    own: float | None
    df: int
    nights: int
    prior: float = 0.0
    floor: float = 0.0
    #: how many earlier nights were left out as far from the others (:func:`quiet_nights`)
    left_out: int = 0
    #: every earlier night's level and its starts' bests, as given (the left out ones included)
    levels: tuple[float, ...] = ()
    starts: tuple[tuple[float, ...], ...] = ()
    #: which of ``levels`` taught it (:func:`quiet_nights`)
    quiet: tuple[bool, ...] = ()

    def towards(self, prior: float) -> OwnNoise:
        """The same nights judged against another prior and shrunk towards it (which nights are quiet depends on it)."""
        return own_noise(self.levels, self.starts, prior, self.floor)

    def far(self, first: int = 0) -> list[int]:
        """Which of the nights from ``first`` on (indices into ``levels``) are far from the others of them, by the rule
        and the spread that chose the quiet nights (:func:`quiet_nights`): what tonight is not judged against. From the
        first night, the very nights left out of the noise; from where the series' current level starts (a change
        its history found), the nights of that level alone, so that a new level, still fewer nights than the old one
        and left out of the noise as far from its median, remains the reference."""
        if first <= 0:
            return [i for i, q in enumerate(self.quiet) if not q]
        quiet = quiet_nights(self.levels[first:], self.prior, self.floor)
        return [first + i for i, q in enumerate(quiet) if not q]


def pooled_variance(groups: Sequence[Sequence[float]]) -> tuple[float | None, int]:
    """(variance, df) pooled inside each group (the spread around each group's mean); None when no group has two."""
    ss = sum(sum((x - statistics.fmean(g)) ** 2 for x in g) for g in groups if len(g) >= 2)
    df = sum(len(g) - 1 for g in groups if len(g) >= 2)
    return (ss / df if df else None), df


def shrunk(own_var: float | None, own_df: int, prior: float, prior_df: int = HOST_PRIOR_DF, floor: float = 0.0) -> float:
    """The sd of ``own_var`` (``own_df`` df) and ``prior`` (an sd, ``prior_df`` df) pooled, never below ``floor``."""
    if own_var is None or own_df <= 0:
        return max(floor, prior)
    return max(floor, math.sqrt((own_df * own_var + prior_df * prior**2) / (own_df + prior_df)))


def night_level(nightly: Sequence[float], starts: Sequence[Sequence[float]] = ()) -> tuple[float | None, int]:
    """(variance, df) of one night's figure on a host: the nights' own variance (df nights - 1), never below what its
    engine starts alone put into it (the starts' pooled variance over the starts per night); with one night, the starts'
    part alone (a lower bound: what moves between nights is not in it yet), at the starts' df."""
    per_night = [len(g) for g in starts if len(g) >= 2]
    start_var, start_df = pooled_variance(starts)
    start_part = start_var / statistics.fmean(per_night) if start_var is not None else None
    if len(nightly) >= 2:
        var = statistics.variance(nightly)
        return (max(var, start_part) if start_part is not None else var), len(nightly) - 1
    return start_part, start_df


def quiet_nights(nightly: Sequence[float], prior: float, floor: float = 0.0, prior_df: int = HOST_PRIOR_DF) -> list[bool]:
    """Which of a host's nights teach it its noise: those within :data:`OUTLYING` spreads of the nights' median, the
    spread being their median absolute deviation as a normal sd, shrunk towards ``prior`` as the host's sigma is (never
    below ``floor``). Two nights cannot tell which one is off: both teach.

    The plain variance follows one disturbed night: five nights moving 3 % and one twice as slow learned a sigma of 21 %,
    deaf for as long as that night stayed in the window. The median and its absolute deviation follow neither one such
    night nor two. Honest normal nights lose one in 2,000 series (4 nights) to one in 300 (30) when the prior fits the
    host, up to one in 30 when the host is twice as noisy, until its family scales the prior (:meth:`OwnNoise.towards`). A step
    shared by most nights moves the median with it, so the nights before it are left out; a step of half the nights
    leaves every night in, its spread then the step's."""
    n = len(nightly)
    if n < 3:
        return [True] * n
    mid = statistics.median(nightly)
    mad = statistics.median(abs(x - mid) for x in nightly)
    bound = OUTLYING * shrunk((MAD_SD * mad) ** 2, n - 1, prior, prior_df, floor)
    return [abs(x - mid) <= bound for x in nightly]


def own_noise(
    nightly: Sequence[float], starts: Sequence[Sequence[float]], prior: float, floor: float, prior_df: int = HOST_PRIOR_DF
) -> OwnNoise:
    """A series' (or a family's) nightly noise on one host: :func:`night_level` of its quiet nights
    (:func:`quiet_nights`) shrunk towards ``prior``; ``starts`` holds each night's starts' bests, in the nights' order
    (empty for a night of one start), or nothing. A night left out takes its starts with it."""
    if starts and len(starts) != len(nightly):
        raise ValueError(f"{len(starts)} nights of starts for {len(nightly)} nights")
    quiet = quiet_nights(nightly, prior, floor, prior_df)
    kept = [x for x, q in zip(nightly, quiet, strict=True) if q]
    kept_starts = [g for g, q in zip(starts, quiet, strict=True) if q] if starts else []
    var, df = night_level(kept, kept_starts)
    own = None if var is None else math.sqrt(var)
    return OwnNoise(
        shrunk(var, df, prior, prior_df, floor),
        own,
        df,
        len(kept),
        prior,
        floor,
        len(nightly) - len(kept),
        tuple(nightly),
        tuple(tuple(g) for g in starts),
        tuple(quiet),
    )


#: Weight, in degrees of freedom, of the record's own hosts (a ratio of one) against a host's nights when the host's
#: quietness is read over a whole family (:func:`variance_ratio`): one night's worth, since the family's series pool
#: hundreds of degrees of freedom each night, but the nights alone tell what moves between them.
RATIO_PRIOR_DF = 1


def variance_ratio(pairs: Sequence[tuple[float, int, float]], nights_df: int, least: int = 5) -> float:
    """How a host's own nightly variances compare with their priors over the series of one family (``pairs``: own
    variance, its df, the prior's sd), pooled, then shrunk towards one (the record's hosts) by the host's nights
    (``nights_df``, nights less one) against ``RATIO_PRIOR_DF``; 1.0 with fewer than ``least`` series or no second night.

    One series' few nights say little of its own spread; a family's hundred series say, together, how quiet this host
    is against the record's hosts, a level Kalibera and Jones would estimate from the experiment at hand. Its series
    move together on a night, though, so the nights, not the series, are its replicates: hence the shrinking."""
    usable = [(v, df, p) for v, df, p in pairs if df > 0 and p > 0]
    if len(usable) < least or nights_df <= 0:
        return 1.0
    ratio = sum(d * v for v, d, _ in usable) / sum(d * p**2 for _, d, p in usable)
    return (nights_df * ratio + RATIO_PRIOR_DF) / (nights_df + RATIO_PRIOR_DF)
