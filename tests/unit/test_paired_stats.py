"""The paired A/B statistics (jsonbench.history.stats.paired) on fixed and seeded numbers.

Hand-worked examples pin the estimate and the interval's rank rule; seeded simulations check what the
rules promise (coverage, the false discovery rate across metrics, the alpha spent over stages), each
beside a control that shows the simulation would catch the failure it names. No timings.
"""

from __future__ import annotations

import ast
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from jsonbench.history.stats import paired
from jsonbench.history.stats.paired import MetricPairs, Verdict

ROOT = Path(__file__).resolve().parents[2]

# The Hamilton depression scale, first and second visit, 9 patients (Hollander & Wolfe, Nonparametric
# Statistical Methods, 1973, p. 29): the example of R's ?wilcox.test.
DEPRESSION_X = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30]
DEPRESSION_Y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29]


def _lognormal_pairs(rng: np.random.Generator, pairs: int, noise: float, shift: float = 0.0) -> tuple[list[float], list[float]]:
    """Per-pair values of A and B around 100 with log-normal noise; B is ``shift`` (a share) away from A."""
    a = 100 * np.exp(rng.normal(0, noise, pairs))
    b = 100 * (1 + shift) * np.exp(rng.normal(0, noise, pairs))
    return a.tolist(), b.tolist()


# ---- the design --------------------------------------------------------------------------------------


@pytest.mark.parametrize("pairs", [1, 2, 7, 10, 20, 41])
def test_pair_order_is_balanced_and_reproducible(pairs: int) -> None:
    order = paired.pair_order(pairs, seed=3)
    firsts = [o[0] for o in order]
    assert len(order) == pairs and set(order) <= {("A", "B"), ("B", "A")}
    assert abs(firsts.count("A") - firsts.count("B")) <= 1
    assert paired.pair_order(pairs, seed=3) == order


def test_pair_order_is_shuffled_by_the_seed() -> None:
    orders = {tuple(paired.pair_order(20, seed)) for seed in range(10)}
    assert len(orders) == 10  # 184,756 balanced orders of 20: ten seeds giving ten orders is the shuffle at work
    odd_extra = {[o[0] for o in paired.pair_order(5, seed)].count("A") for seed in range(20)}
    assert odd_extra == {2, 3}  # with an odd count, either arm gets the extra first start


def test_log_ratios_drop_missing_and_non_positive_pairs_and_say_so() -> None:
    r = paired.log_ratios([1.0, None, 2.0, 0.0, 3.0, math.nan], [1.1, 1.0, -1.0, 1.0, 3.0, 1.0])
    assert r.kept == (0, 4) and r.dropped == (1, 2, 3, 5)
    assert r.values == pytest.approx((math.log(1.1), 0.0))
    assert "pairs 1, 2, 3, 5 dropped" in r.note
    assert paired.log_ratios([1.0], [2.0]).note == ""
    with pytest.raises(ValueError, match="unequal"):
        paired.log_ratios([1.0], [1.0, 2.0])


def test_arm_value_is_the_median_of_the_repetitions() -> None:
    assert paired.arm_value([3.0, 1.0, None, 2.0, math.inf]) == 2.0
    assert paired.arm_value([None]) is None


# ---- estimate and interval --------------------------------------------------------------------------


def test_hodges_lehmann_and_interval_on_a_hand_worked_example() -> None:
    """d = -1, 2, 3, 5, 8, 13: its 21 Walsh averages, sorted, are
    -1, 0.5, 1, 2, 2, 2.5, 3, 3.5, 3.5, 4, 5, 5, 5.5, 6, 6.5, 7.5, 8, 8, 9, 10.5, 13.

    HL is the 11th, 5. Under no change P(W+ <= w) for n = 6 is 1, 2, 3, 5 in 64 for w = 0..3, so at 95 %
    (half 0.025) k = 1 (P(W+ <= 1) = 2/64 is the first at least 0.025): the 1st and 21st averages, -1 and 13;
    at 90 % (half 0.05) k = 3 (P(W+ <= 3) = 5/64): the 3rd and 19th, 1 and 9.
    """
    d = [-1.0, 2.0, 3.0, 5.0, 8.0, 13.0]
    assert paired.hodges_lehmann(d) == 5.0
    assert paired.wilcoxon_interval(d, 0.95) == (-1.0, 13.0)
    assert paired.wilcoxon_interval(d, 0.90) == (1.0, 9.0)


