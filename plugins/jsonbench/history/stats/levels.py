"""Where noise enters a series: between engine starts inside one host, and between hosts (in log space)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence


def log_of(x: float | None) -> float | None:
    """Noise is modelled in log space (a 10 % slowdown is the same shift on a 1 ms and a 1 s series); non-positive values have none."""
    return math.log(x) if x is not None and x > 0 else None


def levels(logs: Sequence[float], hosts: Sequence[str]) -> tuple[float | None, int, float | None, int]:
    """(between starts sd, its df, between hosts sd of the host means, its df) of one series' log statistics.

    Between starts is pooled inside each host (the sd of a host's runs around that host's mean), so a second host
    never inflates it; between hosts is the sd of the hosts' means, with what the starts alone put into those means
    taken out (method of moments, at least 0). A host judged against its own history needs only the first; a history
    of other hosts needs both.
    """
    by: dict[str, list[float]] = {}
    for x, h in zip(logs, hosts, strict=True):
        by.setdefault(h, []).append(x)
    ss = sum(sum((x - statistics.fmean(g)) ** 2 for x in g) for g in by.values() if len(g) >= 2)
    df = sum(len(g) - 1 for g in by.values())
    start = math.sqrt(ss / df) if df else None
    means = [statistics.fmean(g) for g in by.values()]
    if len(means) < 2:
        return start, df, None, 0
    between = statistics.variance(means) - (start or 0.0) ** 2 * statistics.fmean(1.0 / len(g) for g in by.values())
    return start, df, math.sqrt(max(between, 0.0)), len(means) - 1
