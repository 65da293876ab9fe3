"""What a comparison's starts say, per metric: the paired statistics of :mod:`jsonbench.history.stats.paired`.

Pure: it takes what each start measured (:class:`StartResult`) and returns one :class:`Judged` per metric. A
pair is usable when both of its starts completed and saw the same data (the same fingerprint of the rows they
loaded); a failed start, or arms that saw different data, drop the whole pair, and the reason is kept. Per metric
each arm's value in a pair is its repetitions' median (the suite's own summary where it declares another: a
best-of-N timing keeps its best), and

* timed and sampled metrics are judged by :func:`~jsonbench.history.stats.paired.compare_metrics` on the per-pair
  log ratios B/A, with the false discovery rate held across the metrics of one look; with staged pairs, look k
  uses the pairs of stages 1..k at stage k's level (:func:`~jsonbench.history.stats.paired.stage_levels`), and a
  metric keeps the verdict of the first look that decided it;
* deterministic metrics (sizes, counts, bytes written by a fixed number of statements, plans) are compared
  exactly (:func:`~jsonbench.history.stats.paired.exact_difference`): same, different, or varying within an arm.

The worse way of a metric follows its unit (:func:`direction`): a time or a size is worse larger, a rate worse
smaller; a metric whose unit says neither (a ratio of two timings, a count) gets CHANGED where another would get
REGRESSION or IMPROVEMENT, since no side of it is worse.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from jsonbench.dataset.measurement import Measurement
from jsonbench.history.stats.paired import (
    ExactDifference,
    MetricComparison,
    MetricPairs,
    Stage,
    Verdict,
    arm_value,
    compare_metrics,
    exact_difference,
)

#: The verdict of a metric whose unit has no worse side, where a change was found.
CHANGED = "changed"
#: The verdicts of deterministic facts.
SAME, DIFFERENT, VARIES = "same", "different", "varies"
LOWER_IS_BETTER = {"ms", "s", "us", "ns", "ns/row", "bytes", "kB", "MB"}
HIGHER_IS_BETTER = {"tps", "rows/s", "ops/s"}


def direction(unit: str) -> int:
    """+1 when a larger value is better (a rate), -1 when smaller is (a time, a size), 0 when neither."""
    return 1 if unit in HIGHER_IS_BETTER else (-1 if unit in LOWER_IS_BETTER else 0)


@dataclass(frozen=True)
class StartResult:
    """What one start of one arm measured (one suite on one fresh engine), as staged."""

    pair: int
    arm: str  # "A" or "B"
    suite: str
    measurements: tuple[Measurement, ...]
    fingerprint: str
    started_at: str = ""
    build: str = ""


@dataclass(frozen=True)
class Judged:
    """One metric's outcome. ``comparison`` for timed and sampled metrics, ``fact`` for deterministic ones."""

    name: str  # suite/workload/variant/metric
    suite: str
    workload: str
    variant: str
    metric: str
    unit: str
    kind: str
    verdict: str
    pairs_dropped: tuple[int, ...]  # pair indices left out of this metric, whatever the reason
    comparison: MetricComparison | None = None
    fact: ExactDifference | None = None
    decided_at: int | None = None  # pairs in total at the look that gave the verdict


@dataclass(frozen=True)
class Pairs:
    """The usable pairs, each pair's first arm (as run), and why the others were dropped."""

    usable: tuple[int, ...]
    first: dict[int, str]
    dropped: dict[int, str] = field(default_factory=dict)


