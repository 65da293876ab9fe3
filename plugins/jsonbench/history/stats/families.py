"""The arithmetic of a family's test (one engine's suite moving as a whole): its median move against the host's.

A family is keyed ``(suite, engine)``; a move is a change of log statistics, slower positive. These functions take
plain numbers and sequences; which series make a family, and what their moves are, is drift's business.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Collection, Mapping, Sequence

from jsonbench.history.stats.tails import norm_sf

#: How many families (engine x suite) a run needs before their common move is read as the host's: the median of three
#: is one that did not move when one engine regressed; of two it would be half the regression.
HOST_MIN_FAMILIES = 3
#: How many timings of a family it takes to read the family's median move.
FAMILY_MIN_SERIES = 5


def host_move(moves: Mapping[tuple[str, str], float]) -> dict[str, float]:
    """The host's own move, per suite, from each family's (suite, engine) median change of one night or window.

    A host that slows moves every engine together, and moves each suite by its own sensitivity (on the
    honest 2-core laptop reruns the catalogue's pgbench workloads moved +8 to +11 % on all three
    PostgreSQL versions while json_vs_jsonb moved +2 %). So the host's move for a suite is the median of
    that suite's engines when it has ``HOST_MIN_FAMILIES`` of them; otherwise the median of every family
    of the run when there are that many; otherwise 0 (one engine alone cannot be told from the host).
    """
    every = list(moves.values())
    overall = statistics.median(every) if len(every) >= HOST_MIN_FAMILIES else 0.0
    out: dict[str, float] = {}
    for suite in {sx for sx, _ in moves}:
        mine = [v for (sx, _), v in moves.items() if sx == suite]
        out[suite] = statistics.median(mine) if len(mine) >= HOST_MIN_FAMILIES else overall
    return out


def host_seen(moves: Mapping[tuple[str, str], float]) -> set[str]:
    """The suites whose :func:`host_move` was read from engines measured beside them (not the 0 of too few families):
    where a family can be judged against the others (its contrast)."""
    every = len(moves) >= HOST_MIN_FAMILIES
    return {s for s in {sx for sx, _ in moves} if every or sum(1 for sx, _ in moves if sx == s) >= HOST_MIN_FAMILIES}


def family_p(move: tuple[float, float, float], k: int, against: tuple[float, float], host_sigma: float) -> tuple[float, float]:
    """(two-sided p, the change beyond the host's) of a family's median change ``move`` = (change, reference runs, host mix)
    in window ``k``, judged beyond ``against`` = (the host's move, the family's sigma of that difference)."""
    med, nref, mix = move
    base, sigma = against
    rel = med - base
    return 2 * norm_sf(abs(rel) / math.sqrt(sigma**2 * (1.0 / k + 1.0 / nref) + host_sigma**2 * mix)), rel


def on_common(
    series: Sequence[float], runs: Sequence[str], base: int, way: int, k: int, common: Collection[str]
) -> tuple[list[float], float, int] | None:
    """A series' last ``k`` nights (``way`` * log, slower positive, oldest first) against the mean of its earlier runs of
    its current level (from ``base``) that are in ``common``: (each night's move, the window's mean move, reference runs).
    None when a night of the window is not in ``common``, or no earlier run is."""
    n = len(series)
    if len(runs) != n or n <= k or any(r not in common for r in runs[n - k :]):
        return None
    ref = [v for v, r in zip(series[base : n - k], runs[base : n - k], strict=True) if r in common]
    if not ref:
        return None
    mean = statistics.fmean(ref)
    nights = [way * (v - mean) for v in series[n - k :]]
    return nights, statistics.fmean(nights), len(ref)


def nightly_medians(got: Sequence[tuple[Sequence[float], float, int]], k: int) -> tuple[list[float], float, float] | None:
    """A family's :func:`on_common` moves of its series over ``k`` nights, as medians: of each night, of the window, and
    of the reference runs. None when fewer than :data:`FAMILY_MIN_SERIES` series have them."""
    if len(got) < FAMILY_MIN_SERIES:
        return None
    return (
        [statistics.median(x[0][j] for x in got) for j in range(k)],
        statistics.median(x[1] for x in got),
        statistics.median(x[2] for x in got),
    )


def contrast_p(rel: float, contrast: float, k: int, nref: float) -> float:
    """The two-sided normal p of a family's window move ``rel`` beyond the versions beside it, over ``k`` nights against
    ``nref`` reference runs, at the family's ``contrast`` sigma."""
    return 2 * norm_sf(abs(rel) / (contrast * math.sqrt(1.0 / k + 1.0 / nref)))


def nights_apart(mine: Sequence[float], beside: Sequence[Sequence[float]], contrast: float, nref: float) -> list[float]:
    """Each night's z of a family's move beyond the median of the families beside it that night (``beside``: their
    nightly moves)."""
    return [(mine[j] - statistics.median(v[j] for v in beside)) / (contrast * math.sqrt(1.0 + 1.0 / nref)) for j in range(len(mine))]


def common_p(med: float, sigma: float, nref: float) -> float:
    """The two-sided normal p of the run's median family move ``med`` in one night against ``nref`` reference runs, at
    the record's ``sigma`` of a run's median family."""
    return 2 * norm_sf(abs(med) / (sigma * math.sqrt(1.0 + 1.0 / nref)))


def went_along_p(move: float, host: float, sigma: float, k: int, nref: float, family_sign: float) -> float:
    """The one-sided normal p that a series' window move ``move`` beyond the host's ``host`` went its family's way
    (``family_sign``), over ``k`` nights against ``nref`` reference runs at the series' ``sigma``."""
    return norm_sf((move - host) / (sigma * math.sqrt(1.0 / k + 1.0 / nref)) * (1 if family_sign > 0 else -1))
