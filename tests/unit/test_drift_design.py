"""Drift's history is tonight's design only: rows measured under other server settings or another ASLR are not it.

Issue 37's arms on ``2de39d7f`` (huge pages, no timed checkpoint, ASLR on and off) sat in one history with its default
nights, and a version 1.25x slower was caught in 10 of the 30 series whose noise allowed it there (sitting 55).
"""

from __future__ import annotations

import json

import duckdb
import pandas as pd

from jsonbench import paths
from jsonbench.history.drift import NOT_DESIGN, design_of, same_input

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
