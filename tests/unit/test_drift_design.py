"""Drift's history is tonight's design only: rows measured under other server settings or another ASLR are not it.

The recorded experiment's arms on one host (huge pages, no timed checkpoint, ASLR on and off) sat in one history with its default
nights, and a version 1.25x slower was caught in 10 of the 30 series whose noise allowed it there.
"""

from __future__ import annotations

import json

import duckdb
import pandas as pd

from jsonbench import paths
from jsonbench.cell import READ_ORDER_KEY, design_params_of
from jsonbench.errors import ConfigError
from jsonbench.history.drift import NOT_DESIGN, RESTART_NOTE, design_of, design_restarts, same_input
from jsonbench.suites.json_vs_jsonb import read_order

RECORDED = paths.PROJECT_ROOT / "recorded"


def _settings(**over: str) -> str:
    base = {
        "shared_buffers": "1GB",
        "jit": "on",
        "unix_socket_directories": "/tmp/jsonbench-a",
        "port": "5432",
        "statement_timeout": "5min",
    }
    return json.dumps({**base, **over})


def _facts(aslr: str | None) -> str:
    return json.dumps({"backend": "embedded", "host": {"host_boot_id": "x"}} | ({"aslr": aslr} if aslr else {}))


def test_a_design_is_the_settings_that_change_a_measurement_and_the_aslr() -> None:
    same = design_of(_settings(), _facts("off"))
    # where the server listens and how long a statement may run are not the design
    assert design_of(_settings(unix_socket_directories="/tmp/jsonbench-b", port="5433", statement_timeout="30min"), _facts("off")) == same
    assert {"unix_socket_directories", "port", "statement_timeout"} <= NOT_DESIGN
    assert design_of(_settings(huge_pages="on"), _facts("off")) != same
    assert design_of(_settings(checkpoint_timeout="1d"), _facts("off")) != same
    assert design_of(_settings(), _facts("on")) != same
    # rows that record neither (older runs, an engine without settings) share one design; damaged JSON reads as none
    assert design_of(None, None) == design_of("not json", "{") == design_of("{}", "{}")


def test_the_history_keeps_an_engine_s_rows_of_tonight_s_design_only() -> None:
    default, hp, aslr_on = (_settings(), _facts("off")), (_settings(huge_pages="on"), _facts("off")), (_settings(), _facts("on"))
    rows = [("postgres-17", *default, 1.0), ("postgres-17", *hp, 2.0), ("postgres-17", *aslr_on, 3.0), ("postgres-16", *hp, 4.0)]
    rows += [("postgres-16", *default, 5.0), ("postgres-17", *default, 6.0)]
    hist = pd.DataFrame(rows, columns=["engine_id", "settings", "engine_facts", "value"]).assign(scale_params="{}")
    now = pd.DataFrame([("postgres-17", *default), ("postgres-16", *hp)], columns=["engine_id", "settings", "engine_facts"]).assign(
        scale_params="{}"
    )
    assert list(same_input(hist, now)["value"]) == [1.0, 4.0, 6.0]
    # frames without the columns (a report's narrowed frame, an older caller) keep their history
    assert len(same_input(hist.drop(columns=["settings"]), now)) == len(hist)


def _one_row(folder: str, run_key: str, suite: str) -> tuple[str, str]:
    glob = str(next((RECORDED / folder / "measurements").glob(f"hardware_label=*/run_date=*/run_key={run_key}")) / "*.parquet")
    got = duckdb.sql(
        f"select settings, engine_facts from read_parquet('{glob}', union_by_name=true) "
        f"where suite = '{suite}' and engine_id = 'postgres-17' limit 1"
    ).fetchall()
    assert got, (folder, run_key)
    return str(got[0][0]), str(got[0][1])


def test_recorded_default_nights_of_two_hosts_and_code_versions_share_a_design_and_the_arms_do_not() -> None:
    """Real rows: the default design is one across hosts and commits (so a nightly history survives code updates), while
    the huge-pages and ASLR-on arms are designs of their own."""
    for suite in ("catalogue", "json_vs_jsonb"):
        night_431 = design_of(*_one_row("local-d834b7d-431a3be6", "manual__2026-12-03T20_51_58.557153_00_00", suite))
        night_2de = design_of(*_one_row("local-fcb0a6f-2de39d7f", "manual__2026-12-03T13_57_42.987253_00_00", suite))
        hp = design_of(*_one_row("local-3484cfc-2de39d7f-hp", "manual__2026-12-03T10_25_28.987586_00_00", suite))
        aslr_on = design_of(*_one_row("local-45796f0-431a3be6-aslr-on", "manual__2026-12-04T06_17_04.295029_00_00", suite))
        assert night_431 == night_2de, suite
        assert hp != night_431 and aslr_on != night_431 and hp != aslr_on, suite


