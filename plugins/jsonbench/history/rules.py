"""How one metric is judged: its kind as its suite declares it, and the rule drift applies to it.

Apart from :mod:`jsonbench.history.drift` (which judges with these rules) because the noise model
(:mod:`jsonbench.history.noise`) needs to know which metrics are exact too, and drift imports the noise
model: here, both read the rules without importing each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jsonbench.dataset.measurement import MetricKind
from jsonbench.errors import BenchmarkError
from jsonbench.suites import get_suite


@dataclass(frozen=True)
class Rule:
    """How one metric is judged: deterministic with a tolerance, or statistically with a minimum magnitude.

    ``declared`` is the metric's kind as its suite declares it (None: nobody declared one, judged
    statistically, which never raises an exact-comparison alarm on a guess).
    """

    kind: str  # deterministic | statistical
    tolerance: float = 0.0
    floor: float = 0.0
    min_magnitude: float = 0.5
    declared: MetricKind | None = None


def declared_kinds(suite: str) -> Callable[[str, str], MetricKind | None]:
    """``(workload, metric) -> kind`` as the suite declares it; None for what it does not declare (or an unknown suite)."""
    try:
        declared = get_suite(suite)
    except BenchmarkError:
        return lambda workload, metric: None

    def kind(workload: str, metric: str) -> MetricKind | None:
        try:
            return declared.metric_kind(workload, metric)
        except BenchmarkError:
            return None

    return kind


def declared_kind(suite: str, workload: str, metric: str) -> MetricKind | None:
    """The suite's declaration of ``metric``'s kind, or None when the suite is unknown or does not declare it."""
    return declared_kinds(suite)(workload, metric)


def rule_for(
    policy: dict[str, Any], suite: str, workload: str, variant: str, metric: str, unit: str, kind: MetricKind | None = None
) -> Rule:
    """The rule of a metric of ``kind`` (default: the suite's declaration, :func:`declared_kind`).

    ``deterministic`` is judged within the policy's ``tolerance``, or the suite's own for this metric
    (``tolerances`` in ``<suite>.drift.json``: ``{"<metric>" or "<workload>/<metric>": number or
    {"tolerance", "floor"}}``); ``sampled`` and ``timed`` statistically, with the unit's minimum magnitude.
    """
    if kind is None:
        kind = declared_kind(suite, workload, metric)
    if kind == "deterministic":
        tolerances = policy.get("tolerances") or {}
        own = tolerances.get(f"{workload}/{metric}", tolerances.get(metric))
        spec = own if isinstance(own, dict) else ({} if own is None else {"tolerance": own})
        return Rule(
            "deterministic",
            tolerance=float(spec.get("tolerance", policy.get("tolerance", 0.02))),
            floor=float(spec.get("floor", 0.0)),
            declared=kind,
        )
    mags = policy.get("min_magnitude") or {}
    units = mags.get("units") or {}
    return Rule("statistical", min_magnitude=float(units.get(unit, mags.get("default", 0.5))), declared=kind)
