"""Drift reads a compared build's noise where a new build has no entry of its own in the calibration record."""

from __future__ import annotations

from types import SimpleNamespace

from jsonbench.compare.inherit import ComparedBuild
from jsonbench.history.drift.series import calibration_entry

OLD, NEW = "npm postgres@17.9", "npm postgres@17.10"
RECORD = {
    "series": {
        "catalogue/postgres-17/reads/cb_rel/tps": {"sigma": 0.05, "engine_builds": [OLD], "kind": "timed"},
    }
}
ROW = SimpleNamespace(engine_id="postgres-17", engine_build=NEW, workload="reads", variant="cb_rel", metric="tps")


def _compared(verdict: str) -> tuple[ComparedBuild, ...]:
    return (
        ComparedBuild(
            "postgres-17", NEW, "postgres-17", OLD, "catalogue", "reads", "cb_rel", "tps", verdict, "cmp-1", "laptop", "2026-12-06"
        ),
    )


def test_a_new_build_without_an_entry_is_judged_by_its_alike_compared_builds() -> None:
    assert calibration_entry(RECORD, "catalogue", ROW) is None, "no entry serves the new build by itself"
    e = calibration_entry(RECORD, "catalogue", ROW, _compared("equivalent"))
    assert e is not None and e["sigma"] == 0.05 and "cmp-1" in e["inherited_from"]


def test_a_regression_lends_no_noise() -> None:
    assert calibration_entry(RECORD, "catalogue", ROW, _compared("regression")) is None
