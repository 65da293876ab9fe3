"""The expectation files and the pure frame builders (findings, drift), without Great Expectations runs."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from jsonbench.checks.findings import finding_value
from jsonbench.checks.library import expectation, load_library, row_condition
from jsonbench.history.drift import drift_frame
from jsonbench.history.rules import Rule, rule_for
from jsonbench.matrix import load_matrix
from jsonbench.suites import get_suite


def _promised(suite: str) -> set[tuple[str, str]]:
    return set(get_suite(suite).expected_metrics())


#: Metrics the checks may rely on before the suites publish them (PLAN.md contract 10): a finding
#: reading one is not applicable (with the reason) until the suite promises it.
PENDING = {("catalogue", "scan", "workers_launched")}


def test_every_finding_and_seed_figure_names_a_promised_metric() -> None:
    lib = load_library()
    assert "large_document_update" in lib.reproduction and "large_document_update" in lib.seeds
    for suite, definition in lib.reproduction.items():
        assert suite in load_matrix().suites, f"{suite}.reproduction.json names no registered suite"
        promised = _promised(suite)
        for f in definition["findings"]:
            assert "seed" in f and f.get("bands"), f"{suite}/{f['id']}: bands per scale next to the seed figure"
            for scale, band in f["bands"].items():
                assert band.get("reason") or band.get("not_applicable") or band.get("gate"), f"{suite}/{f['id']}@{scale}: document the band"
            for term in (f.get("numerator") or []) + (f.get("denominator") or []):
                assert (term["workload"], term["metric"]) in promised or (suite, term["workload"], term["metric"]) in PENDING, (
                    f"{suite}/{f['id']}: {term} is not an expected metric"
                )
    for suite, seed in lib.seeds.items():
        promised = _promised(suite)
        for fig in seed["figures"]:
            assert (fig["workload"], fig["metric"]) in promised, f"{suite}.seed.json: {fig}"


def test_seed_004_figures_are_the_articles() -> None:
    figs = {(f["workload"], f["metric"]): f["value"] for f in load_library().seeds["large_document_update"]["figures"]}
    assert [figs[(w, "update_time")] for w in ("rel_small", "json_small", "rel_big", "json_big", "json_big_idx")] == [9, 10, 8, 1090, 1070]
    assert [figs[(w, "n_tup_hot_upd")] for w in ("rel_small", "json_small", "rel_big", "json_big", "json_big_idx")] == [
        1122,
        1110,
        1096,
        1096,
        0,
    ]
    assert figs[("json_big", "toast_growth")] == 30 * 1024 * 1024


def test_where_shorthand_becomes_a_gx_row_condition() -> None:
    cond = row_condition({"status": "ok", "unit": {"in": ["ms", "s"]}})
    assert cond.type == "and" and len(cond.conditions) == 2
    exp = expectation(
        {"type": "expect_column_values_to_be_between", "kwargs": {"column": "value", "min_value": 0}, "where": {"unit": "bytes"}}
    )
    assert exp.row_condition.column.name == "unit" and exp.row_condition.parameter == "bytes"
    with pytest.raises(ValueError):
        row_condition({"unit": {"like": "b%"}})


def test_finding_value_ratio_product_and_problems() -> None:
    values = {
        ("a", "default", "t"): (100.0, "ok"),
        ("b", "default", "t"): (4.0, "ok"),
        ("b", "default", "n"): (2.0, "ok"),
        ("z", "default", "t"): (0.0, "ok"),
        ("na", "default", "t"): (None, "not_applicable"),
    }
    f = {
        "numerator": [{"workload": "a", "metric": "t"}],
        "denominator": [{"workload": "b", "metric": "t"}, {"workload": "b", "metric": "n"}],
    }
    assert finding_value(values, f)[0] == 12.5
    assert (
        finding_value(values, {"numerator": [{"workload": "a", "metric": "t"}], "denominator": [{"workload": "z", "metric": "t"}]})[1]
        == "denominator is zero"
    )
    assert "not_applicable" in finding_value(values, {"numerator": [{"workload": "na", "metric": "t"}]})[1]
    assert "not published" in finding_value(values, {"numerator": [{"workload": "q", "metric": "t"}]})[1]


def _rows(
    run: int,
    value: float,
    metric: str = "wal_bytes",
    unit: str = "bytes",
    samples: list[float] | None = None,
    quiet: bool | None = None,
    kind: str | None = "",
) -> dict:
    """One measurement row; its ``metric_kind`` is ``kind``, by default deterministic for bytes and timed otherwise (None: no column)."""
    row = {
        "run_id": f"r{run}",
        "logical_date": pd.Timestamp(f"2026-11-{run + 1:02d}T02:00:00Z"),
        "hardware_label": "local",
        "scale": "smoke",
        "suite": "s",
        "status": "ok",
        "engine_id": "pg",
        "engine_version": "17",
        "engine_build": "b",
        "workload": "w",
        "variant": "default",
        "metric": metric,
        "unit": unit,
        "value": value,
        "spread": 0.0,
        "samples": samples if samples is not None else [value],
    }
    if quiet is not None:
        row["quiet"] = quiet
    if kind is not None:
        row["metric_kind"] = kind or ("deterministic" if unit == "bytes" else "timed")
    return row


POLICY = {
    "min_history": 4,
    "deterministic_min_history": 1,
    "window": 30,
    "recent_runs": 2,
    "max_pvalue": 0.001,
    "points": "best",
    "min_magnitude": {"default": 0.5},
    "tolerance": 0.02,
}


def _judge(
    history: list[float], tonight: float, metric: str = "wal_bytes", unit: str = "bytes", quiet: list[bool | None] | None = None
) -> pd.Series:
    q = quiet or [None] * (len(history) + 1)
    rows = [_rows(i, v, metric, unit, quiet=q[i]) for i, v in enumerate(history)] + [
        _rows(len(history), tonight, metric, unit, quiet=q[-1])
    ]
    ds = pd.DataFrame(rows)
    run = {"run_id": f"r{len(history)}", "logical_date": rows[-1]["logical_date"], "hardware_label": "local", "scale": "smoke"}
    return drift_frame(ds[ds["run_id"] == run["run_id"]], ds, run, "s", POLICY).iloc[0]


def test_deterministic_drift_is_a_tight_tolerance_from_one_earlier_run() -> None:
    assert _judge([], 1000.0)["verdict"] == "insufficient_history"
    assert _judge([1000.0], 1000.0)["verdict"] == "ok"
    row = _judge([1000.0, 1000.0], 1100.0)
    assert row["verdict"] == "drift" and row["method"] == "unmoved" and row["metric_kind"] == "deterministic"
    cps = json.loads(row["change_points"])
    assert cps == [
        {
            "run_id": "r2",
            "logical_date": "2026-11-03T02:00:00+00:00",
            "metric_before": 1000.0,
            "metric_after": 1100.0,
            "relative_change": 0.1,
            "pvalue": None,
        }
    ]
    assert _judge([1000.0, 1000.0], 1015.0)["verdict"] == "drift", "a fact that never moved has earned no tolerance"
    moved = _judge([1000.0, 1001.0], 1015.0)
    assert moved["verdict"] == "ok" and moved["method"] == "relative_tolerance", "one that moved keeps it: within 2 %"
    assert _judge([1000.0, 1001.0], 900.0)["verdict"] == "drift", "a fall counts as much as a rise"


def test_the_kind_comes_from_the_row_else_the_suite_never_from_the_name() -> None:
    """A sampled metric is judged statistically, however much it looks like a count; a row without the
    column asks the suite's declaration; nobody declaring one means statistical, with a note."""
    ds = pd.DataFrame(
        [
            _rows(0, 3443.0, "estimated_rows_before", "rows", kind="sampled"),
            _rows(1, 3943.0, "estimated_rows_before", "rows", kind="sampled"),
        ]
    )
    run = {"run_id": "r1", "logical_date": ds["logical_date"].iloc[-1], "hardware_label": "local", "scale": "smoke"}
    row = drift_frame(ds[ds["run_id"] == "r1"], ds, run, "s", POLICY).iloc[0]
    assert row["metric_kind"] == "timing" and row["declared_kind"] == "sampled" and row["verdict"] == "insufficient_history"

    old = pd.DataFrame([_rows(0, 1000.0, "rows", "rows", kind=None), _rows(1, 1100.0, "rows", "rows", kind=None)])
    asked: list[tuple[str, str]] = []

    def kinds(workload: str, metric: str) -> str:
        asked.append((workload, metric))
        return "deterministic"

    row = drift_frame(old[old["run_id"] == "r1"], old, run, "s", POLICY, kinds=kinds).iloc[0]  # type: ignore[arg-type]
    assert asked == [("w", "rows")] and row["declared_kind"] == "deterministic" and row["verdict"] == "drift"
    row = drift_frame(old[old["run_id"] == "r1"], old, run, "s", POLICY, kinds=lambda w, m: None).iloc[0]
    assert row["metric_kind"] == "timing" and row["declared_kind"] is None and "no declared kind" in row["note"]