def test_against_the_reference_depression_example() -> None:
    """The depression data, d = x - y. p-value: 0.0390625 = 20/512, the exact two-sided value (R's
    ?wilcox.test runs the one-sided test on these data: 0.01953, half of it). Estimate and interval by the
    rule of R's stats::wilcox.test(x, y, paired = TRUE, conf.int = TRUE): qsignrank(0.025, 9) = 6 (P(W+ <= 5)
    = 10/512 < 0.025 <= P(W+ <= 6) = 14/512), so the 6th smallest and 6th largest of the 45 Walsh averages:
    0.01 (the lone d = 0.01) and 0.786 ((0.62 + 0.952) / 2); the (pseudo)median is 0.46 ((0.43 + 0.49) / 2).
    """
    d = [x - y for x, y in zip(DEPRESSION_X, DEPRESSION_Y, strict=True)]
    assert paired.hodges_lehmann(d) == pytest.approx(0.46)
    assert paired.wilcoxon_interval(d) == pytest.approx((0.01, 0.786))
    assert paired.signed_rank_p(d) == pytest.approx(0.0390625)


def test_no_interval_below_the_minimum_pairs() -> None:
    assert paired.min_pairs(0.95) == 6 and paired.min_pairs(0.99) == 8
    assert paired.wilcoxon_interval([0.1, 0.2, 0.3, 0.4, 0.5], 0.95) == (-math.inf, math.inf)
    assert math.isfinite(paired.wilcoxon_interval([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], 0.95)[0])


def _coverage(rng: np.random.Generator, draws: int, pairs: int, sample: str) -> float:
    hits = 0
    for i in range(draws):
        centre = 0.0 if i % 2 == 0 else 0.1  # half the draws with no change, half shifted
        noise = rng.normal(0, 0.03, pairs) if sample == "normal" else 0.03 * rng.standard_t(3, pairs)
        lo, hi = paired.wilcoxon_interval((centre + noise).tolist())
        hits += lo <= centre <= hi
    return hits / draws


@pytest.mark.parametrize(("pairs", "sample"), [(20, "normal"), (20, "t3"), (60, "normal")])
def test_interval_covers_the_true_change_95_percent_of_the_time(pairs: int, sample: str) -> None:
    """2,000 seeded draws: the binomial standard error is 0.005, the bound 3 of them around 0.95 (exact
    rule at 20 pairs, heavy-tailed t with 3 degrees of freedom, the normal approximation at 60)."""
    assert 0.935 <= _coverage(np.random.default_rng(11), 2000, pairs, sample) <= 0.965


def test_bootstrap_interval_is_seeded_and_holds_the_estimate() -> None:
    d = [x - y for x, y in zip(DEPRESSION_X, DEPRESSION_Y, strict=True)]
    lo, hi = paired.bootstrap_interval(d, seed=5)
    assert paired.bootstrap_interval(d, seed=5) == (lo, hi)
    assert lo < paired.hodges_lehmann(d) < hi
    assert paired.bootstrap_interval([0.1]) == (-math.inf, math.inf)


# ---- verdicts ---------------------------------------------------------------------------------------


