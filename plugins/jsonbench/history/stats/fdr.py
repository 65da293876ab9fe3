"""False-discovery control over many tests at once: Benjamini-Hochberg's step-up adjusted p-values."""

from __future__ import annotations

from collections.abc import Sequence


def benjamini_hochberg(pvalues: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (step-up; a discovery at q is every adjusted p <= q)."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adj = [1.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, pvalues[i] * m / rank)
        adj[i] = running
    return adj
