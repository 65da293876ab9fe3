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
