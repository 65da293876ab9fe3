"""The statistics drift and the noise model use, over plain numbers: floats and sequences in, plain values out.

Nothing here reads a file, a record or a frame; what the numbers are (which runs, which series, which record) is the
business of :mod:`jsonbench.history.drift` and :mod:`jsonbench.history.noise`. Read in this order:

* :mod:`~jsonbench.history.stats.tails`: the normal distribution and the honest runs' heavier tail (p-values, quantiles);
* :mod:`~jsonbench.history.stats.fdr`: Benjamini-Hochberg over many tests;
* :mod:`~jsonbench.history.stats.levels`: the log scale, and the noise between starts and between hosts;
* :mod:`~jsonbench.history.stats.own`: a host's own noise from its quiet nights (one far from the others left out), shrunk towards a prior;
* :mod:`~jsonbench.history.stats.thresholds`: the threshold and the minimum detectable shift a series' noise allows;
* :mod:`~jsonbench.history.stats.window`: the calibrated window test (the last 1 .. k nights against the reference);
* :mod:`~jsonbench.history.stats.families`: a family's (one engine's suite) median move against the host's;
* :mod:`~jsonbench.history.stats.paired`: an interleaved A/B comparison's pairs (imported by its users, not here: it needs SciPy).
"""

from jsonbench.history.stats.families import (
    FAMILY_MIN_SERIES,
    HOST_MIN_FAMILIES,
    common_p,
    contrast_p,
    family_p,
    host_move,
    host_seen,
    nightly_medians,
    nights_apart,
    on_common,
    went_along_p,
)
from jsonbench.history.stats.fdr import benjamini_hochberg
from jsonbench.history.stats.levels import levels, log_of
from jsonbench.history.stats.own import (
    HOST_PRIOR_DF,
    RATIO_PRIOR_DF,
    OwnNoise,
    night_level,
    own_noise,
    pooled_variance,
    quiet_nights,
    shrunk,
    variance_ratio,
)
from jsonbench.history.stats.tails import Tail, norm_isf, norm_sf, shift_for, tail_p, tail_z
from jsonbench.history.stats.thresholds import (
    FAMILY_LEVEL,
    FDR_Q,
    MIN_EFFECT,
    POWER,
    REF_RUNS,
    family_mds,
    lone_bounds,
    lone_z,
    thresholds,
)
from jsonbench.history.stats.window import Window, host_mix, lone_window, reference, window_of, window_se, windows

__all__ = [
    "FAMILY_LEVEL",
    "FAMILY_MIN_SERIES",
    "FDR_Q",
    "HOST_PRIOR_DF",
    "HOST_MIN_FAMILIES",
    "MIN_EFFECT",
    "OwnNoise",
    "POWER",
    "RATIO_PRIOR_DF",
    "REF_RUNS",
    "Tail",
    "Window",
    "benjamini_hochberg",
    "common_p",
    "contrast_p",
    "family_mds",
    "family_p",
    "host_mix",
    "host_move",
    "host_seen",
    "levels",
    "log_of",
    "lone_bounds",
    "lone_window",
    "lone_z",
    "nightly_medians",
    "night_level",
    "nights_apart",
    "norm_isf",
    "norm_sf",
    "on_common",
    "own_noise",
    "pooled_variance",
    "quiet_nights",
    "reference",
    "shift_for",
    "shrunk",
    "tail_p",
    "tail_z",
    "variance_ratio",
    "thresholds",
    "window_of",
    "went_along_p",
    "window_se",
    "windows",
]
