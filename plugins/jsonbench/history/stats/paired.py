"""An interleaved A/B comparison of two engine builds or settings, judged pair by pair.

Each pair is one fresh engine start of arm A and one of arm B on the same data, in an order shuffled per
pair and balanced between A-first and B-first (randomized interleaved trials, Abedi & Brecht, ICPE 2017):
slow drift of the host then falls on both arms alike, and an order effect cancels instead of posing as a
change. Per metric each pair gives one log ratio d = log(B/A) (each arm's value is its repetitions'
median), and the comparison is reported as a ratio with its interval (Kalibera & Jones, ISMM 2013):

* estimate: the Hodges-Lehmann pseudo-median of d (median of the Walsh averages), shown as exp(HL);
* interval: the distribution-free Wilcoxon signed-rank interval from the Walsh averages (exact critical
  value up to ``EXACT_MAX`` pairs, normal approximation above), the statistic Chromium's Pinpoint uses;
  no normality is assumed, only a distribution of d symmetric about its centre;
* across metrics, Benjamini-Hochberg over the signed-rank p-values, and for the metrics it flags an
  interval widened to the false-coverage-rate level 1 - R q / m (Benjamini & Yekutieli, 2005);
* staged pairs (more pairs only while a metric is undecided) spend alpha by a Lan-DeMets function,
  each stage at its own level, so the error over all looks stays within alpha.

Conventions. A margin ``m`` (a share: 0.02 is 2 %) is symmetric in log space: no practical change is a
ratio in [1/(1+m), 1+m], i.e. |d| <= log(1+m), so swapping the arms mirrors the verdict. The direction
of worse is the metric's: ``higher_is_better`` False for times, True for rates.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from typing import Literal

import numpy as np
from scipy import stats  # type: ignore[import-untyped]

EXACT_MAX = 50
"""Up to this many pairs the interval's critical value comes from the exact signed-rank distribution."""

Fact = str | int | float
Spending = Literal["pocock", "obrien-fleming"]


class Verdict(StrEnum):
    """What a change does to one metric, judged against the margin of practical equivalence."""

    REGRESSION = "regression"  # the interval excludes no change, the estimate is beyond the margin, the worse way
    IMPROVEMENT = "improvement"  # the same, the better way
    SMALL = "small"  # the interval excludes no change, the estimate is within the margin
    EQUIVALENT = "equivalent"  # the whole interval is within the margin
    INCONCLUSIVE = "inconclusive"  # none of these: more pairs would tell


# ---- the design ------------------------------------------------------------------------------------


def pair_order(pairs: int, seed: int) -> list[tuple[str, str]]:
    """Each pair's start order, ("A", "B") or ("B", "A"): as many of each (one more of either when odd), shuffled by ``seed``."""
    if pairs < 1:
        raise ValueError(f"pairs must be at least 1, not {pairs}")
    rng = random.Random(seed)
    a_first = pairs // 2 + (pairs % 2 if rng.random() < 0.5 else 0)
    firsts = ["A"] * a_first + ["B"] * (pairs - a_first)
    rng.shuffle(firsts)
    return [("A", "B") if f == "A" else ("B", "A") for f in firsts]


def arm_value(repetitions: Sequence[float | None]) -> float | None:
    """One arm's value in one pair: the median of its finite repetitions (None when it has none)."""
    kept = [v for v in repetitions if v is not None and math.isfinite(v)]
    return statistics.median(kept) if kept else None


@dataclass(frozen=True)
class LogRatios:
    """log(B/A) per usable pair, with the indices of the pairs behind them and of those dropped."""

    values: tuple[float, ...]
    kept: tuple[int, ...]
    dropped: tuple[int, ...]

    @property
    def note(self) -> str:
        """What was dropped and why, or "" when every pair was used."""
        if not self.dropped:
            return ""
        return f"pairs {', '.join(map(str, self.dropped))} dropped: a value missing, not finite or not positive"


def log_ratios(a: Sequence[float | None], b: Sequence[float | None]) -> LogRatios:
    """log(b[i] / a[i]) for each pair whose values both exist and are positive (a log ratio needs both)."""
    if len(a) != len(b):
        raise ValueError(f"arms of unequal length: A has {len(a)} pairs, B {len(b)}")
    kept, dropped, values = [], [], []
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if x is None or y is None or not (0 < x < math.inf and 0 < y < math.inf):
            dropped.append(i)
            continue
        kept.append(i)
        values.append(math.log(y / x))
    return LogRatios(tuple(values), tuple(kept), tuple(dropped))


