"""The comparison's judge over synthetic staged values: failed and foreign starts drop their pair and say so,
staged looks keep a decided metric's verdict, deterministic facts are compared exactly. No engine, no timing."""

from __future__ import annotations

import math

import numpy as np
import pytest

from jsonbench.compare.judge import CHANGED, DIFFERENT, SAME, VARIES, StartResult, judge, table, to_json, undecided, usable_pairs
from jsonbench.dataset.measurement import Measurement
from jsonbench.history.stats.paired import pair_order, stage_levels

SUITE = "s"


def _starts(
    pairs: int, shift: float, noise: float, seed: int = 1, size_b: int = 1000, skip: tuple[tuple[int, str], ...] = ()
) -> list[StartResult]:
    """Each pair's two starts: read_time (ms) around 100 with log-normal noise, B ``shift`` away; a size fact; a ratio."""
    rng = np.random.default_rng(seed)
    out = []
    for pair in range(pairs):
        for arm in ("A", "B"):
            if (pair, arm) in skip:
                continue
            base = 100 * (1 + shift if arm == "B" else 1)
            ms = (
                Measurement.of("w", "v", "read_time", "ms", (base * np.exp(rng.normal(0, noise, 3))).tolist(), kind="timed"),
                Measurement.of(
                    "w", "v", "speedup", "x", float(2 * (1 + shift if arm == "B" else 1) * math.exp(rng.normal(0, noise))), kind="timed"
                ),
                Measurement.of("w", "v", "table_bytes", "bytes", float(size_b if arm == "B" else 1000), kind="deterministic"),
                Measurement.not_applicable("w", "v", "lz4_bytes", "bytes", "no lz4", kind="deterministic"),
            )
            out.append(StartResult(pair, arm, SUITE, ms, "fp", f"2026-01-01T00:{pair:02d}:0{0 if arm == 'A' else 1}"))
    return out


def _planned(pairs: int) -> dict[int, tuple[str, str]]:
    return dict(enumerate(pair_order(pairs, 0)))


def test_a_ten_percent_slower_b_is_a_regression_and_the_same_fact_is_same() -> None:
    judged, pairs = judge(_starts(12, 0.10, 0.01), _planned(12), [SUITE], stage_levels([12]), {}, 0.02)
    by = {j.metric: j for j in judged}
    assert by["read_time"].verdict == "regression" and by["read_time"].comparison is not None
    assert by["read_time"].comparison.estimate == pytest.approx(1.10, abs=0.02)
    assert by["speedup"].verdict == CHANGED  # a ratio of timings has no worse side
    assert by["table_bytes"].verdict == SAME and by["table_bytes"].fact is not None
    assert "lz4_bytes" not in by  # not applicable on both builds: nothing to compare
    assert pairs.usable == tuple(range(12)) and not pairs.dropped
    assert "regression" in table(judged) and to_json(by["read_time"])["pairs_used"] == 12


def test_no_change_is_equivalent_and_a_different_fact_is_named_with_both_values() -> None:
    judged, _ = judge(_starts(12, 0.0, 0.002, size_b=1024), _planned(12), [SUITE], stage_levels([12]), {}, 0.02)
    by = {j.metric: j for j in judged}
    assert by["read_time"].verdict == "equivalent"
    assert by["table_bytes"].verdict == DIFFERENT and by["table_bytes"].fact is not None
    assert "A 1000, B 1024 (B - A +24" in by["table_bytes"].fact.text


def test_a_failed_start_drops_its_whole_pair_and_says_which() -> None:
    starts = _starts(8, 0.10, 0.01, skip=((3, "B"),))
    judged, pairs = judge(starts, _planned(8), [SUITE], stage_levels([8]), {}, 0.02)
    assert 3 not in pairs.usable and "B/s did not complete" in pairs.dropped[3]
    read = next(j for j in judged if j.metric == "read_time")
    assert read.comparison is not None and read.comparison.pairs == 7 and read.pairs_dropped == (3,)
    fact = next(j for j in judged if j.metric == "table_bytes")
    assert fact.pairs_dropped == (3,)


