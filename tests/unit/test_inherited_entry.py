"""Drift reads a compared build's noise where a new build has no entry of its own in the calibration record."""

from __future__ import annotations

from pathlib import Path
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


def test_the_nightly_checks_read_the_labels_published_comparisons(tmp_path: Path) -> None:
    """A comparison published under the results folder (real Parquet) is what the nightly drift check lends noise
    from: of its label and scale only; a damaged comparisons file lends nothing and fails nothing."""
    import json

    from jsonbench.cell import RunRef
    from jsonbench.checks.validation_rows import compared_of
    from jsonbench.compare.publish import publish_comparison

    def published(label: str, scale: str, run_id: str) -> None:
        arm = json.dumps({"engine": "postgres-17", "settings": {}})
        row = {
            "comparison_id": run_id, "arm_a": arm, "arm_b": arm, "engine_a": "postgres-17", "engine_b": "postgres-17",
            "build_a": OLD, "build_b": NEW, "same_arm": False, "scale": scale, "suite": "catalogue", "workload": "reads",
            "variant": "cb_rel", "metric": "tps", "verdict": "equivalent",
        }  # fmt: skip
        when = "2026-12-06T00:00:00+00:00"
        publish_comparison(tmp_path, RunRef(run_id, when, label, str(tmp_path), scale), [row])

    published("local", "laptop", "cmp-1")
    published("local", "smoke", "cmp-2")
    published("another", "laptop", "cmp-3")
    run = RunRef("night", "2026-12-07T00:00:00+00:00", "local", str(tmp_path), "laptop")
    got = compared_of(run)
    assert [(c.comparison_id, c.build, c.compared_build) for c in got] == [("cmp-1", NEW, OLD)]
    e = calibration_entry(RECORD, "catalogue", ROW, got)
    assert e is not None and "cmp-1" in e["inherited_from"]
    (next((tmp_path / "comparisons").rglob("run_key=cmp-1/*.parquet"))).write_bytes(b"not parquet")
    assert compared_of(run) == ()