def test_rule_for_reads_the_kind_and_a_suites_own_tolerance() -> None:
    policy = {**POLICY, "tolerances": {"rows": 0.1, "planner/rows": {"tolerance": 0.0, "floor": 2.0}}}
    assert rule_for(policy, "s", "w", "v", "bytes_x", "bytes", "deterministic") == Rule("deterministic", 0.02, declared="deterministic")
    assert rule_for(policy, "s", "w", "v", "rows", "rows", "deterministic").tolerance == 0.1
    assert rule_for(policy, "s", "planner", "v", "rows", "rows", "deterministic") == Rule(
        "deterministic", 0.0, 2.0, declared="deterministic"
    )
    for kind in ("sampled", "timed"):
        rule = rule_for(policy, "s", "w", "v", "rows", "rows", kind)  # type: ignore[arg-type]
        assert rule.kind == "statistical" and rule.declared == kind
    # Without a kind, the suite's declaration: the catalogue's planner estimates are sampled, its sizes facts.
    assert rule_for(policy, "catalogue", "planner", "stock_rel", "estimated_rows_before", "rows").declared == "sampled"
    assert rule_for(policy, "catalogue", "storage", "doc", "heap_bytes", "bytes").kind == "deterministic"


otava = pytest.mark.skipif(
    not __import__("jsonbench.history.changepoints", fromlist=["ready"]).ready(),
    reason="Apache Otava's venv is not installed (./bin/setup)",
)


