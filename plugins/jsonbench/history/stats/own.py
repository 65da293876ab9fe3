"""A host's own noise, learned from its quiet nights and shrunk towards a prior (log space, plain numbers).

Each night of a series on one host gives its statistic (the nightly level) and, under a design of several engine
starts, one best per start. Two levels follow, as Kalibera and Jones estimate each level of an experiment from the
experiment at hand: the spread between starts (pooled inside each night) and the spread between nights. A night's
figure averages its ``k`` starts, so its variance is at least the starts' over ``k``; the nights' spread holds that and
what moves between nights. The host's estimate is then shrunk towards a prior (the calibration record's level inside
one host, or the global defaults) weighted ``prior_df`` degrees of freedom against the host's own, so that a new
machine starts from the prior and after a few quiet nights is judged by its own noise.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace

#: Weight, in degrees of freedom, of the prior level against a host's own nights: four nights' worth, so a host's first
#: quiet night moves its sigma a fifth of the way, and six quiet nights a little more than half.
HOST_PRIOR_DF = 4


@dataclass(frozen=True)
class OwnNoise:
    """A series' noise on one host: the nightly sd learned (``sigma``, log), the host's own estimate before shrinking
    (``own``, None without one), its degrees of freedom (``df``), how many nights it rests on (``nights``), the prior
    it was shrunk towards (``prior``, an sd) and the floor it never goes below."""

    sigma: float
    own: float | None
    df: int
    nights: int
    prior: float = 0.0
    floor: float = 0.0

    def towards(self, prior: float) -> OwnNoise:
        """The same nights shrunk towards another prior."""
        var = None if self.own is None else self.own**2
        return replace(self, sigma=shrunk(var, self.df, prior, HOST_PRIOR_DF, self.floor), prior=prior)


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


def own_noise(
    nightly: Sequence[float], starts: Sequence[Sequence[float]], prior: float, floor: float, prior_df: int = HOST_PRIOR_DF
) -> OwnNoise:
    """A series' (or a family's) nightly noise on one host: :func:`night_level` shrunk towards ``prior``."""
    var, df = night_level(nightly, starts)
    own = None if var is None else math.sqrt(var)
    return OwnNoise(shrunk(var, df, prior, prior_df, floor), own, df, len(nightly), prior, floor)


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
