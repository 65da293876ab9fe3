"""Which builds a compared build inherits its noise from, read from ``comparisons`` rows: alike metrics lend, a
regression does not, another setting is another design, a later comparison withdraws a loan, chains are followed."""

from __future__ import annotations

import json
from typing import Any

from jsonbench.compare.inherit import compared_builds, inherited_builds

W = ("large_document_update", "rel_small", "default")


def row(
    metric: str, verdict: str, a: str, b: str, *, cid: str = "c1", at: str = "2026-12-01", settings_b: dict[str, str] | None = None
) -> dict[str, Any]:
    return {
        "comparison_id": cid,
        "engine_a": "postgres-17",
        "engine_b": "postgres-17",
        "build_a": a,
        "build_b": b,
        "arm_a": json.dumps({"engine": "postgres-17", "settings": {}}),
        "arm_b": json.dumps({"engine": "postgres-17", "settings": settings_b or {}}),
        "same_arm": False,
        "suite": W[0],
        "workload": W[1],
        "variant": W[2],
        "metric": metric,
        "verdict": verdict,
        "scale": "smoke",
        "published_at": at,
    }


def test_alike_metrics_inherit_the_compared_builds_noise_and_a_regression_does_not() -> None:
    rows = [
        row("update_time", "equivalent", "17.4", "17.5"),
        row("wal_bytes", "small", "17.4", "17.5"),
        row("load_time", "regression", "17.4", "17.5"),
    ]
    got = inherited_builds(compared_builds(rows), "postgres-17", "17.5")
    assert set(got) == {(*W, "update_time"), (*W, "wal_bytes")}
    (link,) = got[(*W, "update_time")]
    assert (link.engine_id, link.build, link.level, link.comparison_id) == ("postgres-17", "17.4", True, "c1")
    assert got[(*W, "wal_bytes")][0].level is False, "a small change lends its noise, not its level"
    assert inherited_builds(compared_builds(rows), "postgres-17", "17.4")[(*W, "update_time")][0].build == "17.5"


def test_another_setting_one_build_or_another_scale_lends_nothing() -> None:
    rows = [
        row("update_time", "equivalent", "17.4", "17.5", settings_b={"work_mem": "8MB"}),
        row("wal_bytes", "equivalent", "17.4", "17.4"),
        row("load_time", "equivalent", "17.4", "17.4, 17.5"),
    ]
    assert compared_builds(rows) == []
    assert compared_builds([row("update_time", "equivalent", "17.4", "17.5")], scale="laptop") == []


def test_a_later_comparison_withdraws_the_loan_and_chains_are_followed() -> None:
    rows = [
        row("update_time", "equivalent", "17.4", "17.5", cid="old", at="2026-12-01"),
        row("update_time", "regression", "17.4", "17.5", cid="new", at="2026-12-02"),
        row("wal_bytes", "equivalent", "17.3", "17.4", cid="ab"),
        row("wal_bytes", "small", "17.4", "17.5", cid="bc"),
    ]
    got = inherited_builds(compared_builds(rows), "postgres-17", "17.5")
    assert (*W, "update_time") not in got, "the latest comparison found a regression"
    chain = got[(*W, "wal_bytes")]
    assert [(c.build, c.comparison_id, c.level) for c in chain] == [("17.4", "bc", False), ("17.3", "ab", False)]
