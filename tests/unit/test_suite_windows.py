"""The suite contract's timing helpers: a short disturbed window is taken once more (when the workload allows), and set aside."""

from __future__ import annotations

from typing import Any

import pytest

from jsonbench.host.load import WindowLoad
from jsonbench.suites import base
from jsonbench.suites.base import WorkloadContext


class FakeSampler:
    """Hands out the next window's verdict from a script (True = quiet)."""

    def __init__(self, verdicts: list[bool]) -> None:
        self.verdicts = verdicts

    def __call__(self) -> FakeSampler:
        return self

    def start(self) -> None:
        pass

    def stop(self) -> WindowLoad:
        quiet = self.verdicts.pop(0)
        return WindowLoad(seconds=0.0, other_cpu=0.0 if quiet else 0.5, steal=0.0, load_1m=1.0, quiet=quiet)


def _ctx(verdicts: list[bool]) -> WorkloadContext[Any]:
    return WorkloadContext(cell=None, session=None, workload="w", sampler=FakeSampler(verdicts))  # type: ignore[arg-type]  # neither is used by the helpers


def test_a_disturbed_short_window_is_taken_again_and_set_aside() -> None:
    ctx = _ctx([False, True])
    calls: list[str] = []
    result, win = ctx.measure(lambda: calls.append("run") or len(calls), retry_disturbed=True, prepare=lambda: calls.append("prepare"))
    assert calls == ["prepare", "run", "prepare", "run"] and result == 4
    assert not win.disturbed
    assert [w.quiet for w in ctx.windows] == [True]  # the row is marked by the window whose value it carries
    assert [w.quiet for w in ctx.set_aside] == [False] and ctx.retries == 1


def test_retried_once_only_then_marked() -> None:
    ctx = _ctx([False, False])
    ms = ctx.timed(lambda: None, base.MEASURE, retry_disturbed=True)
    assert ms >= 0 and [w.quiet for w in ctx.windows] == [False] and ctx.retries == 1


def test_destructive_measurements_are_never_retried() -> None:
    ctx = _ctx([False])
    calls = []
    ctx.measure(lambda: calls.append(1))
    assert calls == [1] and [w.quiet for w in ctx.windows] == [False] and ctx.retries == 0


def test_long_windows_are_marked_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "RETRY_MAX_S", -1.0)
    ctx = _ctx([False])
    ctx.measure(lambda: None, retry_disturbed=True)
    assert [w.quiet for w in ctx.windows] == [False] and ctx.retries == 0


def test_load_windows_are_timed_not_sampled() -> None:
    ctx = _ctx([])
    assert ctx.timed(lambda: None, base.LOAD) >= 0
    assert ctx.windows == [] and "load" in ctx.phases


def test_the_loaded_data_is_fingerprinted_once_before_the_first_measurement_after_a_load() -> None:
    state = {"rows": 0}
    seen: list[str] = []

    def fingerprint() -> str:
        seen.append(f"rows={state['rows']}")
        return seen[-1]

    ctx = WorkloadContext(cell=None, session=None, workload="w", fingerprint=fingerprint)  # type: ignore[arg-type]  # unused here
    ctx.timed(lambda: None, base.MEASURE)
    assert ctx.fingerprints == [], "no load yet: nothing loaded to fingerprint"
    ctx.timed(lambda: state.update(rows=10), base.LOAD)
    ctx.timed(lambda: state.update(rows=5), base.MEASURE)  # the measurement changes the rows; the hash came before it
    ctx.timed(lambda: state.update(rows=10), base.LOAD)
    ctx.timed(lambda: None, base.MEASURE)
    assert ctx.fingerprints == ["rows=10"] and seen == ["rows=10"], "once, the rows as loaded"
    assert "fingerprint" not in ctx.phases, "outside every window"


def test_without_a_fingerprinter_nothing_is_fingerprinted() -> None:
    ctx = WorkloadContext(cell=None, session=None, workload="w")  # type: ignore[arg-type]  # unused here
    ctx.timed(lambda: None, base.LOAD)
    ctx.timed(lambda: None, base.MEASURE)
    assert ctx.fingerprints == []