@otava
def test_statistical_drift_uses_otava_and_names_the_run_where_the_change_starts() -> None:
    steady = [10.0, 10.3, 9.8, 10.1, 10.2, 9.9]
    assert _judge(steady[:3], 10.0, "update_time", "ms")["verdict"] == "insufficient_history"
    ok = _judge(steady, 10.4, "update_time", "ms")
    assert ok["verdict"] == "ok" and ok["method"].startswith("otava") and ok["judged"] == "yes"
    slow = _judge(steady, 20.5, "update_time", "ms")
    assert slow["verdict"] == "drift" and slow["drift_score"] > 1
    cp = json.loads(slow["change_points"])[-1]
    assert (
        cp["run_id"] == "r6"
        and cp["metric_before"] == pytest.approx(10.05, rel=0.01)
        and cp["metric_after"] == 20.5
        and cp["pvalue"] < 0.001
    )
    # A change seen first two runs ago is still reported, and still drift (recent_runs 2) ...
    later = _judge(steady + [20.5], 20.4, "update_time", "ms")
    assert later["verdict"] == "drift" and json.loads(later["change_points"])[-1]["run_id"] == "r6"
    # ... but no longer once it is older than recent_runs: it is the new normal, listed, not alarmed.
    old = _judge(steady + [20.5, 20.4, 20.6], 20.5, "update_time", "ms")
    assert old["verdict"] == "ok" and json.loads(old["change_points"])[-1]["run_id"] == "r6"


@otava
def test_a_busy_hour_is_not_judged_and_leaves_the_history() -> None:
    steady = [10.0, 10.3, 9.8, 10.1, 10.2, 9.9]
    busy = _judge(steady, 25.0, "update_time", "ms", quiet=[True] * 6 + [False])
    assert busy["verdict"] == "disturbed" and busy["judged"] == "no"
    # The busy run is not in the next night's history: a quiet night after it is judged against quiet runs only.
    rows = [_rows(i, v, "update_time", "ms", quiet=True) for i, v in enumerate(steady)] + [
        _rows(6, 25.0, "update_time", "ms", quiet=False),
        _rows(7, 10.1, "update_time", "ms", quiet=True),
    ]
    ds = pd.DataFrame(rows)
    run = {"run_id": "r7", "logical_date": rows[-1]["logical_date"], "hardware_label": "local", "scale": "smoke"}
    row = drift_frame(ds[ds["run_id"] == "r7"], ds, run, "s", POLICY).iloc[0]
    assert row["verdict"] == "ok" and "r6" not in json.loads(row["history_runs"])
    # Without the column (older runs), rows count as quiet.
    assert _judge(steady, 10.1, "update_time", "ms")["quiet"] == "unknown"


def test_finding_term_statistic_reads_the_samples() -> None:
    values = {("a", "default", "t"): (3.5, "ok"), ("a", "default", "t", "samples"): ([5.9, 1.1], "ok"), ("b", "default", "t"): (1.0, "ok")}
    best = {"numerator": [{"workload": "a", "metric": "t", "statistic": "min"}], "denominator": [{"workload": "b", "metric": "t"}]}
    assert finding_value(values, best)[0] == 1.1
    assert finding_value(values, {**best, "numerator": [{"workload": "a", "metric": "t"}]})[0] == 3.5
    with pytest.raises(ValueError):
        finding_value(values, {"numerator": [{"workload": "a", "metric": "t", "statistic": "p99"}]})


