"""The distributions a test statistic is read under: the standard normal, and the honest runs' heavier tail.

A tail is a plain mapping of three numbers (``z0``, ``beta``, ``share``, as the calibration record stores it): the
share of |z| beyond ``z0`` that decays exponentially with mean excess ``beta`` (peaks over a threshold). Without one,
the normal distribution is used.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from typing import Any

#: A tail as the calibration record holds it (``z0``, ``beta``, ``share``), or None for the normal distribution.
Tail = Mapping[str, Any] | None


def norm_isf(p: float) -> float:
    """The upper ``p`` quantile of the standard normal distribution."""
    return -statistics.NormalDist().inv_cdf(p)


def norm_sf(z: float) -> float:
    """The upper tail probability of the standard normal distribution at ``z``."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def tail_z(p: float, tail: Tail) -> float:
    """The |z| whose two-sided p-value is ``p`` under ``tail``, or the normal one without."""
    if not tail:
        return norm_isf(p / 2)
    return float(tail["z0"]) + float(tail["beta"]) * max(0.0, math.log(float(tail["share"]) / p))


def tail_p(z: float, tail: Tail) -> float:
    """The two-sided p-value of ``z`` under the honest runs' tail (peaks over threshold, exponential excess); normal without."""
    if not tail:
        return 2 * norm_sf(abs(z))
    return min(1.0, float(tail["share"]) * math.exp(-(abs(z) - float(tail["z0"])) / float(tail["beta"])))


def shift_for(z: float, se: float) -> float:
    """The relative change whose log is ``z`` standard errors ``se``: symmetric in log space, quoted upwards (at most 100x)."""
    return math.exp(min(z * se, math.log(100.0))) - 1.0
