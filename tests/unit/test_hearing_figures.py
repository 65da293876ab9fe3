"""The report says what a run could see per family on its host: mds in one night and three, and the nights it rests on."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from jsonbench.history.stats import family_mds
from jsonbench.report.model import hearing_figures
from jsonbench.report.run_blocks import hearing_context


def _row(engine: str, sigma: float, nights: int | None, kind: str = "timed", method: str = "calibrated window test") -> dict[str, object]:
    details = {"metric_kind": kind, "method": method, "sigma": sigma, "history_n": 5, "host_nights": nights}
    return {"run_id": "r", "check_kind": "drift", "suite": "catalogue", "engine_id": engine, "details": json.dumps(details)}


def test_each_family_gets_its_mds_from_the_sigmas_it_was_judged_with() -> None:
    v = pd.DataFrame(
        [
            _row("postgres-17", 0.03, 5),
            _row("postgres-17", 0.05, 5),
            _row("postgres-17", 0.04, 4),
            _row("postgres-17", 0.001, 5, kind="sampled"),
            _row("postgres-17", 0.2, 5, method="otava"),
            _row("postgres-18", 0.2, None),
        ]
    )
    got = {h["engine_id"]: h for h in hearing_figures(v, "r")}
    assert got["postgres-17"]["series"] == 3 and got["postgres-17"]["host_nights"] == 5
    assert got["postgres-17"]["mds_1"] == pytest.approx(family_mds(0.04, ref_runs=5, nights=1))
    assert got["postgres-17"]["mds_3"] < got["postgres-17"]["mds_1"]
    assert got["postgres-18"]["host_nights"] is None
    shown = {h["family"]: h for h in hearing_context(v, "r")}
    assert shown["catalogue / postgres-18"]["host_nights"] == "-"
    assert hearing_figures(v, "another run") == []


def test_a_version_and_a_workload_judged_as_a_whole_get_rows_of_their_own() -> None:
    """The drift rows' ``hearing`` (the sigma a version's or a workload's test was judged at, one night and three, its
    reference runs and this host's nights) gives one row per version and per workload, after the families'."""

    def timing(workload: str, hearing: dict[str, list[float]]) -> dict[str, object]:
        row = _row("postgres-16", 0.05, 5)
        details = {**json.loads(str(row["details"])), "hearing": hearing}
        return {**row, "workload": workload, "details": json.dumps(details)}

    version = [0.02, 0.015, 5.0, 5.0]
    v = pd.DataFrame(
        [
            timing("reads", {"version": version, "workload": [0.03, 0.025, 5.0, 5.0]}),
            timing("reads", {"version": version, "workload": [0.03, 0.025, 5.0, 5.0]}),
            timing("load", {"version": version}),
        ]
    )
    got = hearing_figures(v, "r")
    assert [h["kind"] for h in got] == ["family", "version", "workload"]
    whole, reads = got[1], got[2]
    assert whole["series"] == 3 and whole["suite"] is None and whole["mds_1"] == pytest.approx(family_mds(0.02, ref_runs=5, nights=1))
    assert (
        reads["series"] == 2 and reads["workload"] == "reads" and reads["mds_3"] == pytest.approx(family_mds(0.025, ref_runs=5, nights=3))
    )
    assert reads["host_nights"] == 5
    shown = [h["family"] for h in hearing_context(v, "r")]
    assert shown == ["catalogue / postgres-16", "postgres-16, every suite", "catalogue / postgres-16 / reads"]