# ---- estimate and intervals ------------------------------------------------------------------------


def _walsh(d: Sequence[float]) -> np.ndarray:
    """The sorted Walsh averages (d_i + d_j) / 2 for i <= j: n(n+1)/2 of them."""
    x = np.asarray(d, dtype=float)
    i, j = np.triu_indices(len(x))
    return np.sort((x[i] + x[j]) / 2)


def hodges_lehmann(d: Sequence[float]) -> float:
    """The Hodges-Lehmann estimate of the pseudo-median: the median of the Walsh averages (NaN for no data)."""
    return float(np.median(_walsh(d))) if len(d) else math.nan


@cache
def _signrank_cdf(n: int) -> np.ndarray:
    """P(W+ <= w) for w = 0 .. n(n+1)/2 under no change: subset sums of 1..n counted, exact in float64 for n <= 50."""
    counts = np.zeros(n * (n + 1) // 2 + 1)
    counts[0] = 1.0
    for k in range(1, n + 1):
        counts[k:] = counts[k:] + counts[:-k].copy()
    return np.cumsum(counts) / 2.0**n


def _order(n: int, level: float) -> int | None:
    """k such that [W_(k), W_(M+1-k)] covers the pseudo-median with at least ``level`` (None when n cannot).

    The rule of R's ``wilcox.test(conf.int = TRUE)``: k is the smallest w with P(W+ <= w) >= (1 - level) / 2,
    so the coverage is 1 - 2 P(W+ <= k - 1) >= level. Above ``EXACT_MAX`` pairs W+ is taken as normal with
    mean n(n+1)/4 and variance n(n+1)(2n+1)/24, with the continuity correction.
    """
    half = (1.0 - level) / 2.0
    if n <= EXACT_MAX:
        k = int(np.searchsorted(_signrank_cdf(n), half - 1e-12))
    else:
        mean, sd = n * (n + 1) / 4.0, math.sqrt(n * (n + 1) * (2 * n + 1) / 24.0)
        k = math.floor(mean + 0.5 + float(stats.norm.ppf(half)) * sd)
    return k if k >= 1 else None


def min_pairs(level: float = 0.95) -> int:
    """The fewest pairs for which a Wilcoxon interval at ``level`` exists: 2 / 2**n <= 1 - level (6 at 95 %)."""
    return math.ceil(math.log2(2.0 / (1.0 - level)) - 1e-12)


def wilcoxon_interval(d: Sequence[float], level: float = 0.95) -> tuple[float, float]:
    """The distribution-free interval for the pseudo-median of ``d`` from its Walsh averages.

    With fewer than :func:`min_pairs` pairs no interval reaches ``level``: the answer is then the whole
    line, (-inf, inf), which no verdict can use. Ties and zeros leave the rule as it is (it stays
    close to its level); :func:`bootstrap_interval` is the alternative when the data are coarse.
    """
    k = _order(len(d), level)
    if k is None:
        return (-math.inf, math.inf)
    w = _walsh(d)
    return (float(w[k - 1]), float(w[len(w) - k]))


def bootstrap_interval(d: Sequence[float], level: float = 0.95, seed: int = 0, n_boot: int = 4000) -> tuple[float, float]:
    """A percentile bootstrap interval of the Hodges-Lehmann estimate, resampling pairs (seeded, so repeatable)."""
    if len(d) < 2:
        return (-math.inf, math.inf)
    res = stats.bootstrap(
        (np.asarray(d, dtype=float),),
        hodges_lehmann,
        vectorized=False,
        n_resamples=n_boot,
        confidence_level=level,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    return (float(res.confidence_interval.low), float(res.confidence_interval.high))


# ---- tests ------------------------------------------------------------------------------------------


def signed_rank_p(d: Sequence[float]) -> float:
    """The two-sided Wilcoxon signed-rank p-value of no change (SciPy: exact when it can be, else normal); 1 with no data."""
    return signed_rank_ps([d])[0]


def signed_rank_ps(samples: Sequence[Sequence[float]]) -> list[float]:
    """:func:`signed_rank_p` of each sample, with one SciPy call per sample size (many metrics at once)."""
    out = [1.0] * len(samples)
    by_size: dict[int, list[int]] = {}
    for i, d in enumerate(samples):
        if any(d):  # no data, or every pair unchanged: nothing to test
            by_size.setdefault(len(d), []).append(i)
    for rows in by_size.values():
        ps = stats.wilcoxon(np.asarray([samples[i] for i in rows], dtype=float), axis=1).pvalue
        for i, p in zip(rows, np.atleast_1d(ps), strict=True):
            out[i] = float(p)
    return out


def order_effect(d: Sequence[float], first: Sequence[str]) -> float | None:
    """The Mann-Whitney p-value that A-first pairs' log ratios differ from B-first pairs' (None if either is absent).

    A small p says the start order matters on this host (a warm cache, a second start faster): the
    balanced order keeps it out of the estimate, but it widens the interval and deserves a look.
    """
    if len(d) != len(first):
        raise ValueError(f"{len(d)} log ratios but {len(first)} first arms")
    a_first = [x for x, f in zip(d, first, strict=True) if f == "A"]
    b_first = [x for x, f in zip(d, first, strict=True) if f == "B"]
    if not a_first or not b_first:
        return None
    return float(stats.mannwhitneyu(a_first, b_first).pvalue)


def adjust_p(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (SciPy's ``false_discovery_control``), in the order given."""
    if not p_values:
        return []
    return [float(p) for p in stats.false_discovery_control(np.asarray(p_values, dtype=float), method="bh")]


# ---- verdicts ---------------------------------------------------------------------------------------


def verdict(estimate: float, interval: tuple[float, float], *, margin: float, higher_is_better: bool, significant: bool = True) -> Verdict:
    """The verdict from a log-space estimate and interval; ``significant`` gates any claim of change (e.g. FDR).

    A change is claimed only when the interval excludes 0 and ``significant`` holds. A detected change
    within the margin is SMALL even when its whole interval also lies inside the margin: it is real.
    """
    lo, hi = interval
    band = math.log1p(margin)
    if significant and (lo > 0 or hi < 0):
        if abs(estimate) <= band:
            return Verdict.SMALL
        return Verdict.IMPROVEMENT if (estimate > 0) == higher_is_better else Verdict.REGRESSION
    if -band < lo and hi < band:
        return Verdict.EQUIVALENT
    return Verdict.INCONCLUSIVE


def pairs_needed(d: Sequence[float], interval: tuple[float, float], *, margin: float, level: float) -> int | None:
    """About how many pairs would decide an inconclusive metric, if the spread and the estimate held.

    It takes the interval's half-width to shrink as 1/sqrt(n) (from the sample's standard deviation,
    scaled for the Hodges-Lehmann estimate, when there is no finite interval yet) and asks for the n at
    which it falls below the easier of the two distances: |estimate| (the interval then excludes no
    change) or margin - |estimate| (it then fits inside the margin). An approximation, not a promise.
    """
    n = len(d)
    if n < 2:
        return None
    est = hodges_lehmann(d)
    gap = max(abs(est), math.log1p(margin) - abs(est))
    if gap <= 0:
        return None
    lo, hi = interval
    if math.isfinite(hi - lo):
        need = n * ((hi - lo) / 2 / gap) ** 2
    else:
        z = float(stats.norm.ppf(1 - (1 - level) / 2))
        need = (z * statistics.stdev(d) * math.sqrt(math.pi / 3) / gap) ** 2
    return max(math.ceil(need), n + 1, min_pairs(level))


#: The precision the report states the pairs for: a ratio's 95 % interval within plus or minus 3 % of its estimate.
PRECISION = 0.03


def half_width(interval: tuple[float, float]) -> float | None:
    """The half-width of a ratio's interval (B/A), as a share: (hi / lo) ** 0.5 - 1; None when it is not finite."""
    lo, hi = interval
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo <= 0 or hi <= 0:
        return None
    return math.expm1((math.log(hi) - math.log(lo)) / 2)


def pairs_for_precision(pairs: int, interval: tuple[float, float], precision: float = PRECISION) -> int | None:
    """About how many pairs would bring a ratio's interval to plus or minus ``precision`` if the spread held.

    The half-width shrinks as 1/sqrt(n), so n = pairs * (log half-width / log(1 + precision)) ** 2, never fewer than
    :func:`min_pairs`: what to plan a comparison for, not a promise. None without a finite interval.
    """
    hw = half_width(interval)
    if hw is None or pairs < 1 or precision <= 0:
        return None
    return max(math.ceil(pairs * (math.log1p(hw) / math.log1p(precision)) ** 2 - 1e-9), min_pairs())


def aa_margin(d_aa: Sequence[float], level: float = 0.95) -> float:
    """The floor below which no change can be told apart on this host: the far end of an A/A interval, as a share.

    An arm against itself has no change, so whatever its interval spans is what the protocol cannot
    resolve at that many pairs; its far end (not the half-width) is taken so that an A/A interval
    that misses 0, a bias in the harness, widens the floor instead of hiding. Use as many pairs as the
    A/B comparison it serves: fewer pairs give a wider floor.
    """
    lo, hi = wilcoxon_interval(d_aa, level)
    if not math.isfinite(hi - lo):
        raise ValueError(f"an A/A interval at {level} needs at least {min_pairs(level)} pairs, not {len(d_aa)}")
    return math.expm1(max(abs(lo), abs(hi)))


# ---- one metric, many metrics ----------------------------------------------------------------------


@dataclass(frozen=True)
class MetricComparison:
    """One metric's A/B comparison; ``estimate`` and ``interval`` are ratios B/A (1.10: B is 10 % higher)."""

    name: str
    pairs: int  # pairs used
    dropped: tuple[int, ...]  # indices of the pairs left out (a value missing or not positive)
    estimate: float
    interval: tuple[float, float]
    level: float  # the interval's level (raised for metrics flagged among many, see compare_metrics)
    p_value: float  # two-sided signed-rank p-value of no change
    adjusted_p: float  # Benjamini-Hochberg over the metrics compared together (= p_value alone)
    order_p: float | None  # Mann-Whitney p-value of an order effect (None without the order)
    verdict: Verdict
    pairs_needed: int | None  # for INCONCLUSIVE: the approximate pairs that would decide it
    margin: float
    higher_is_better: bool


@dataclass(frozen=True)
class MetricPairs:
    """One metric's per-pair values of each arm (each already its repetitions' median), for compare_metrics."""

    name: str
    a: Sequence[float | None]
    b: Sequence[float | None]
    higher_is_better: bool
    margin: float


def _compare(
    m: MetricPairs,
    r: LogRatios,
    first: Sequence[str] | None,
    level: float,
    p: float,
    adjusted: float,
    significant: bool,
    method: str,
    seed: int,
) -> MetricComparison:
    d = r.values
    lo, hi = bootstrap_interval(d, level, seed) if method == "bootstrap" else wilcoxon_interval(d, level)
    est = hodges_lehmann(d)
    judged = verdict(est, (lo, hi), margin=m.margin, higher_is_better=m.higher_is_better, significant=significant)
    needed = pairs_needed(d, (lo, hi), margin=m.margin, level=level) if judged is Verdict.INCONCLUSIVE else None
    order = order_effect(d, [first[i] for i in r.kept]) if first is not None else None
    return MetricComparison(
        m.name, len(d), r.dropped, math.exp(est), (math.exp(lo), math.exp(hi)), level, p, adjusted, order, judged, needed,
        m.margin, m.higher_is_better,
    )  # fmt: skip


def compare_metric(
    m: MetricPairs,
    *,
    first: Sequence[str] | None = None,
    level: float = 0.95,
    method: Literal["wilcoxon", "bootstrap"] = "wilcoxon",
    seed: int = 0,
) -> MetricComparison:
    """One metric compared alone; ``first`` is each pair's first arm ("A" or "B"), as :func:`pair_order` gave it."""
    r = log_ratios(m.a, m.b)
    p = signed_rank_p(r.values)
    return _compare(m, r, first, level, p, p, p <= 1 - level, method, seed)


def compare_metrics(
    metrics: Sequence[MetricPairs],
    *,
    first: Sequence[str] | None = None,
    level: float = 0.95,
    method: Literal["wilcoxon", "bootstrap"] = "wilcoxon",
    seed: int = 0,
) -> list[MetricComparison]:
    """Every metric of one comparison, with the false discovery rate held at 1 - ``level`` across them.

    A change is claimed only where the Benjamini-Hochberg adjusted p-value is within 1 - level; those R
    of the m metrics get their interval at level 1 - R (1 - level) / m, so the intervals shown for the
    flagged metrics keep their coverage despite being picked (false coverage rate control).
    """
    rs = [log_ratios(m.a, m.b) for m in metrics]
    ps = signed_rank_ps([r.values for r in rs])
    adjusted = adjust_p(ps)
    alpha = 1 - level
    flagged = sum(q <= alpha for q in adjusted)
    fcr_level = 1 - flagged * alpha / max(len(metrics), 1)
    return [
        _compare(m, r, first, fcr_level if q <= alpha else level, p, q, q <= alpha, method, seed)
        for m, r, p, q in zip(metrics, rs, ps, adjusted, strict=True)
    ]


# ---- staged pairs -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stage:
    """One look at the data: after ``pairs`` pairs in total, judged at ``level`` = 1 - ``alpha``."""

    pairs: int
    alpha: float  # the alpha this stage spends
    level: float


def _spent(t: float, alpha: float, spending: Spending) -> float:
    """Lan-DeMets alpha spent by information fraction t: O'Brien-Fleming type or Pocock type."""
    if spending == "obrien-fleming":
        return float(2 - 2 * stats.norm.cdf(stats.norm.ppf(1 - alpha / 2) / math.sqrt(t)))
    return alpha * math.log1p((math.e - 1) * t)


def stage_levels(stages: Sequence[int], alpha: float = 0.05, spending: Spending = "pocock") -> list[Stage]:
    """Each stage's level for looks after ``stages`` pairs in total (e.g. 10, 20, 40).

    Stage k spends alpha(t_k) - alpha(t_{k-1}), with t the share of the last stage's pairs; its interval
    is built at 1 minus that. The stages' alphas add up to ``alpha``, so by the union bound the chance
    of claiming a change that is not there, at any look, stays within ``alpha`` whatever the stages'
    correlation (exact group-sequential bounds would be a little less strict). Pocock-type spending is
    the default: O'Brien-Fleming type spends so little early that a Wilcoxon interval at 10 of 40
    pairs does not exist (see :func:`min_pairs`).
    """
    if not stages or any(n < 1 for n in stages) or list(stages) != sorted(set(stages)):
        raise ValueError(f"stages must be increasing positive pair counts, not {list(stages)}")
    spent = [_spent(n / stages[-1], alpha, spending) for n in stages]
    steps = [s - before for s, before in zip(spent, [0.0, *spent[:-1]], strict=True)]
    return [Stage(n, a, 1 - a) for n, a in zip(stages, steps, strict=True)]


def stage_for(plan: Sequence[Stage], pairs: int) -> Stage:
    """The planned stage at ``pairs`` pairs run: a look anywhere else would spend alpha the plan does not hold."""
    for stage in plan:
        if stage.pairs == pairs:
            return stage
    raise ValueError(f"no stage of the plan ends at {pairs} pairs: {[s.pairs for s in plan]}")


def next_stage(comparison: MetricComparison, plan: Sequence[Stage]) -> int | None:
    """The pairs in total the next stage should reach, or None when the metric is decided or the plan is done.

    Decided is any verdict but INCONCLUSIVE, judged at the stage's level (:func:`stage_for`); a decided
    metric keeps its verdict and is not judged again at later stages.
    """
    if comparison.verdict is not Verdict.INCONCLUSIVE:
        return None
    run = comparison.pairs + len(comparison.dropped)
    later = [s.pairs for s in plan if s.pairs > run]
    return later[0] if later else None


# ---- deterministic facts ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ExactDifference:
    """A fact that should not vary within an arm (bytes written, sizes, counts, a plan), A against B."""

    name: str
    deterministic: bool
    same: bool
    a: Fact | None  # the arm's one value; None when it varies there
    b: Fact | None
    text: str


def _one(values: Sequence[Fact]) -> tuple[Fact | None, list[Fact]]:
    distinct = list(dict.fromkeys(values))
    return (distinct[0] if len(distinct) == 1 else None), distinct


def _delta(a: Fact, b: Fact) -> str:
    if isinstance(a, str) or isinstance(b, str):
        return ""
    ratio = f", B/A {b / a:.4g}" if a else ""
    diff = f"{b - a:+d}" if isinstance(a, int) and isinstance(b, int) else f"{b - a:+.6g}"  # bytes and counts in full
    return f" (B - A {diff}{ratio})"


def exact_difference(name: str, a_values: Sequence[Fact], b_values: Sequence[Fact]) -> ExactDifference:
    """Compare a deterministic fact exactly: the same, or both values named, or where it is not deterministic."""
    if not a_values or not b_values:
        raise ValueError(f"{name}: each arm needs at least one value")
    a, a_all = _one(a_values)
    b, b_all = _one(b_values)
    varying = [f"{arm} ({len(vs)} values: {', '.join(map(repr, vs))})" for arm, v, vs in (("A", a, a_all), ("B", b, b_all)) if v is None]
    if varying:
        return ExactDifference(name, False, False, a, b, f"{name}: not deterministic in {' and in '.join(varying)}")
    assert a is not None and b is not None
    if a == b:
        return ExactDifference(name, True, True, a, b, f"{name}: same in A and B ({a!r})")
    return ExactDifference(name, True, False, a, b, f"{name}: A {a!r}, B {b!r}{_delta(a, b)}")