def test_a_known_ten_percent_shift_is_found_with_its_sign() -> None:
    a, b = _lognormal_pairs(np.random.default_rng(7), 20, 0.03, shift=0.10)
    time = paired.compare_metric(MetricPairs("seconds", a, b, higher_is_better=False, margin=0.02))
    assert time.verdict is Verdict.REGRESSION
    assert time.interval[0] <= 1.10 <= time.interval[1] and time.interval[0] > 1.0
    assert time.estimate == pytest.approx(1.10, abs=0.02)
    rate = paired.compare_metric(MetricPairs("tps", a, b, higher_is_better=True, margin=0.02))
    assert rate.verdict is Verdict.IMPROVEMENT
    assert paired.compare_metric(MetricPairs("seconds", b, a, higher_is_better=False, margin=0.02)).verdict is Verdict.IMPROVEMENT


def test_no_change_with_little_noise_is_equivalent() -> None:
    """0.5 % noise, 20 pairs, margin 2 %: the interval is a few tenths of a percent wide, well inside the
    margin; a seed whose interval happens to miss 1.0 is SMALL (about 1 in 20), never a change or unknown."""
    rng = np.random.default_rng(2)
    verdicts = [paired.compare_metric(MetricPairs("s", *_lognormal_pairs(rng, 20, 0.005), False, 0.02)).verdict for _ in range(20)]
    assert set(verdicts) <= {Verdict.EQUIVALENT, Verdict.SMALL}
    assert verdicts.count(Verdict.EQUIVALENT) >= 17


@pytest.mark.parametrize(
    ("interval", "estimate", "expected"),
    [
        ((0.05, 0.15), 0.10, Verdict.REGRESSION),
        ((0.001, 0.03), 0.01, Verdict.SMALL),
        ((0.001, 0.01), 0.005, Verdict.SMALL),  # a real change inside the margin is said, not called equivalent
        ((-0.01, 0.015), 0.002, Verdict.EQUIVALENT),
        ((-0.01, 0.05), 0.02, Verdict.INCONCLUSIVE),
        ((-0.15, -0.05), -0.10, Verdict.IMPROVEMENT),
    ],
)
def test_verdict_rules(interval: tuple[float, float], estimate: float, expected: Verdict) -> None:
    assert paired.verdict(estimate, interval, margin=0.02, higher_is_better=False) is expected


def test_the_margin_is_symmetric_in_log_space() -> None:
    band = math.log(1.02)
    assert paired.verdict(0.0, (-band + 1e-9, band - 1e-9), margin=0.02, higher_is_better=False) is Verdict.EQUIVALENT
    assert paired.verdict(0.0, (-band - 1e-9, band - 1e-9), margin=0.02, higher_is_better=False) is Verdict.INCONCLUSIVE


def test_an_unflagged_metric_claims_no_change() -> None:
    assert paired.verdict(0.10, (0.05, 0.15), margin=0.02, higher_is_better=False, significant=False) is Verdict.INCONCLUSIVE


def test_an_inconclusive_metric_says_how_many_pairs_would_decide_it() -> None:
    """A 1 % shift under 3 % noise with 8 pairs and a 2 % margin: the interval straddles both 0 and the
    margin. The pairs asked for follow from the observed half-width shrinking as 1/sqrt(n)."""
    a, b = _lognormal_pairs(np.random.default_rng(4), 8, 0.03, shift=0.01)
    c = paired.compare_metric(MetricPairs("s", a, b, False, 0.02))
    assert c.verdict is Verdict.INCONCLUSIVE
    lo, hi = math.log(c.interval[0]), math.log(c.interval[1])
    est = math.log(c.estimate)
    gap = max(abs(est), math.log(1.02) - abs(est))
    assert c.pairs_needed == max(math.ceil(8 * ((hi - lo) / 2 / gap) ** 2), 9)
    assert c.pairs_needed is not None and c.pairs_needed > 8
    decided = paired.compare_metric(MetricPairs("s", *_lognormal_pairs(np.random.default_rng(4), 20, 0.03, 0.10), False, 0.02))
    assert decided.pairs_needed is None
    few = paired.compare_metric(MetricPairs("s", a[:4], b[:4], False, 0.02))  # no interval yet: the spread says
    assert few.verdict is Verdict.INCONCLUSIVE and few.pairs_needed is not None and few.pairs_needed >= 6


