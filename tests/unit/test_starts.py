"""A cell's figures resting on several engine starts: the parameter, the split, the merge, the history.

The real thing (a real server restarted between a workload's starts) is in
``tests/integration/test_embedded_postgres.py::test_a_cell_of_two_starts_restarts_between_them_and_splits_its_repetitions``.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from jsonbench.cell import STARTS_KEY, starts_of
from jsonbench.dataset.measurement import Measurement, merge_starts
from jsonbench.engines.base import engine_for
from jsonbench.errors import ConfigError
from jsonbench.history.drift import same_input
from jsonbench.orchestration.plan import resolve
from jsonbench.suites import get_suite
from jsonbench.suites.base import shares, start_rounds


@pytest.mark.parametrize(
    ("total", "parts", "expected"),
    [(5, 1, [5]), (5, 2, [3, 2]), (2, 2, [1, 1]), (1, 2, [1, 1]), (7, 3, [3, 2, 2]), (3, 3, [1, 1, 1])],
)
def test_repetitions_are_shared_out_in_order_and_each_start_takes_at_least_one(total: int, parts: int, expected: list[int]) -> None:
    assert shares(total, parts) == expected


@pytest.mark.parametrize("bad", [0, 4, -1, "2", True, 1.5])
def test_a_wrong_starts_fails_before_any_work_naming_the_field(bad: object) -> None:
    with pytest.raises(ConfigError) as err:
        resolve({"starts": bad, "scale": "smoke"})
    assert err.value.field == "starts"


def test_the_scale_profile_gives_the_starts_and_the_parameter_overrides_it() -> None:
    """Two starts at laptop and full (include/matrix.yaml), one in the smoke preview; ``starts`` given wins."""
    from jsonbench.matrix import load_matrix

    scales = load_matrix().scales
    assert [scales[s].get("starts", 1) for s in ("smoke", "laptop", "full")] == [1, 2, 2]
    for scale in ("smoke", "laptop", "full"):
        assert resolve({"scale": scale}).starts == scales[scale].get("starts", 1), scale
        assert resolve({"scale": scale, "starts": None}).starts == scales[scale].get("starts", 1), scale
        assert resolve({"scale": scale, "starts": 1}).starts == 1, scale
        assert resolve({"scale": scale, "starts": 3}).starts == 3, scale


def test_one_start_is_the_cell_as_before_and_says_nothing(make_cells) -> None:
    """The default leaves every cell, and so every row's scale parameters, as they were before the parameter existed."""
    for cell in make_cells("catalogue", ["postgres-17"]) + make_cells("catalogue", ["postgres-17"], starts=1):
        assert cell.starts == 1 and STARTS_KEY not in cell.scale_params
        assert start_rounds(cell, get_suite("catalogue").repetition_params) == [cell]


def test_two_starts_split_the_run_s_and_the_suite_s_repetitions(make_cells) -> None:
    """At laptop the catalogue's 2 pgbench runs become one in each start, its 3 index builds 2 + 1, its 5 scans 3 + 2."""
    cell = make_cells("catalogue", ["postgres-17"], scale="laptop", starts=2)[0]
    assert cell.starts == 2 and cell.scale_params[STARTS_KEY] == 2
    first, second = start_rounds(cell, get_suite("catalogue").repetition_params)
    got = [
        (c.repetitions, c.scale_params["pgbench_repetitions"], c.scale_params["index_builds"], c.scale_params["scan_runs"])
        for c in (first, second)
    ]
    assert got == [(3, 1, 2, 3), (2, 1, 1, 2)]
    # Everything else is the cell's own, the starts included (what the rows carry).
    assert {k: v for k, v in first.scale_params.items() if k not in ("pgbench_repetitions", "index_builds", "scan_runs")} == {
        k: v for k, v in cell.scale_params.items() if k not in ("pgbench_repetitions", "index_builds", "scan_runs")
    }
    jvj = make_cells("json_vs_jsonb", ["postgres-17"], scale="laptop", starts=2)[0]
    assert [(c.repetitions, c.scale_params["read_runs"]) for c in start_rounds(jvj, get_suite("json_vs_jsonb").repetition_params)] == [
        (3, 3),
        (2, 2),
    ]


def test_the_adapters_say_whether_they_can_restart(make_cells) -> None:
    """What the plan task reads to give a cell several starts (the plan itself: the integration test): an embedded server
    restarts; SQLite, opened in its worker, cannot."""
    pg = make_cells("json_vs_jsonb", ["postgres-17"], starts=2)[0]
    lite = make_cells("sqlite_jsonb", ["sqlite-3.46.1"], starts=2)[0]
    assert engine_for(pg).can_restart is True
    assert engine_for(lite).can_restart is False


def _m(metric: str, samples: float | list[float], kind: str, aggregate: str = "median") -> Measurement:
    return Measurement.of("w", "v", metric, "ms", samples, aggregate=aggregate, kind=kind)  # type: ignore[arg-type]