def usable_pairs(starts: Sequence[StartResult], planned: Mapping[int, Sequence[str]], suites: Sequence[str]) -> Pairs:
    """The pairs whose every start (each arm, each suite) completed, both arms on the same data; ``planned`` is pair -> its
    start order (("A", "B") or ("B", "A")). The first arm is the one whose first start began first (as run);
    without start times, the planned one."""
    by = {(s.pair, s.arm, s.suite): s for s in starts}
    usable, dropped, first = [], {}, {}
    for pair in sorted(planned):
        missing = [f"{arm}/{suite}" for arm in ("A", "B") for suite in suites if (pair, arm, suite) not in by]
        if missing:
            dropped[pair] = f"start {', '.join(missing)} did not complete"
            continue
        other = [
            f"{suite} (A {by[(pair, 'A', suite)].fingerprint[:12]}, B {by[(pair, 'B', suite)].fingerprint[:12]})"
            for suite in suites
            if by[(pair, "A", suite)].fingerprint != by[(pair, "B", suite)].fingerprint
        ]
        if other:
            dropped[pair] = f"its arms saw different data (fingerprint differs): {', '.join(other)}"
            continue
        usable.append(pair)
        times = {arm: min((t for s in suites if (t := by[(pair, arm, s)].started_at)), default="") for arm in ("A", "B")}
        first[pair] = (min(times, key=lambda k: times[k]) if all(times.values()) else planned[pair][0]) or "A"
    return Pairs(tuple(usable), first, dropped)


def _value(m: Measurement) -> float | None:
    """An arm's value in one start: its repetitions' median, or the suite's summary where it is not a median."""
    if m.status != "ok" or not m.samples:
        return None
    return arm_value(list(m.samples)) if m.aggregate in ("median", "single") else m.value


@dataclass
class _Series:
    suite: str
    m: Measurement
    a: dict[int, float | None] = field(default_factory=dict)
    b: dict[int, float | None] = field(default_factory=dict)
    not_applicable: bool = True  # every start of both arms recorded it not_applicable


def _series(starts: Sequence[StartResult], pairs: Sequence[int]) -> dict[str, _Series]:
    keep = set(pairs)
    out: dict[str, _Series] = {}
    for s in sorted(starts, key=lambda x: (x.pair, x.arm, x.suite)):
        if s.pair not in keep:
            continue
        for m in s.measurements:
            name = f"{s.suite}/{m.workload}/{m.variant}/{m.metric}"
            row = out.setdefault(name, _Series(s.suite, m))
            (row.a if s.arm == "A" else row.b)[s.pair] = _value(m)
            row.not_applicable = row.not_applicable and m.status == "not_applicable"
    return out


def judge(
    starts: Sequence[StartResult],
    planned: Mapping[int, Sequence[str]],
    suites: Sequence[str],
    stages: Sequence[Stage],
    margins: Mapping[str, float],
    default_margin: float,
) -> tuple[list[Judged], Pairs]:
    """Every metric's verdict over the looks that have run (a look runs once its stage's pairs have all run).

    ``planned`` holds every pair planned so far (pair index -> start order); the looks are the stages whose
    totals it reaches. ``margins`` are per-metric margins (an A/A comparison's), ``default_margin`` the rest's.
    """
    pairs = usable_pairs(starts, planned, suites)
    run = len(planned)
    looks = [s for s in stages if s.pairs <= run] or [Stage(run, 1 - stages[-1].level, stages[-1].level)]
    series = _series(starts, pairs.usable)
    kinds = {name: (s.m.kind or "timed") for name, s in series.items()}
    # A metric no start of either arm could produce (a GIN build of a json column) has nothing to compare, and no number
    # of pairs would decide it: left out, as a fact not applicable on both builds is.
    inapplicable = {n for n, x in series.items() if x.not_applicable and not any(v is not None for v in (*x.a.values(), *x.b.values()))}
    judged: dict[str, Judged] = {}
    for look in looks:
        within = [p for p in pairs.usable if p < look.pairs]
        undecided = [
            n
            for n in series
            if kinds[n] != "deterministic" and n not in inapplicable and (n not in judged or judged[n].verdict == Verdict.INCONCLUSIVE)
        ]
        metrics = [
            MetricPairs(
                n,
                [series[n].a.get(p) for p in within],
                [series[n].b.get(p) for p in within],
                higher_is_better=direction(series[n].m.unit) > 0,
                margin=float(margins.get(n, default_margin)),
            )
            for n in undecided
        ]
        firsts = [pairs.first[p] for p in within]
        for mp, c in zip(metrics, compare_metrics(metrics, first=firsts, level=look.level), strict=True):
            s = series[mp.name]
            verdict = str(c.verdict)
            if c.verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT) and direction(s.m.unit) == 0:
                verdict = CHANGED
            dropped = tuple(sorted({within[i] for i in c.dropped} | {p for p in pairs.dropped if p < look.pairs}))
            judged[mp.name] = Judged(
                mp.name, s.suite, s.m.workload, s.m.variant, s.m.metric, s.m.unit, kinds[mp.name], verdict, dropped, c, None, look.pairs
            )
    for n, s in series.items():
        if kinds[n] != "deterministic":
            continue
        a = [v for p in pairs.usable if (v := s.a.get(p)) is not None]
        b = [v for p in pairs.usable if (v := s.b.get(p)) is not None]
        # A pair where neither arm measured it (a later stage ran only undecided workloads) left nothing out.
        missing = tuple(sorted({p for p in pairs.usable if (s.a.get(p) is None) != (s.b.get(p) is None)} | set(pairs.dropped)))
        if not a or not b:
            continue  # not applicable on either arm's build: nothing to compare
        fact = exact_difference(n, [_fact(v) for v in a], [_fact(v) for v in b])
        verdict = VARIES if not fact.deterministic else (SAME if fact.same else DIFFERENT)
        judged[n] = Judged(n, s.suite, s.m.workload, s.m.variant, s.m.metric, s.m.unit, "deterministic", verdict, missing, None, fact, run)
    return [judged[n] for n in sorted(judged)], pairs


