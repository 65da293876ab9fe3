"""The calibration record reads the default design only (jsonbench_dev.record.other_designs)."""

from __future__ import annotations

import json

import pandas as pd

from jsonbench import paths
from jsonbench.cell import READ_ORDER_KEY

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


def test_the_noise_record_reads_the_default_design_only() -> None:
    """The record's levels are of the design most runs were measured under, per suite and engine
    (``record.other_designs``): the arms (huge pages, ASLR on, interleaved reads) are left out as an ``--exclude``
    would; a run that recorded no ASLR (the first hosts') is of unknown ASLR, not of another design."""
    from jsonbench_dev.record import other_designs

    seq, inter = json.dumps({READ_ORDER_KEY: "sequential"}), json.dumps({READ_ORDER_KEY: "interleaved"})
    rows = [
        ("n1", "catalogue", _settings(), _facts("off"), seq),
        ("n2", "catalogue", _settings(port="5433"), _facts("off"), seq),  # where it listens is no design
        ("n3", "catalogue", _settings(), _facts(None), "{}"),  # before ASLR and the read order were recorded
        ("hp", "catalogue", _settings(huge_pages="on"), _facts("off"), seq),
        ("aslr", "catalogue", _settings(), _facts("on"), seq),
        ("n1", "json_vs_jsonb", _settings(), _facts("off"), seq),
        ("n2", "json_vs_jsonb", _settings(), _facts("off"), seq),
        ("int", "json_vs_jsonb", _settings(), _facts("off"), inter),
    ]
    df = pd.DataFrame(rows, columns=["run_id", "suite", "settings", "engine_facts", "scale_params"]).assign(engine_id="postgres-17")
    assert other_designs(df) == {"hp": {"catalogue"}, "aslr": {"catalogue"}, "int": {"json_vs_jsonb"}}
    # per engine: 16's own settings are its default, not 17's
    sixteen = df.assign(engine_id="postgres-16", settings=_settings(jit="off"))
    assert other_designs(pd.concat([df, sixteen])) == {"hp": {"catalogue"}, "aslr": {"catalogue"}, "int": {"json_vs_jsonb"}}
    assert other_designs(df.iloc[0:0]) == {}