def test_reads_taken_in_another_order_are_another_design() -> None:
    """json_vs_jsonb's interleaved reads never share a history with the seed's order; rows written before
    the parameter existed are of the seed's order (their default); the starts stay a design of their own beside it."""
    old = json.dumps({"small_rows": 40000})
    seq = json.dumps({"small_rows": 40000, READ_ORDER_KEY: "sequential"})
    inter = json.dumps({"small_rows": 40000, READ_ORDER_KEY: "interleaved"})
    inter2 = json.dumps({"small_rows": 40000, READ_ORDER_KEY: "interleaved", "starts": 2})
    hist = pd.DataFrame({"scale_params": [old, inter, seq, inter2, inter], "value": [1.0, 2.0, 3.0, 4.0, 5.0]})
    assert list(same_input(hist, pd.DataFrame({"scale_params": [inter]}))["value"]) == [2.0, 5.0]
    assert list(same_input(hist, pd.DataFrame({"scale_params": [inter2]}))["value"]) == [4.0]
    assert list(same_input(hist, pd.DataFrame({"scale_params": [old]}))["value"]) == [1.0, 3.0]
    assert list(same_input(hist, pd.DataFrame({"scale_params": [seq]}))["value"]) == [1.0, 3.0]
    assert design_params_of(None) == design_params_of("{}") == design_params_of("not json read_order") == ("1", "sequential")
    assert design_params_of({"starts": 3, READ_ORDER_KEY: "interleaved"}) == ("3", "interleaved")


def test_an_unknown_read_order_fails_naming_the_field() -> None:
    assert read_order({}) == "sequential" and read_order({READ_ORDER_KEY: "interleaved"}) == "interleaved"
    try:
        read_order({READ_ORDER_KEY: "random"}, "matrix.scales.laptop.json_vs_jsonb.read_order")
    except ConfigError as e:
        assert e.field == "matrix.scales.laptop.json_vs_jsonb.read_order" and "random" in str(e)
    else:
        raise AssertionError("an unknown read order was taken")


def test_a_history_that_restarts_says_why() -> None:
    """Tonight's design differs from the engine's earlier runs: the note says how many runs were set aside and what
    changed, so that "not enough history" after a settings change is not a mystery."""
    before = {"settings": _settings(), "engine_facts": _facts("on"), "scale_params": json.dumps({READ_ORDER_KEY: "sequential"})}
    after = {
        "settings": _settings(huge_pages="on"),
        "engine_facts": _facts("off"),
        "scale_params": json.dumps({READ_ORDER_KEY: "interleaved"}),
    }
    every = pd.DataFrame(
        [
            {"engine_id": "postgres-17", "run_id": "r1", "logical_date": "2026-12-01", **before},
            {"engine_id": "postgres-17", "run_id": "r2", "logical_date": "2026-12-02", **before},
            {"engine_id": "postgres-16", "run_id": "r2", "logical_date": "2026-12-02", **after},
        ]
    )
    now = pd.DataFrame([{"engine_id": "postgres-17", "run_id": "r3", **after}, {"engine_id": "postgres-16", "run_id": "r3", **after}])
    kept = same_input(every, now)
    assert list(kept["engine_id"]) == ["postgres-16"]
    why = design_restarts(every, kept, now)
    assert set(why) == {"postgres-17"}, why  # postgres-16's history is whole
    note = why["postgres-17"]
    assert note.startswith(RESTART_NOTE) and "2 earlier run(s)" in note
    for said in ("read_order sequential -> interleaved", "aslr on -> off", "huge_pages unset -> on"):
        assert said in note, note
    assert design_restarts(every, every, now) == {}


def test_the_report_says_why_a_history_restarted() -> None:
    """The drift section gathers the restart notes of the series still building history, once each (a stand-in frame of
    validation rows for speed; :func:`test_a_history_that_restarts_says_why` makes the note from real drift code)."""
    from jsonbench.report.suite_blocks import drift_context

    why = f"{RESTART_NOTE}: 3 earlier run(s) of postgres-17 were measured otherwise (aslr on -> off), and are not its history"
    v = pd.DataFrame(
        {
            "verdict": ["insufficient_history", "insufficient_history", "ok"],
            "details": [
                json.dumps({"history_n": 0, "note": f"0 quiet earlier run(s); a calibrated series needs 3; {why}"}),
                json.dumps({"history_n": 0, "note": why}),
                json.dumps({"history_n": 5, "note": "fine"}),
            ],
            "success": [True, True, True],
            "engine_id": ["postgres-17"] * 3,
            "workload": ["w"] * 3,
            "metric": ["m"] * 3,
        }
    )
    ctx = drift_context(v, [])
    assert ctx is not None and ctx["restarts"] == [why] and ctx["insufficient"] == 2
