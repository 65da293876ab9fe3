"""The calibrated window test's arithmetic: the last 1 .. k runs of a series against the reference runs before them.

A series is a sequence of log statistics, oldest first, tonight last. Each window is a z-test of the mean of its last
``k`` values against the mean of the reference (from ``base``, where the series' current level starts, up to the
window, but the runs ``left_out`` of it: :func:`reference`) with the calibrated ``sigma``, plus the between-hosts level
``host_sigma`` as far as the window and its reference were measured on different hosts (:func:`host_mix`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from jsonbench.history.stats.tails import Tail, tail_p


@dataclass(frozen=True)
class Window:
    """One window of a series: how many nights, their mean's change against the reference (log), its standard error,
    and how many reference runs."""

    nights: int
    change: float
    se: float
    ref_runs: int


def host_mix(window: Sequence[str], reference: Sequence[str]) -> float:
    """How much of the between-hosts variance a comparison of ``window``'s runs with ``reference``'s holds.

    The difference of two means of runs carries sum over hosts of (a_h - b_h)^2 times the between-hosts variance,
    where a_h and b_h are the shares of host h's runs in each: 0 when both are the same host, 2 when each is one
    different host. A host judged against its own history pays only the between-starts level; a history measured on
    other hosts (a label shared by several machines, a re-provisioned VM) pays the between-hosts level too.
    """
    if not window or not reference:
        return 0.0
    a = {h: window.count(h) / len(window) for h in set(window)}
    b = {h: reference.count(h) / len(reference) for h in set(reference)}
    return sum((a.get(h, 0.0) - b.get(h, 0.0)) ** 2 for h in set(a) | set(b))


def window_se(sigma: float, nights: int, ref_runs: int, host_sigma: float = 0.0, mix: float = 0.0) -> float:
    """The standard error of a window's change: ``nights`` against ``ref_runs`` runs, with ``mix`` of the hosts' level."""
    return math.sqrt(sigma**2 * (1.0 / nights + 1.0 / ref_runs) + host_sigma**2 * mix)


def reference(base: int, end: int, left_out: Collection[int] = ()) -> list[int]:
    """The reference of a window starting at ``end``: the indices from ``base`` up to it, but those ``left_out``."""
    return [i for i in range(base, end) if i not in left_out]


def windows(
    series: Sequence[float],
    hosts: Sequence[str],
    base: int,
    recent: int,
    min_ref: int,
    sigma: float,
    host_sigma: float,
    left_out: Collection[int] = (),
) -> tuple[list[Window], dict[int, float]]:
    """Every window of 1 .. ``recent`` nights ending tonight whose reference (:func:`reference`: from ``base``, but the
    runs ``left_out``) has ``min_ref`` runs, and each window's host mix (:func:`host_mix`); ``hosts`` names the host of
    each value of ``series``. A run left out of the reference still counts in a window that holds it."""
    n = len(series)
    out: list[Window] = []
    mix: dict[int, float] = {}
    for k in range(1, max(recent, 1) + 1):
        ref = reference(base, n - k, left_out)
        if len(ref) < min_ref:
            break
        d = statistics.fmean(series[n - k :]) - statistics.fmean(series[i] for i in ref)
        mix[k] = host_mix(hosts[n - k :], [hosts[i] for i in ref])
        out.append(Window(k, d, window_se(sigma, k, len(ref), host_sigma, mix[k]), len(ref)))
    return out, mix


def lone_window(tried: Sequence[Window], tail: Tail) -> tuple[float, Window] | None:
    """The smallest p-value of the windows under the honest runs' ``tail``, times the number of windows tried
    (Bonferroni: the windows overlap, so this is conservative), and its window; None when no window was tried."""
    if not tried:
        return None
    p, k = min((tail_p(w.change / w.se, tail), w.nights) for w in tried)
    return min(1.0, p * len(tried)), next(w for w in tried if w.nights == k)


def window_of(tried: Sequence[Window], nights: int) -> Window | None:
    """The window of ``nights`` nights, if it was tried."""
    return next((w for w in tried if w.nights == nights), None)
