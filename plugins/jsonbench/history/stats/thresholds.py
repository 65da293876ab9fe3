"""What a series' noise lets a test see: the threshold of significance and the minimum detectable shift (mds).

Test statistics use the normal distribution, not Student's t at the few degrees of freedom the runs give: t at 3 to 10
df would demand 8-70 sigma at ``q / m`` and make every threshold useless; the shrinkage of each series' spread towards a
prior pooled over hundreds of series, a floor, and the confirmation of a failed verdict by a second measurement carry
the uncertainty instead.
"""

from __future__ import annotations

import math

from jsonbench.history.stats.tails import Tail, norm_isf, shift_for, tail_z

#: The significance level of the run's false-discovery control (Benjamini-Hochberg).
FDR_Q = 0.01
#: The probability of catching a shift of the minimum detectable size.
POWER = 0.8
#: How many earlier runs a threshold and mds are quoted against (drift needs one; three is the usual history).
REF_RUNS = 3
#: No change smaller than this alarms, however quiet the series (Nyrkioe ignores < 5 %).
MIN_EFFECT = 0.05
#: The level a series of a selected family (an engine's suite that moved as a whole) is tested at when a whole
#: engine version moves: Benjamini-Bogomolov's q * R / F with R about 3 of F about 12 families, two-sided.
FAMILY_LEVEL = FDR_Q / 4


def lone_z(m: int, q: float = FDR_Q) -> float:
    """The two-sided critical z of one discovery among ``m`` tests under Benjamini-Hochberg at ``q``."""
    return norm_isf(q / (2 * max(m, 1)))


def thresholds(sigma: float, m: int, ref_runs: int = REF_RUNS, nights: int = 1, q: float = FDR_Q, tail: Tail = None) -> tuple[float, float]:
    """(threshold, mds) of a lone series: the change that is significant, and the change caught with probability ``POWER``."""
    se = sigma * math.sqrt(1.0 / nights + 1.0 / max(ref_runs, 1))
    z = tail_z(q / max(m, 1), tail)
    return max(MIN_EFFECT, shift_for(z, se)), max(MIN_EFFECT, shift_for(z + norm_isf(1 - POWER), se))


def family_mds(sigma: float, ref_runs: int = REF_RUNS, nights: int = 1) -> float:
    """The mds of a series when its whole family (suite and engine) moved: tested at ``FAMILY_LEVEL``, normal."""
    se = sigma * math.sqrt(1.0 / nights + 1.0 / max(ref_runs, 1))
    return max(MIN_EFFECT, shift_for(norm_isf(FAMILY_LEVEL / 2) + norm_isf(1 - POWER), se))


def lone_bounds(z: float, se: float, floor: float) -> tuple[float, float]:
    """(threshold, mds) of one calibrated series judged at critical ``z`` with standard error ``se`` (log), never below
    ``floor`` and at most 99 (a 100x change): what its row quotes as ``threshold`` and ``mds``."""
    thr = min(max(floor, shift_for(z, se)), 99.0)
    mds = min(max(floor, shift_for(z + 0.8416, se)), 99.0)
    return thr, mds
