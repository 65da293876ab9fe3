"""Which builds a compared build inherits its noise from: what drift reads of the published comparisons.

A new build has no history and no entry of its own in the calibration record (:mod:`jsonbench.history.noise`), so
drift would judge its first nights against Otava's coarse default. Once a comparison has shown a metric of the new
build equivalent to the build it was compared with (or different by less than the margin, a *small* change; or,
for a deterministic fact, the same), that build's noise serves the new one for that metric: it is the same noise.

What a comparison publishes for this is in its ``comparisons`` rows (:mod:`jsonbench.compare.publish`): per metric
the arms' engine ids and builds, their settings, the verdict, the scale and the time; :func:`compared_builds` reads
them as :class:`ComparedBuild` records and :func:`inherited_builds` answers, per metric of one engine id and build,
the builds whose noise serves it, nearest first (a chain: C compared with B, B with A). Only comparisons whose two
arms ran one set of settings on two builds count: another setting is another design, whose noise drift keeps apart.

Pure and light (no pandas, no SciPy): it sits below :mod:`jsonbench.history` in the import order, so that drift can
call it. Drift does where it looks up a series' calibration entry
(:func:`jsonbench.history.drift.series.calibration_entry`, given ``drift_frame(..., compared=...)``): when no entry
serves tonight's build, the first inherited build whose entry (under its own engine id's series key) serves it. The
nightly checks read the label's published comparisons for it (:func:`jsonbench.checks.validation_rows.compared_of`).
Not yet: the inherited build's history standing in for a build without one when the link carries the level
(``level``: the verdict was equivalent or same; a small change keeps its noise only).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

#: Verdicts under which the compared build's noise serves the other build (timed and sampled metrics, and facts).
NOISE_ALIKE = frozenset({"equivalent", "small", "same"})
#: Verdicts under which its level does too (no change beyond the interval).
LEVEL_ALIKE = frozenset({"equivalent", "same"})
#: How many links a chain follows at most (C from B from A ...).
MAX_CHAIN = 8

MetricKey = tuple[str, str, str, str]  # suite, workload, variant, metric


@dataclass(frozen=True)
class ComparedBuild:
    """One metric of one comparison, read for inheritance: build B (``engine_id``/``build``) against build A."""

    engine_id: str
    build: str
    compared_engine_id: str
    compared_build: str
    suite: str
    workload: str
    variant: str
    metric: str
    verdict: str
    comparison_id: str
    scale: str
    published_at: str

    @property
    def key(self) -> MetricKey:
        return (self.suite, self.workload, self.variant, self.metric)


@dataclass(frozen=True)
class Inheritance:
    """A build whose noise serves the asked build for one metric; ``level`` when its level does too."""

    engine_id: str
    build: str
    verdict: str
    comparison_id: str
    level: bool


def _settings(text: Any) -> Any:
    try:
        return json.loads(text).get("settings") or {} if text else {}
    except (TypeError, ValueError, AttributeError):
        return None


def compared_builds(rows: Iterable[Mapping[str, Any]], scale: str | None = None) -> list[ComparedBuild]:
    """The ``comparisons`` rows that can lend noise: two builds (one each, known), one set of settings, a verdict."""
    out = []
    for r in rows:
        a, b = str(r.get("build_a") or ""), str(r.get("build_b") or "")
        if not a or not b or a == b or "," in a or "," in b or r.get("same_arm"):
            continue  # one build against itself, or an arm whose starts ran several builds
        settings = _settings(r.get("arm_a"))
        if settings is None or settings != _settings(r.get("arm_b")):
            continue
        if scale is not None and r.get("scale") != scale:
            continue
        out.append(
            ComparedBuild(
                str(r["engine_b"]),
                b,
                str(r["engine_a"]),
                a,
                str(r["suite"]),
                str(r["workload"]),
                str(r["variant"]),
                str(r["metric"]),
                str(r.get("verdict") or ""),
                str(r["comparison_id"]),
                str(r.get("scale") or ""),
                str(r.get("published_at") or ""),
            )
        )
    return out


def inherited_builds(records: Iterable[ComparedBuild], engine_id: str, build: str) -> dict[MetricKey, list[Inheritance]]:
    """Per metric of ``engine_id`` at ``build``: the builds whose noise serves it, nearest first.

    A comparison lends in both directions (B against A: A's noise serves B, and B's serves A). Per metric and pair of
    builds the latest comparison decides (a later one that found a regression withdraws the loan). A chain is followed
    through builds the metric is alike in, at most :data:`MAX_CHAIN` links, never back to a build already on it;
    ``level`` holds along a chain only while every link's does.
    """
    latest: dict[tuple[MetricKey, tuple[str, str], tuple[str, str]], ComparedBuild] = {}
    for c in records:
        ends = tuple(sorted([(c.engine_id, c.build), (c.compared_engine_id, c.compared_build)]))
        k = (c.key, ends[0], ends[1])
        if k not in latest or c.published_at >= latest[k].published_at:
            latest[k] = c
    links: dict[tuple[MetricKey, tuple[str, str]], list[ComparedBuild]] = {}
    for (key, one, other), c in sorted(latest.items(), key=lambda kv: kv[1].published_at, reverse=True):
        if c.verdict not in NOISE_ALIKE:
            continue
        links.setdefault((key, one), []).append(c)
        links.setdefault((key, other), []).append(c)
    out: dict[MetricKey, list[Inheritance]] = {}
    start = (engine_id, build)
    for key in sorted({k for (k, node) in links if node == start}):
        chain: list[Inheritance] = []
        seen = {start}
        frontier = [(start, True)]
        while frontier and len(chain) < MAX_CHAIN:
            node, level = frontier.pop(0)
            for c in links.get((key, node), []):
                pair = [(c.engine_id, c.build), (c.compared_engine_id, c.compared_build)]
                other = pair[1] if pair[0] == node else pair[0]
                if other in seen:
                    continue
                seen.add(other)
                lvl = level and c.verdict in LEVEL_ALIKE
                chain.append(Inheritance(other[0], other[1], c.verdict, c.comparison_id, lvl))
                frontier.append((other, lvl))
        if chain:
            out[key] = chain[:MAX_CHAIN]
    return out
