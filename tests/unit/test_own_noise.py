"""A host's own noise: the levels its quiet nights show, shrunk towards the record's level by the host's degrees of
freedom (pure arithmetic)."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from jsonbench.history.stats import HOST_PRIOR_DF, night_level, own_noise, pooled_variance, quiet_nights, shrunk, variance_ratio


def test_pooled_variance_is_the_spread_inside_each_group() -> None:
    var, df = pooled_variance([[1.0, 3.0], [10.0, 12.0], [5.0]])
    assert df == 2 and var == pytest.approx(2.0)
    assert pooled_variance([[1.0], [2.0]]) == (None, 0)


def test_shrinking_weighs_own_and_prior_by_their_degrees_of_freedom() -> None:
    assert shrunk(None, 0, 0.2) == 0.2
    assert shrunk(0.03**2, HOST_PRIOR_DF, 0.2) == pytest.approx(math.sqrt((0.03**2 + 0.2**2) / 2))
    assert shrunk(0.0, 1000, 0.2, floor=0.02) == 0.02
    assert shrunk(0.03**2, 100, 0.2) < 0.05 < shrunk(0.03**2, 1, 0.2)


def test_a_nights_level_is_never_below_what_its_starts_put_into_it() -> None:
    var, df = night_level([0.0, 0.0, 0.0], [[0.0, 0.1], [0.0, 0.1]])
    assert df == 2 and var == pytest.approx(0.005 / 2)
    var, df = night_level([0.0, 0.1, 0.2])
    assert df == 2 and var == pytest.approx(0.01)


def test_one_night_speaks_only_through_its_starts() -> None:
    assert night_level([0.0], [[0.0, 0.1]]) == (pytest.approx(0.0025), 1)
    assert night_level([0.0]) == (None, 0)


def test_a_new_host_starts_from_the_prior_and_a_quiet_one_learns_its_own() -> None:
    new = own_noise([], [], prior=0.2, floor=0.02)
    assert new.sigma == 0.2 and new.own is None and new.nights == 0
    quiet = own_noise([0.0, 0.03, -0.03, 0.01, -0.01, 0.0, 0.02, -0.02, 0.0, 0.01, -0.01], [], prior=0.2, floor=0.02)
    assert quiet.nights == 11 and quiet.df == 10 and quiet.sigma < 0.2 / 1.5


def test_a_family_says_how_quiet_its_host_is_shrunk_by_its_nights() -> None:
    from jsonbench.history.stats import RATIO_PRIOR_DF

    quiet = [(0.03**2, 4, 0.3)] * 50  # every series a tenth of its record level
    assert variance_ratio(quiet, nights_df=4) == pytest.approx((4 * 0.01 + RATIO_PRIOR_DF) / (4 + RATIO_PRIOR_DF))
    assert variance_ratio(quiet, nights_df=0) == 1.0, "one night's starts leave out what moves between nights"
    assert variance_ratio(quiet[:4], nights_df=4) == 1.0, "too few series"
    assert variance_ratio([(0.6**2, 4, 0.3)] * 50, nights_df=4) > 1.0, "a noisier host is judged noisier"


# -- quiet nights: a night far from the others teaches nothing --------------------------------------------------------

PRIOR, FLOOR = 0.1, 0.02


def _honest(rng: random.Random, n: int, sd: float = 0.03) -> list[float]:
    return [rng.gauss(0.0, sd) for _ in range(n)]


def test_honest_nights_are_all_quiet() -> None:
    rng = random.Random(7)
    series = [_honest(rng, n) for n in (3, 4, 6, 10, 30) for _ in range(200)]
    left = [own_noise(x, [], PRIOR, FLOOR).left_out for x in series]
    assert sum(left) == 0, sum(left)
    plain = own_noise([0.0, 0.03, -0.03, 0.01, -0.01, 0.02], [], PRIOR, FLOOR)
    assert plain.left_out == 0 and plain.nights == 6 and plain.own == pytest.approx(math.sqrt(statistics.variance(plain.levels)))


def test_one_disturbed_night_among_six_does_not_deafen_the_host() -> None:
    rng = random.Random(11)
    ratios = []
    for _ in range(200):
        nights = _honest(rng, 6)
        honest = own_noise(nights, [], PRIOR, FLOOR)
        disturbed = own_noise([*nights[:3], nights[3] + math.log(2.0), *nights[4:]], [], PRIOR, FLOOR)
        assert disturbed.left_out == 1 and disturbed.nights == 5
        ratios.append(disturbed.sigma / honest.sigma)
    # a night fewer: its degree of freedom goes to the prior (10 % here), which lifts the sigma a few per cent
    assert max(ratios) < 1.1 and statistics.fmean(ratios) < 1.06, (max(ratios), statistics.fmean(ratios))
    nights = [0.0, 0.03, -0.03, math.log(2.0), 0.01, -0.01]
    assert statistics.stdev(nights) > 0.25, "the plain variance hears the night"
    assert own_noise(nights, [], PRIOR, FLOOR).own == pytest.approx(statistics.stdev([0.0, 0.03, -0.03, 0.01, -0.01]))


def test_two_disturbed_nights_in_a_month_are_both_left_out() -> None:
    nights = _honest(random.Random(3), 30)
    nights[4] += math.log(2.0)
    nights[17] += math.log(1.5)
    own = own_noise(nights, [], PRIOR, FLOOR)
    assert own.left_out == 2 and own.own == pytest.approx(statistics.stdev(nights[:4] + nights[5:17] + nights[18:]))


def test_a_step_is_learned_from_the_level_most_nights_share() -> None:
    rng = random.Random(5)
    base = _honest(rng, 6)
    step = math.log(2.0)
    # Two of six nights at the new level: they are left out, the four before it teach the host (the step stays in the
    # history, where the window test still hears it).
    two = own_noise([*base[:4], *(x + step for x in base[4:])], [], PRIOR, FLOOR)
    assert two.left_out == 2 and two.own == pytest.approx(statistics.stdev(base[:4]))
    # Four of six: the two before it are left out.
    four = own_noise([*base[:2], *(x + step for x in base[2:])], [], PRIOR, FLOOR)
    assert four.left_out == 2 and four.own == pytest.approx(statistics.stdev(base[2:]))
    # Half and half: no level is the nights' own, every night stays in and the spread learned is the step's.
    half = own_noise([*base[:3], *(x + step for x in base[3:])], [], PRIOR, FLOOR)
    assert half.left_out == 0 and half.own is not None and half.own > step / 2


def test_a_night_left_out_takes_its_starts_with_it() -> None:
    nightly = [0.0, 0.02, -0.01 + math.log(1.5), 0.01, -0.02, 0.0]
    starts = [[x - 0.02, x + 0.02] for x in nightly]
    starts[2] = [nightly[2] - 0.35, nightly[2] + 0.35]  # one start twice as slow as the other, too
    own = own_noise(nightly, starts, 0.05, FLOOR)
    assert own.left_out == 1 and own.starts == tuple(tuple(g) for g in starts)
    kept = [i for i in range(6) if i != 2]
    assert own.own == pytest.approx(math.sqrt(night_level([nightly[i] for i in kept], [starts[i] for i in kept])[0] or 0.0))
    # Starts that disagree as every night's do (one cold, one warm) are the host's between-start noise: they stay.
    wide = [[x - 0.45, x + 0.45] for x in nightly[:2] + nightly[3:]]
    assert own_noise(nightly[:2] + nightly[3:], wide, 0.05, FLOOR).left_out == 0
    with pytest.raises(ValueError):
        own_noise(nightly, starts[:3], 0.05, FLOOR)


def test_two_nights_cannot_tell_which_one_is_off() -> None:
    assert quiet_nights([0.0, math.log(2.0)], PRIOR, FLOOR) == [True, True]


def test_a_narrower_prior_judges_the_same_nights_again() -> None:
    """The record's level is wide against a quiet host's nights; scaled to its family, a 1.3x night stands out."""
    nights = [0.0, 0.01, -0.01, 0.005, math.log(1.3), -0.005]
    wide = own_noise(nights, [], prior=0.3, floor=FLOOR)
    assert wide.left_out == 0
    narrow = wide.towards(0.03)
    assert narrow.left_out == 1 and narrow.prior == 0.03 and narrow.sigma < wide.sigma


def test_a_family_night_disturbed_does_not_make_its_host_read_noisier() -> None:
    """Every series of a family 1.8x slower on one night (a backup job): the family's ratio reads the series' quiet
    nights, so the host stays as quiet against the record as its honest nights say."""
    rng = random.Random(13)
    honest, disturbed, plain = [], [], []
    for _ in range(60):
        nights = _honest(rng, 6, 0.03)
        busy = [*nights[:3], nights[3] + math.log(1.8), *nights[4:]]
        honest.append(own_noise(nights, [], 0.1, FLOOR))
        disturbed.append(own_noise(busy, [], 0.1, FLOOR))
        plain.append((statistics.variance(busy), 5, 0.1))
    ratio = variance_ratio([(o.own**2, o.df, o.prior) for o in honest if o.own is not None], nights_df=5)
    again = variance_ratio([(o.own**2, o.df, o.prior) for o in disturbed if o.own is not None], nights_df=4)
    assert ratio < 0.3 and again == pytest.approx(ratio, rel=0.2), (ratio, again)
    assert variance_ratio(plain, nights_df=5) > 3, "the plain variance would make the host read noisier than the record"