def test_the_pairs_for_a_precision_shrink_the_half_width_as_one_over_root_n() -> None:
    assert paired.half_width((1.0 / 1.06, 1.06)) == pytest.approx(0.06)
    assert paired.half_width((-math.inf, math.inf)) is None
    # +/-6 % at 10 pairs: +/-3 % needs four times as many
    assert paired.pairs_for_precision(10, (1.0 / 1.06, 1.06), 0.03) == math.ceil(10 * (math.log(1.06) / math.log(1.03)) ** 2)
    assert 39 <= paired.pairs_for_precision(10, (1.0 / 1.06, 1.06), 0.03) <= 41  # type: ignore[operator]
    assert paired.pairs_for_precision(20, (0.99, 1.01), 0.03) == paired.min_pairs()  # already narrower: the fewest that give an interval
    assert paired.pairs_for_precision(6, (-math.inf, math.inf)) is None
    # the promise on seeded pairs: at the pairs it names, the half-width is near the precision
    a, b = _lognormal_pairs(np.random.default_rng(11), 10, 0.05)
    c = paired.compare_metric(MetricPairs("s", a, b, False, 0.02))
    need = paired.pairs_for_precision(10, c.interval, 0.02)
    assert need is not None and need > 10
    a, b = _lognormal_pairs(np.random.default_rng(12), need, 0.05)
    wider = paired.half_width(paired.compare_metric(MetricPairs("s", a, b, False, 0.02)).interval)
    assert wider is not None and 0.01 < wider < 0.04


def test_aa_margin_is_the_far_end_of_the_aa_interval() -> None:
    a, b = _lognormal_pairs(np.random.default_rng(8), 20, 0.03)
    d = paired.log_ratios(a, b).values
    lo, hi = paired.wilcoxon_interval(d)
    assert lo < 0 < hi
    assert paired.aa_margin(d) == pytest.approx(math.expm1(max(-lo, hi)))
    assert 0.005 < paired.aa_margin(d) < 0.05  # 3 % noise per start, 20 pairs: a floor of about 2 %
    with pytest.raises(ValueError, match="at least 6 pairs"):
        paired.aa_margin(d[:5])


# ---- many metrics -----------------------------------------------------------------------------------


def test_aa_across_30_metrics_rarely_claims_a_change_after_fdr() -> None:
    """300 seeded A/A runs of 30 metrics (3 % log-normal noise, 20 pairs, margin 0 so that the margin hides
    nothing). Benjamini-Hochberg holds the chance of any claim to 5 % when nothing changed; the bound adds
    3 binomial standard errors of 300 runs (0.038). Two controls: unadjusted, some metric reaches p < 0.05
    in most runs (1 - 0.95**30 = 0.79), so the simulation can tell; and the rate is not kept low by a
    gate stricter than Benjamini-Hochberg's (it would fall far below 1 %)."""
    rng = np.random.default_rng(30)
    claimed = raw = 0
    for _ in range(300):
        metrics = [MetricPairs(f"m{i}", *_lognormal_pairs(rng, 20, 0.03), False, 0.0) for i in range(30)]
        out = paired.compare_metrics(metrics)
        claimed += any(c.verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT) for c in out)
        raw += any(c.p_value < 0.05 for c in out)
    assert 0.01 <= claimed / 300 <= 0.05 + 0.038
    assert raw / 300 > 0.6