def test_merging_starts_keeps_every_sample_and_says_how_many_each_start_gave() -> None:
    first = [_m("read_time", [10.0, 12.0, 11.0], "timed"), _m("table_bytes", [8192.0], "deterministic"), _m("ratio", 2.0, "timed")]
    second = [_m("read_time", [9.0, 9.5], "timed"), _m("table_bytes", [8192.0], "deterministic"), _m("ratio", 2.4, "timed")]
    merged = {m.metric: m for m in merge_starts([first, second])}
    assert [m.metric for m in merge_starts([first, second])] == ["read_time", "table_bytes", "ratio"]
    assert merged["read_time"].samples == (10.0, 12.0, 11.0, 9.0, 9.5) and merged["read_time"].extra["start_samples"] == [3, 2]
    assert merged["read_time"].value == 10.0
    assert merged["table_bytes"].samples == (8192.0,) and "starts_differ" not in merged["table_bytes"].extra
    # A single figure per start (a ratio measured within the start) becomes the median of the starts'.
    assert first[2].aggregate == "single"
    assert merged["ratio"].samples == (2.0, 2.4) and merged["ratio"].aggregate == "median"
    assert merge_starts([first]) == first


def test_a_fact_that_differs_between_starts_keeps_the_first_and_says_so() -> None:
    merged = merge_starts([[_m("table_bytes", [8192.0], "deterministic")], [_m("table_bytes", [16384.0], "deterministic")]])
    assert merged[0].samples == (8192.0,) and merged[0].extra["starts_differ"] == [[16384.0]]


def test_a_not_applicable_metric_stays_as_it_was() -> None:
    na = Measurement.not_applicable("w", "v", "gin_build_time", "ms", "json has none", kind="timed")
    assert merge_starts([[na], [na]]) == [na]


def test_drift_never_judges_one_design_against_the_other() -> None:
    """Figures of two starts are judged against two-start history only, and one start's against one start's (old rows included)."""
    one = json.dumps({"rows": 500})
    two = json.dumps({"rows": 500, STARTS_KEY: 2})
    hist = pd.DataFrame({"scale_params": [one, two, None, two], "value": [1.0, 2.0, 3.0, 4.0]})
    assert list(same_input(hist, pd.DataFrame({"scale_params": [two]}))["value"]) == [2.0, 4.0]
    assert list(same_input(hist, pd.DataFrame({"scale_params": [one]}))["value"]) == [1.0, 3.0]
    assert [starts_of(x) for x in (one, two, None, "not json starts", {STARTS_KEY: 3})] == [1, 2, 1, 1, 3]


def test_a_figure_of_several_starts_is_the_geometric_mean_of_each_start_s_best() -> None:
    """Drift's statistic: one start's figure is its best repetition, as before; two starts' is the mean (in log) of
    each start's best, so the starts' noise averages out instead of the best of all keeping most of it."""
    import math

    from jsonbench.history.noise import statistic

    assert statistic("ms", 11.0, [10.0, 12.0, 11.0]) == 10.0
    two = statistic("ms", 10.0, [10.0, 12.0, 11.0, 14.4, 16.0], {"start_samples": [3, 2]})
    assert two is not None and math.isclose(two, 12.0)
    assert math.isclose(statistic("tps", 0.0, [100.0, 90.0, 400.0], json.dumps({"start_samples": [2, 1]})) or 0.0, 200.0)
    # Sizes that do not add up to the samples (a damaged row): the best of all, as for one start.
    assert statistic("ms", 10.0, [10.0, 12.0, 11.0], {"start_samples": [2, 2]}) == 10.0
    assert statistic("bytes", 8192.0, [8192.0, 8192.0], {"start_samples": [1, 1]}) == 8192.0


def test_the_noise_table_reads_a_two_start_figure_as_drift_does() -> None:
    """`jsonbench-dev noise-levels` splits a row's samples by start for the repetitions' spread, and takes between runs the
    figure drift judges (each start's best, averaged), not the row's median over both starts."""
    from jsonbench.history.noise import start_groups

    assert start_groups([10.0, 12.0, 11.0, 14.4, 16.0], {"start_samples": [3, 2]}) == [[10.0, 12.0, 11.0], [14.4, 16.0]]
    assert start_groups([10.0, 12.0], json.dumps({"start_samples": [1, 1]})) == [[10.0], [12.0]]
    assert start_groups([10.0, 12.0, 11.0], None) is None and start_groups([10.0, 12.0, 11.0], {"start_samples": [2, 2]}) is None


def test_the_report_says_on_how_many_starts_the_figures_rest() -> None:
    from jsonbench.report.run_blocks import _starts_words

    two = json.dumps({"rows": 500, STARTS_KEY: 2})
    run = pd.DataFrame(
        {
            "engine_id": ["postgres-17", "postgres-16", "sqlite-3.46.1", "postgres-17"],
            "suite": ["catalogue", "catalogue", "sqlite_jsonb", "host"],
            "scale_params": [two, two, json.dumps({"keys_per_table": 30000}), None],
        }
    )
    assert _starts_words(run) == "2 (postgres-16, postgres-17); 1 (sqlite-3.46.1)"
    assert _starts_words(run[run["suite"] == "sqlite_jsonb"]) == "1"
    assert _starts_words(run[run["engine_id"] != "sqlite-3.46.1"]) == "2"