def test_a_variant_the_previous_run_published_and_tonight_lacks_is_missing() -> None:
    rows = [_rows(0, 1000.0), {**_rows(0, 5.0, "update_time", "ms"), "variant": "v2"}, _rows(1, 1000.0)]
    ds = pd.DataFrame(rows)
    run = {"run_id": "r1", "logical_date": rows[-1]["logical_date"], "hardware_label": "local", "scale": "smoke"}
    frame = drift_frame(ds[ds["run_id"] == "r1"], ds, run, "s", POLICY)
    missing = frame[frame["verdict"] == "missing"]
    assert list(zip(missing["variant"], missing["metric"], strict=True)) == [("v2", "update_time")]
    assert missing["drift_score"].iloc[0] > 1 and missing["metric_kind"].iloc[0] == "deterministic" and "r0" in missing["note"].iloc[0]


def test_a_variant_the_policy_retired_is_reported_as_retired_not_lost() -> None:
    """A renamed series (the fixed-count runs' one client) leaves its old name in the history: not a failure."""
    rows = [_rows(0, 1000.0), {**_rows(0, 5.0, "update_time", "ms"), "variant": "v2"}, _rows(1, 1000.0)]
    ds = pd.DataFrame(rows)
    run = {"run_id": "r1", "logical_date": rows[-1]["logical_date"], "hardware_label": "local", "scale": "smoke"}
    workload = rows[1]["workload"]
    policy = {**POLICY, "retired_variants": [{"suite": "s", "workload": workload, "variants": ["v2"], "successor": "v3", "why": "renamed"}]}
    frame = drift_frame(ds[ds["run_id"] == "r1"], ds, run, "s", policy)
    gone = frame[frame["variant"] == "v2"].iloc[0]
    assert (gone["verdict"], gone["judged"]) == ("excluded", "no") and gone["note"] == "retired by the harness: renamed (now v3)"
    # Another suite's retirement does not hide this suite's lost variant.
    other = {**POLICY, "retired_variants": [{"suite": "t", "workload": workload, "variants": ["v2"], "why": "renamed"}]}
    assert drift_frame(ds[ds["run_id"] == "r1"], ds, run, "s", other).set_index("variant").loc["v2", "verdict"] == "missing"


@otava
def test_a_row_timed_outside_the_measure_windows_takes_its_cells_quiet_verdict() -> None:
    steady = [10.0, 10.3, 9.8, 10.1, 10.2, 9.9]
    rows = [_rows(i, v, "load_time", "ms") for i, v in enumerate(steady)]
    busy_cell = [_rows(6, 30.0, "load_time", "ms"), {**_rows(6, 5.0, "update_time", "ms", quiet=False)}]
    ds = pd.DataFrame(rows + busy_cell)
    run = {"run_id": "r6", "logical_date": busy_cell[0]["logical_date"], "hardware_label": "local", "scale": "smoke"}
    frame = drift_frame(ds[ds["run_id"] == "r6"], ds, run, "s", POLICY).set_index("metric")
    assert frame.loc["load_time", "verdict"] == "disturbed", "the load ran in a cell whose measure windows were busy"


def test_a_series_whose_design_changed_tonight_says_why_its_history_restarts() -> None:
    """The real drift frame: two earlier runs of the seed's read order, tonight interleaved. Tonight's series has
    no history of its design, and its note says which runs were set aside and why."""
    rows = [_rows(i, 1000.0) | {"scale_params": json.dumps({"read_order": "sequential"})} for i in range(2)]
    rows.append(_rows(2, 1000.0) | {"scale_params": json.dumps({"read_order": "interleaved"})})
    ds = pd.DataFrame(rows)
    run = {"run_id": "r2", "logical_date": rows[-1]["logical_date"], "hardware_label": "local", "scale": "smoke"}
    row = drift_frame(ds[ds["run_id"] == "r2"], ds, run, "s", POLICY).iloc[0]
    assert row["verdict"] == "insufficient_history", row.to_dict()
    assert "its history restarts: 2 earlier run(s) of pg" in row["note"] and "read_order sequential -> interleaved" in row["note"], row[
        "note"
    ]
    # the same design keeps its history, and says nothing of a restart
    same = pd.DataFrame([r | {"scale_params": json.dumps({"read_order": "interleaved"})} for r in rows])
    row = drift_frame(same[same["run_id"] == "r2"], same, run, "s", POLICY).iloc[0]
    assert row["verdict"] == "ok" and "restarts" not in str(row["note"]), row.to_dict()