def test_flagged_metrics_get_the_false_coverage_rate_level() -> None:
    rng = np.random.default_rng(1)
    metrics = [MetricPairs("moved", *_lognormal_pairs(rng, 20, 0.03, 0.10), False, 0.02)]
    metrics += [MetricPairs(f"still{i}", *_lognormal_pairs(rng, 20, 0.03), False, 0.02) for i in range(9)]
    out = paired.compare_metrics(metrics)
    assert out[0].verdict is Verdict.REGRESSION and out[0].adjusted_p <= 0.05
    flagged = sum(c.adjusted_p <= 0.05 for c in out)
    assert out[0].level == pytest.approx(1 - flagged * 0.05 / 10)
    assert all(c.level == 0.95 for c in out if c.adjusted_p > 0.05)
    assert [c.adjusted_p for c in out] == pytest.approx(paired.adjust_p([c.p_value for c in out]))


def test_an_order_effect_is_found_when_planted() -> None:
    """The second start of a pair 5 % faster: A-first pairs then show B faster, B-first pairs A faster."""
    rng = np.random.default_rng(9)
    first = [o[0] for o in paired.pair_order(20, seed=9)]
    a, b = _lognormal_pairs(rng, 20, 0.02)
    b_planted = [y * (0.95 if f == "A" else 1.0) for y, f in zip(b, first, strict=True)]
    a_planted = [x * (0.95 if f == "B" else 1.0) for x, f in zip(a, first, strict=True)]
    planted = paired.compare_metric(MetricPairs("s", a_planted, b_planted, False, 0.02), first=first)
    clean = paired.compare_metric(MetricPairs("s", a, b, False, 0.02), first=first)
    assert planted.order_p is not None and planted.order_p < 0.01
    assert clean.order_p is not None and clean.order_p > 0.05
    assert paired.order_effect([0.1, 0.2], ["A", "A"]) is None


