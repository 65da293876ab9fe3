"""The quiet-check command's verdict: both targets (>= 95 % quiet idle, >= 95 % busy beside the loop) or exit 1."""

from __future__ import annotations

from jsonbench_dev.quietcheck import Phase, report


def _phase(windows: int, quiet: int) -> Phase:
    return Phase("p", 0.10, windows=windows, quiet=quiet, legacy_quiet=0, other=[0.0], legacy_other=[0.5], seconds=[0.01, 0.02])


def test_both_targets_must_be_met() -> None:
    text, ok = report(_phase(100, 96), _phase(100, 3), cores=2)
    assert ok and "96.0% of 100 windows quiet" in text and "97.0% of 100 windows busy" in text
    assert not report(_phase(100, 94), _phase(100, 0), cores=2)[1], "idle below 95 % quiet"
    assert not report(_phase(100, 100), _phase(100, 6), cores=2)[1], "busy loop below 95 % busy"
