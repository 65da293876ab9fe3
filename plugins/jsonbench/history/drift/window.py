"""The calibrated window test of one series: tonight, and the mean of the last 2 .. k runs, against the runs before them.

The reference starts at the last change point Otava found in the history (the series' ``base``): an old change is the
new normal. It leaves out the host's nights too far from the others to teach its noise
(:attr:`~jsonbench.history.drift.series.CalibratedSeries.far`): a sigma learned without such a night, against a
level that holds it, would read the night's excursion as tonight's move. Each window is a z-test on the log
statistic with the calibrated ``sigma`` (plus the record's between-hosts level as far as the window and its reference
were measured on different hosts); the lone series' p-value is the smallest under the honest runs' tail, times the
number of windows tried (:mod:`jsonbench.history.stats.window`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jsonbench.history.drift.series import CalibratedSeries
from jsonbench.history.stats import Tail, Window, lone_window, window_of, windows


@dataclass(frozen=True)
class WindowTest:
    """A series' windows (``mix``: each window's share of the between-hosts level) and its lone test: the p-value and
    the window it came from (1 night, no change and no reference when no window could be tried)."""

    windows: tuple[Window, ...] = ()
    mix: dict[int, float] = field(default_factory=dict)
    pvalue: float = 1.0
    change: float = 0.0
    nights: int = 1
    ref_runs: int = 0

    def of(self, nights: int) -> Window | None:
        """The window of ``nights`` nights, if it was tried."""
        return window_of(self.windows, nights)


@dataclass(frozen=True)
class WindowedSeries:
    """A calibrated series and its window test: what the family tests and the verdict read."""

    series: CalibratedSeries
    test: WindowTest


def window_test(c: CalibratedSeries, recent: int, min_ref: int, tail: Tail) -> WindowedSeries:
    """The series' windows of 1 .. ``recent`` nights whose reference has ``min_ref`` runs, and its lone test."""
    series = [*c.logs, c.tonight]
    tried, mix = windows(series, c.hosts or [""] * len(series), c.base, recent, min_ref, c.sigma, c.host_sigma, c.far)
    lone = lone_window(tried, tail)
    if lone is None:
        return WindowedSeries(c, WindowTest(tuple(tried), mix))
    p, w = lone
    return WindowedSeries(c, WindowTest(tuple(tried), mix, p, w.change, w.nights, w.ref_runs))