def test_order_follows_the_pairs_kept() -> None:
    first = ["A", "B", "A", "B", "A", "B", "A", "B"]
    a = [1.0, None, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    b = [1.2, 1.0, 1.21, 0.9, 1.22, 0.91, 1.23, 0.92]
    c = paired.compare_metric(MetricPairs("s", a, b, False, 0.02), first=first)
    assert c.pairs == 7 and c.dropped == (1,)
    assert c.order_p is not None and c.order_p < 0.06  # all four A-first pairs above all three B-first ones


# ---- staged pairs -----------------------------------------------------------------------------------


@pytest.mark.parametrize("spending", ["pocock", "obrien-fleming"])
def test_stages_spend_no_more_than_alpha(spending: paired.Spending) -> None:
    plan = paired.stage_levels([10, 20, 40], alpha=0.05, spending=spending)
    assert [s.pairs for s in plan] == [10, 20, 40]
    assert sum(s.alpha for s in plan) == pytest.approx(0.05) and sum(s.alpha for s in plan) <= 0.05 + 1e-12
    assert all(0 < s.alpha < 0.05 and s.level == pytest.approx(1 - s.alpha) for s in plan)


def test_pocock_spending_leaves_an_interval_at_the_first_stage() -> None:
    assert paired.min_pairs(paired.stage_levels([10, 20, 40])[0].level) <= 10
    assert paired.min_pairs(paired.stage_levels([10, 20, 40], spending="obrien-fleming")[0].level) > 10


def _any_stage_claims(rng: np.random.Generator, levels: list[float]) -> bool:
    d = rng.normal(0, 0.03, 40)
    for n, level in zip([10, 20, 40], levels, strict=True):
        lo, hi = paired.wilcoxon_interval(d[:n].tolist(), level)
        if lo > 0 or hi < 0:
            return True
    return False


def test_staged_looks_keep_the_error_within_alpha() -> None:
    """2,000 seeded null runs looked at after 10, 20 and 40 pairs. At the plan's levels the share that
    ever excludes no change stays within 0.05 (+ 3 standard errors, 0.015); the control, every look at
    95 %, overshoots (about 0.09), which is what the spending prevents."""
    plan = [s.level for s in paired.stage_levels([10, 20, 40])]
    rng = np.random.default_rng(40)
    staged = sum(_any_stage_claims(rng, plan) for _ in range(2000)) / 2000
    rng = np.random.default_rng(40)
    naive = sum(_any_stage_claims(rng, [0.95] * 3) for _ in range(2000)) / 2000
    assert staged <= 0.065
    assert naive > 0.075


def test_next_stage_follows_the_plan_until_decided() -> None:
    plan = paired.stage_levels([10, 20, 40])
    a, b = _lognormal_pairs(np.random.default_rng(4), 10, 0.03, shift=0.01)
    stage = paired.stage_for(plan, len(a))
    c = paired.compare_metric(MetricPairs("s", a, b, False, 0.02), level=stage.level)
    assert c.level == stage.level and c.verdict is Verdict.INCONCLUSIVE
    assert paired.next_stage(c, plan) == 20
    a, b = _lognormal_pairs(np.random.default_rng(4), 10, 0.03, shift=0.2)
    assert paired.next_stage(paired.compare_metric(MetricPairs("s", a, b, False, 0.02), level=stage.level), plan) is None
    with pytest.raises(ValueError, match="no stage"):
        paired.stage_for(plan, 15)
    with pytest.raises(ValueError, match="increasing"):
        paired.stage_levels([20, 10])


# ---- deterministic facts ----------------------------------------------------------------------------


def test_exact_differences_are_named() -> None:
    same = paired.exact_difference("WAL bytes", [8192, 8192], [8192, 8192, 8192])
    assert same.same and same.deterministic and same.text == "WAL bytes: same in A and B (8192)"
    grew = paired.exact_difference("WAL bytes", [1000, 1000], [1200, 1200])
    assert not grew.same and (grew.a, grew.b) == (1000, 1200)
    assert grew.text == "WAL bytes: A 1000, B 1200 (B - A +200, B/A 1.2)"
    big = paired.exact_difference("WAL bytes", [123_456_789], [123_456_790])
    assert big.text == "WAL bytes: A 123456789, B 123456790 (B - A +1, B/A 1)"
    plan = paired.exact_difference("plan", ["Seq Scan"], ["Index Scan"])
    assert plan.text == "plan: A 'Seq Scan', B 'Index Scan'"
    varies = paired.exact_difference("HOT updates", [5, 6, 5], [5])
    assert not varies.deterministic and varies.a is None and varies.b == 5
    assert varies.text == "HOT updates: not deterministic in A (2 values: 5, 6)"
    with pytest.raises(ValueError):
        paired.exact_difference("size", [], [1])


# ---- the room --------------------------------------------------------------------------------------


def test_the_module_imports_only_the_standard_library_numpy_and_scipy() -> None:
    source = ROOT / "plugins" / "jsonbench" / "history" / "stats" / "paired.py"
    names = set()
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            names.add((node.module or "").split(".")[0])
    assert names - set(sys.stdlib_module_names) == {"numpy", "scipy"}
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, jsonbench.history.stats.paired; print(sorted(m for m in sys.modules if m.startswith(('jsonbench', 'pandas'))))"],
        capture_output=True, text=True, check=True, env={"PYTHONPATH": str(ROOT / "plugins")},
    )  # fmt: skip
    modules = ast.literal_eval(loaded.stdout.strip())
    assert "jsonbench.history.stats.paired" in modules
    assert [m for m in modules if m not in ("jsonbench", "jsonbench.history") and not m.startswith("jsonbench.history.stats")] == [], (
        "nothing of jsonbench beyond its statistics, and no pandas"
    )


def test_many_p_values_at_once_match_scipy_one_by_one() -> None:
    from scipy import stats

    rng = np.random.default_rng(12)
    samples = [rng.normal(0.01, 0.03, n).tolist() for n in (8, 20, 20, 55)] + [[0.0, 0.01, -0.02, 0.03, 0.0, 0.05], [0.0] * 6, []]
    expected = [float(stats.wilcoxon(d).pvalue) for d in samples[:5]] + [1.0, 1.0]
    assert paired.signed_rank_ps(samples) == pytest.approx(expected, rel=1e-12)
