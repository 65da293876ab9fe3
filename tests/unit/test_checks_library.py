"""The expectation files and the pure frame builders (findings, drift), without Great Expectations runs."""

from __future__ import annotations

import pandas as pd
import pytest

from jsonbench.checks.drift import drift_frame
from jsonbench.checks.findings import finding_value
from jsonbench.checks.library import expectation, load_library, row_condition
from jsonbench.matrix import load_matrix
from jsonbench.suites import get_suite


def _promised(suite: str) -> set[tuple[str, str]]:
    from jsonbench.matrix import load_matrix

    params = load_matrix().raw["scales"]["smoke"].get(suite, {})
    return set(get_suite(suite).expected_metrics(params))


def test_every_finding_and_seed_figure_names_a_promised_metric() -> None:
    lib = load_library()
    assert "large_document_update" in lib.reproduction and "large_document_update" in lib.seeds
    for suite, definition in lib.reproduction.items():
        assert suite in load_matrix().suites, f"{suite}.reproduction.json names no registered suite"
        promised = _promised(suite)
        for f in definition["findings"]:
            assert f.get("band_reason") and "seed" in f, f"{suite}/{f['id']}: document the band next to its seed figure"
            band = f["band"]
            assert band.get("min") is None or band.get("max") is None or band["min"] <= band["max"]
            for term in (f.get("numerator") or []) + (f.get("denominator") or []):
                assert (term["workload"], term["metric"]) in promised, f"{suite}/{f['id']}: {term} is not an expected metric"
    for suite, seed in lib.seeds.items():
        promised = _promised(suite)
        for fig in seed["figures"]:
            assert (fig["workload"], fig["metric"]) in promised, f"{suite}.seed.json: {fig}"


def test_seed_004_figures_are_the_articles() -> None:
    figs = {(f["workload"], f["metric"]): f["value"] for f in load_library().seeds["large_document_update"]["figures"]}
    assert [figs[(w, "update_time")] for w in ("rel_small", "json_small", "rel_big", "json_big", "json_big_idx")] == [9, 10, 8, 1090, 1070]
    assert [figs[(w, "n_tup_hot_upd")] for w in ("rel_small", "json_small", "rel_big", "json_big", "json_big_idx")] == [1122, 1110, 1096, 1096, 0]
    assert figs[("json_big", "toast_growth")] == 30 * 1024 * 1024


def test_where_shorthand_becomes_a_gx_row_condition() -> None:
    cond = row_condition({"status": "ok", "unit": {"in": ["ms", "s"]}})
    assert cond.type == "and" and len(cond.conditions) == 2
    exp = expectation({"type": "expect_column_values_to_be_between", "kwargs": {"column": "value", "min_value": 0}, "where": {"unit": "bytes"}})
    assert exp.row_condition.column.name == "unit" and exp.row_condition.parameter == "bytes"
    with pytest.raises(ValueError):
        row_condition({"unit": {"like": "b%"}})


def test_finding_value_ratio_product_and_problems() -> None:
    values = {("a", "default", "t"): (100.0, "ok"), ("b", "default", "t"): (4.0, "ok"), ("b", "default", "n"): (2.0, "ok"),
              ("z", "default", "t"): (0.0, "ok"), ("na", "default", "t"): (None, "not_applicable")}
    f = {"numerator": [{"workload": "a", "metric": "t"}], "denominator": [{"workload": "b", "metric": "t"}, {"workload": "b", "metric": "n"}]}
    assert finding_value(values, f)[0] == 12.5
    assert finding_value(values, {"numerator": [{"workload": "a", "metric": "t"}], "denominator": [{"workload": "z", "metric": "t"}]})[1] == "denominator is zero"
    assert "not_applicable" in finding_value(values, {"numerator": [{"workload": "na", "metric": "t"}]})[1]
    assert "not published" in finding_value(values, {"numerator": [{"workload": "q", "metric": "t"}]})[1]


def _rows(run: int, value: float, spread: float = 0.0, metric: str = "wal_bytes", unit: str = "bytes") -> dict:
    return {"run_id": f"r{run}", "logical_date": pd.Timestamp(f"2026-11-{run + 1:02d}T02:00:00Z"), "hardware_label": "local", "scale": "smoke",
            "suite": "s", "status": "ok", "engine_id": "pg", "engine_version": "17", "engine_build": "b", "workload": "w", "variant": "default",
            "metric": metric, "unit": unit, "value": value, "spread": spread}


POLICY = {"min_history": 3, "window": 10, "spread_factor": 1.0, "unstable_relative_spread": 0.25,
          "units": {"bytes": {"relative_threshold": 0.1, "absolute_floor": 100}, "ms": {"relative_threshold": 0.5, "absolute_floor": 1.0}}}


def _judge(history: list[tuple[float, float]], tonight: tuple[float, float], metric: str = "wal_bytes", unit: str = "bytes") -> pd.Series:
    rows = [_rows(i, v, s, metric, unit) for i, (v, s) in enumerate(history)] + [_rows(len(history), *tonight, metric, unit)]
    ds = pd.DataFrame(rows)
    run = {"run_id": f"r{len(history)}", "logical_date": rows[-1]["logical_date"], "hardware_label": "local", "scale": "smoke"}
    return drift_frame(ds[ds["run_id"] == run["run_id"]], ds, run, "s", POLICY).iloc[0]


def test_drift_verdicts() -> None:
    steady = [(1000.0, 10.0), (1020.0, 10.0), (990.0, 10.0)]
    assert _judge(steady[:2], (1000.0, 10.0))["verdict"] == "insufficient_history"
    assert _judge(steady, (1030.0, 10.0))["verdict"] == "ok"
    assert _judge(steady, (2000.0, 10.0))["verdict"] == "drift"
    assert _judge(steady, (500.0, 10.0))["verdict"] == "drift", "halving is as much a change as doubling"
    # 15 % up: past the 10 % threshold but inside a history that itself swings by 40 %: not drift.
    wide = [(800.0, 10.0), (1200.0, 10.0), (1000.0, 10.0)]
    assert _judge(wide, (1150.0, 10.0))["verdict"] == "ok"
    # A metric whose own samples spread by half its value is unstable, whatever it does.
    noisy = [(10.0, 5.0), (12.0, 6.0), (9.0, 5.0)]
    row = _judge(noisy, (30.0, 15.0), metric="update_time", unit="ms")
    assert row["verdict"] == "unstable" and row["judged"] == "no"


def test_finding_term_statistic_reads_the_samples() -> None:
    values = {("a", "default", "t"): (3.5, "ok"), ("a", "default", "t", "samples"): ([5.9, 1.1], "ok"), ("b", "default", "t"): (1.0, "ok")}
    best = {"numerator": [{"workload": "a", "metric": "t", "statistic": "min"}], "denominator": [{"workload": "b", "metric": "t"}]}
    assert finding_value(values, best)[0] == 1.1
    assert finding_value(values, {**best, "numerator": [{"workload": "a", "metric": "t"}]})[0] == 3.5
    with pytest.raises(ValueError):
        finding_value(values, {"numerator": [{"workload": "a", "metric": "t", "statistic": "p99"}]})