def test_a_start_on_other_data_drops_its_pair() -> None:
    starts = _starts(7, 0.0, 0.01)
    starts = [
        StartResult(s.pair, s.arm, s.suite, s.measurements, "other" if (s.pair, s.arm) == (2, "A") else s.fingerprint, s.started_at)
        for s in starts
    ]
    pairs = usable_pairs(starts, _planned(7), [SUITE])
    assert 2 not in pairs.usable and "fingerprint differs" in pairs.dropped[2]


def test_the_first_arm_is_the_one_that_started_first() -> None:
    starts = _starts(6, 0.0, 0.01)
    swapped = [
        StartResult(s.pair, s.arm, s.suite, s.measurements, s.fingerprint, "2026-01-02" if s.arm == "A" and s.pair == 0 else s.started_at)
        for s in starts
    ]
    assert usable_pairs(swapped, _planned(6), [SUITE]).first[0] == "B"
    assert usable_pairs(starts, _planned(6), [SUITE]).first[0] == "A"


def test_a_noisy_metric_is_inconclusive_at_the_first_look_with_the_pairs_it_needs() -> None:
    stages = stage_levels([10, 20, 40])
    judged, _ = judge(_starts(10, 0.01, 0.05), _planned(10), [SUITE], stages, {}, 0.02)
    read = next(j for j in judged if j.metric == "read_time")
    assert read.verdict == "inconclusive" and read.decided_at == 10 and read.comparison is not None
    assert read.comparison.level == pytest.approx(stages[0].level) and (read.comparison.pairs_needed or 0) > 10
    assert read in undecided(judged)


def test_a_metric_decided_at_an_early_look_keeps_its_verdict() -> None:
    """read_time (10 % slower, 1 % noise) is decided at the first look of 10 pairs and keeps that look's level."""
    stages = stage_levels([10, 20])
    judged, _ = judge(_starts(20, 0.10, 0.01), _planned(20), [SUITE], stages, {}, 0.02)
    read = next(j for j in judged if j.metric == "read_time")
    assert read.verdict == "regression" and read.decided_at == 10
    assert read.comparison is not None and read.comparison.pairs == 10


def test_a_fact_that_varies_within_an_arm_says_so() -> None:
    starts = _starts(6, 0.0, 0.01)
    bumped = []
    for s in starts:
        ms = tuple(
            Measurement.of("w", "v", "table_bytes", "bytes", 1001.0, kind="deterministic")
            if (m.metric == "table_bytes" and s.pair == 1 and s.arm == "A")
            else m
            for m in s.measurements
        )
        bumped.append(StartResult(s.pair, s.arm, s.suite, ms, s.fingerprint, s.started_at))
    judged, _ = judge(bumped, _planned(6), [SUITE], stage_levels([6]), {}, 0.02)
    assert next(j for j in judged if j.metric == "table_bytes").verdict == VARIES


def test_a_metric_margin_from_an_aa_run_is_used() -> None:
    judged, _ = judge(_starts(12, 0.10, 0.01), _planned(12), [SUITE], stage_levels([12]), {"s/w/v/read_time": 0.2}, 0.02)
    read = next(j for j in judged if j.metric == "read_time")
    assert read.comparison is not None and read.comparison.margin == 0.2 and read.verdict == "small"


def test_a_timing_neither_build_can_produce_is_left_out_not_called_inconclusive() -> None:
    starts = [
        StartResult(
            s.pair,
            s.arm,
            s.suite,
            (*s.measurements, Measurement.not_applicable("w", "json", "gin_build_time", "ms", "no GIN on json", kind="timed")),
            s.fingerprint,
            s.started_at,
        )
        for s in _starts(12, 0.0, 0.01)
    ]
    judged, _ = judge(starts, _planned(12), [SUITE], stage_levels([10, 12]), {}, 0.02)
    by = {(j.variant, j.metric): j for j in judged}
    assert ("json", "gin_build_time") not in by  # no pairs would ever decide it: not a metric left undecided
    assert ("v", "read_time") in by and by[("v", "read_time")].comparison is not None  # the rest judged as ever
