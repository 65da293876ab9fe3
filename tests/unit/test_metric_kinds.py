"""Every metric a suite promises has a kind declared where it is made, and the declarations hold up.

The kinds (``deterministic``, ``sampled``, ``timed``) are declared by each suite beside its metrics;
drift reads them instead of guessing from names. These tests check that every promised metric of
every suite in the matrix, at every scale, has one; and that recording an undeclared metric fails.
That every metric declared deterministic did not move between recorded runs is a test of the recorded
tier (tests/recorded/test_deterministic_metrics.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from jsonbench.dataset.measurement import METRIC_KINDS
from jsonbench.matrix import load_matrix
from jsonbench.suites import get_suite
from jsonbench.suites.base import UndeclaredMetric, WorkloadContext


def _suites() -> list[str]:
    return sorted(load_matrix().suites)


@pytest.mark.parametrize("name", _suites())
def test_every_promised_metric_has_a_declared_kind(name: str) -> None:
    """A suite promises the same metrics at every scale (``expected_metrics`` takes none), each with its kind."""
    suite = get_suite(name)
    promised = suite.expected_metrics()
    assert promised, f"{name} promises no metric"
    for workload, metric in promised:
        assert suite.metric_kind(workload, metric) in METRIC_KINDS
    declared = {(w, m) for w, metrics in suite.metric_kinds().items() for m in metrics}
    assert declared == set(promised), f"{name}: declared and promised metrics differ: {declared ^ set(promised)}"
    for metric in ("duration", "peak_rss", "disk_peak"):
        assert suite.metric_kind("_cell", metric) in METRIC_KINDS
    with pytest.raises(UndeclaredMetric, match="no kind"):
        suite.metric_kind(suite.workloads[0], "no_such_metric")


def test_recording_an_undeclared_metric_fails_and_a_declared_one_carries_its_kind() -> None:
    suite = get_suite("large_document_update")
    ctx: WorkloadContext[Any] = WorkloadContext(cell=None, session=None, workload="rel_big", kinds=suite.metric_kind)  # type: ignore[arg-type]
    ctx.record("update_time", "ms", [1.0, 2.0])
    ctx.not_applicable([("wal_bytes", "bytes")], "engine build lacks it")
    assert [(m.metric, m.kind) for m in ctx.measurements] == [("update_time", "timed"), ("wal_bytes", "sampled")]
    with pytest.raises(UndeclaredMetric):
        ctx.record("update_tme", "ms", 1.0)


def test_metrics_that_vary_are_not_declared_deterministic() -> None:
    """ANALYZE's estimates, WAL bytes and the HOT counts of timed runs vary from run to run: judged as facts, they failed honest runs."""
    cat = get_suite("catalogue")
    for metric in ("estimated_rows_before", "error_factor_before", "estimate_ratio_before", "estimated_rows_after"):
        assert cat.metric_kind("planner", metric) == "sampled"
    for metric in ("n_tup_hot_upd", "hot_share", "wal_bytes_per_update"):
        assert cat.metric_kind("updates", metric) == "sampled"
    assert get_suite("large_document_update").metric_kind("json_big", "wal_bytes") == "sampled"
