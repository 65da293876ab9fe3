"""``jsonbench compare`` without running Airflow: its parameters, a bad one refused before Airflow starts, the table."""

from __future__ import annotations

import pytest

from jsonbench.compare.command import compare_command, conf_of, parse_settings, verdict_table
from jsonbench.compare.params import resolve_comparison


def test_the_command_line_values_make_a_valid_comparison() -> None:
    conf = conf_of(
        "postgres-17", "postgres-16", suites=["json_vs_jsonb"], scale="smoke", pairs=[10], margin=0.02, b_settings={"work_mem": "4MB"}
    )
    assert conf["pairs"] == 10 and conf["b"] == {"engine": "postgres-16", "settings": {"work_mem": "4MB"}} and "workloads" not in conf
    cfg = resolve_comparison(conf)
    assert cfg.b.settings == {"work_mem": "4MB"} and cfg.margin == 0.02
    assert parse_settings(["work_mem=4MB", "jit = off"], "--b-setting") == {"work_mem": "4MB", "jit": "off"}
    with pytest.raises(SystemExit, match="--b-setting"):
        parse_settings(["work_mem"], "--b-setting")


def test_a_bad_parameter_is_refused_naming_the_field_before_airflow_starts(capsys: pytest.CaptureFixture[str]) -> None:
    assert compare_command("postgres-17", "sqlite-3.54.1", suites=["json_vs_jsonb"], scale="smoke", pairs=6) == 2
    assert "b.engine" in capsys.readouterr().err


def test_the_verdict_table_names_each_metric_and_the_facts_that_differ() -> None:
    common = {"suite": "s", "variant": "v", "unit": "ms", "margin": 0.02, "pairs_used": 6, "dropped": '{"2": "start B/s did not complete"}'}
    rows = [
        {
            **common,
            "workload": "w",
            "metric": "t",
            "metric_kind": "timed",
            "estimate": 1.1,
            "interval_low": 1.05,
            "interval_high": 1.15,
            "verdict": "regression",
        },
        {
            **common,
            "workload": "w",
            "metric": "u",
            "metric_kind": "timed",
            "estimate": 1.0,
            "interval_low": None,
            "interval_high": None,
            "verdict": "inconclusive",
            "pairs_needed": 30,
        },
        {**common, "workload": "w", "metric": "size", "metric_kind": "deterministic", "verdict": "different", "fact": "size: A 1, B 2"},
        {**common, "workload": "w", "metric": "n", "metric_kind": "deterministic", "verdict": "same", "fact": "n: same"},
    ]
    text = verdict_table(rows)
    assert "w/v/t" in text and "regression" in text and "(about 30 pairs)" in text
    assert "1 of 2 the same" in text and "size: A 1, B 2" in text and "pair 2 dropped" in text
    # the precision: +/-4.7 % at 6 pairs, the one finite interval not within +/-3 %, about 15 pairs for it
    assert "  4.7%" in text and "0 of 1 metrics within +/-3%" in text and "about 15 for the median metric, 15 for the widest" in text
    from jsonbench.compare.page import render
    from jsonbench.compare.params import Arm

    page = render("manual__x", Arm("A", "postgres-17"), Arm("B", "postgres-17", {"jit": "off"}), rows)
    assert "<td>4.7%</td>" in page and "pairs for +/-3%: about 15 for the median metric" in page


def test_pair_time_sums_each_pairs_engine_cells_and_nothing_else() -> None:
    from jsonbench.compare.publish import pair_time

    def row(pair: int, workload: str, metric: str, value: float | None) -> dict[str, object]:
        return {"pair": pair, "workload": workload, "metric": metric, "value": value}

    rows = [
        row(0, "_cell", "duration", 10.0),
        row(0, "_cell", "duration", 12.0),  # the pair's other start
        row(0, "_cell", "peak_rss", 9e8),  # not a time
        row(0, "json_big", "duration", 99.0),  # a workload's metric, not the cell's
        row(1, "_cell", "duration", 8.0),
        row(2, "_cell", "duration", None),  # a start that never measured its cell
    ]
    assert pair_time(rows) == {"pairs": 2, "seconds": 30.0, "per_pair": 15.0}
    assert pair_time([]) == {"pairs": 0, "seconds": 0.0, "per_pair": 0.0}