def _fact(v: float) -> int | float:
    """A fact as its exact type: a whole number as an int (bytes and counts are written in full)."""
    return int(v) if math.isfinite(v) and v == int(v) and abs(v) < 2**53 else v


def undecided(judged: Sequence[Judged]) -> list[Judged]:
    """The metrics more pairs could still decide."""
    return [j for j in judged if j.verdict == Verdict.INCONCLUSIVE]


def table(judged: Sequence[Judged]) -> str:
    """The verdicts as a plain-text table, one line per metric (what the command line prints)."""
    lines = [f"{'metric':<64} {'B/A':>8} {'95% interval':>19} {'margin':>7}  verdict"]
    for j in judged:
        if j.comparison is not None:
            c = j.comparison
            lo, hi = c.interval
            interval = f"[{lo:.3f}, {hi:.3f}]" if math.isfinite(lo) and math.isfinite(hi) else "[none]"
            need = f" (about {c.pairs_needed} pairs)" if c.pairs_needed else ""
            lines.append(f"{j.name:<64} {c.estimate:8.3f} {interval:>19} {c.margin:7.1%}  {j.verdict}{need}")
        elif j.fact is not None:
            lines.append(f"{j.name:<64} {'':>8} {'':>19} {'exact':>7}  {j.verdict}: {j.fact.text}")
    return "\n".join(lines)


def to_json(j: Judged) -> dict[str, Any]:
    """A judged metric as JSON (what crosses XCom to the publish task and the command line)."""
    out: dict[str, Any] = {
        "name": j.name,
        "suite": j.suite,
        "workload": j.workload,
        "variant": j.variant,
        "metric": j.metric,
        "unit": j.unit,
        "kind": j.kind,
        "verdict": j.verdict,
        "pairs_dropped": list(j.pairs_dropped),
        "decided_at": j.decided_at,
    }
    if j.comparison is not None:
        c = j.comparison
        out.update(
            pairs_used=c.pairs,
            estimate=c.estimate,
            interval=list(c.interval),
            level=c.level,
            p_value=c.p_value,
            adjusted_p=c.adjusted_p,
            order_p=c.order_p,
            margin=c.margin,
            pairs_needed=c.pairs_needed,
            higher_is_better=c.higher_is_better,
        )
    if j.fact is not None:
        f = j.fact
        out.update(fact_a=None if f.a is None else str(f.a), fact_b=None if f.b is None else str(f.b), fact_text=f.text)
    return out
