"""A host's own noise: the levels its quiet nights show, shrunk towards the record's level by the host's degrees of
freedom (pure arithmetic)."""

from __future__ import annotations

import math

import pytest

from jsonbench.history.stats import HOST_PRIOR_DF, night_level, own_noise, pooled_variance, shrunk


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
    from jsonbench.history.stats import RATIO_PRIOR_DF, variance_ratio

    quiet = [(0.03**2, 4, 0.3)] * 50  # every series a tenth of its record level
    assert variance_ratio(quiet, nights_df=4) == pytest.approx((4 * 0.01 + RATIO_PRIOR_DF) / (4 + RATIO_PRIOR_DF))
    assert variance_ratio(quiet, nights_df=0) == 1.0, "one night's starts leave out what moves between nights"
    assert variance_ratio(quiet[:4], nights_df=4) == 1.0, "too few series"
    assert variance_ratio([(0.6**2, 4, 0.3)] * 50, nights_df=4) > 1.0, "a noisier host is judged noisier"
