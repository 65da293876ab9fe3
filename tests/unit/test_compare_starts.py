"""The comparison's published start rows: every measurement of every start, with its arm, pair and place, enough to
recompute every verdict from published data alone. Synthetic staged records of a planned comparison; no engine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest

from jsonbench.compare import tasks
from jsonbench.compare.judge import StartResult, judge
from jsonbench.compare.publish import COMPARISON_STARTS, COMPARISONS, read_starts
from jsonbench.dataset.measurement import Measurement
from jsonbench.dataset.staging import SETUP_RECORD, Staging, WorkloadRecord
from jsonbench.history.stats.paired import Stage

SUITE = "large_document_update"
PARAMS: dict[str, Any] = {
    "a": {"engine": "postgres-17"},
    "b": {"engine": "postgres-17", "settings": {"work_mem": "8MB"}},
    "suites": [SUITE],
    "workloads": ["rel_small"],
    "scale": "smoke",
    "pairs": 8,
    "margin": 0.05,
}


def stage_start(planned: dict[str, Any], start: dict[str, Any], shift: float, rng: np.random.Generator, fp: str = "fp") -> None:
    """What one start would stage: engine facts, a setup record, one workload record, and the start's marker."""
    cell_id = tasks.start_cell_id(SUITE, start["pair"], start["arm"])
    cell = tasks.driver.cell_of(planned, cell_id)
    assert cell is not None
    staging = Staging(cell.run.results_dir, cell.run.run_id)
    settings = cell.postgres.server_settings if cell.postgres else {}
    staging.write_engine(cell_id, {"build": "17.4 test", "version": "17.4", "settings": settings})
    t = f"2026-12-01T00:{start['pair']:02d}:{start['order'].index(start['arm']):02d}+00:00"
    staging.write_workload(WorkloadRecord(cell, SETUP_RECORD, [Measurement.of(SETUP_RECORD, "default", "load", "s", 1.0)], {}, t, t))
    base = 10.0 * (1 + shift if start["arm"] == "B" else 1)
    ms = [
        Measurement.of("rel_small", "default", "update_time", "ms", (base * np.exp(rng.normal(0, 0.01, 3))).tolist(), kind="timed"),
        Measurement.of("rel_small", "default", "n_tup_upd", "rows", [250.0, 250.0, 250.0], kind="deterministic"),
    ]
    staging.write_workload(WorkloadRecord(cell, "rel_small", ms, {}, t, t))
    folder = staging.root / cell_id
    (folder / tasks.ATTEMPT).write_text(json.dumps({**start, "started_at": t}))
    (folder / tasks.DONE).write_text(
        json.dumps({"pair": start["pair"], "arm": start["arm"], "suite": SUITE, "fingerprint": fp, "started_at": t})
    )


def _parquet(results: Path, table: str) -> list[dict[str, Any]]:
    files = list((results / table).glob("*/*/*/part-0.parquet"))
    assert len(files) == 1, files
    return pq.read_table(files[0]).to_pylist()


def recompute(rows: list[dict[str, Any]], stages: list[Stage], margin: float) -> dict[str, tuple[str, float | None]]:
    """Every verdict from the published start rows alone: the rows marked judged, as the judge's inputs."""
    by: dict[tuple[int, str, str], list[dict[str, Any]]] = {}
    pairs: dict[int, list[str]] = {}
    for r in rows:
        pairs.setdefault(r["pair"], ["", ""])[r["order_position"]] = r["arm"].upper()
        if r["judged"]:
            by.setdefault((r["pair"], r["arm"].upper(), r["suite"]), []).append(r)
    starts = [
        StartResult(
            pair,
            arm,
            suite,
            tuple(
                Measurement(
                    x["workload"],
                    x["variant"],
                    x["metric"],
                    x["unit"],
                    tuple(x["samples"]),
                    x["aggregate"],
                    x["status"],
                    kind=x["metric_kind"],
                )
                for x in rs
            ),
            rs[0]["data_fingerprint"],
            min(x["started_at"] for x in rs).isoformat(),
        )
        for (pair, arm, suite), rs in by.items()
    ]
    judged, _ = judge(starts, pairs, sorted({s.suite for s in starts}), stages, {}, margin)
    return {j.name: (j.verdict, j.comparison.estimate if j.comparison else None) for j in judged}


@pytest.fixture
def planned(tmp_path: Path) -> dict[str, Any]:
    return tasks.plan({**PARAMS, "results_dir": str(tmp_path)}, "manual__starts", "2026-12-01T00:00:00+00:00")


def test_every_verdict_is_recomputed_from_the_published_start_rows(planned: dict[str, Any], tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    for start in planned["stages"][0]:
        stage_start(planned, start, 0.10, rng)
    out = tasks.publish(planned)
    assert out["start_rows"] > 0
    starts = _parquet(tmp_path, COMPARISON_STARTS)
    assert starts == read_starts(tmp_path, "manual__starts")
    verdicts = {
        f"{r['suite']}/{r['workload']}/{r['variant']}/{r['metric']}": (r["verdict"], r["estimate"]) for r in _parquet(tmp_path, COMPARISONS)
    }
    stages = [Stage(int(s["pairs"]), float(s["alpha"]), float(s["level"])) for s in planned["comparison"]["stages"]]
    assert recompute(starts, stages, 0.05) == verdicts
    assert verdicts[f"{SUITE}/rel_small/default/update_time"][0] == "regression", "the test's data has a 10 % regression"


def test_the_two_arms_of_one_engine_id_are_told_apart_and_each_row_says_its_start(planned: dict[str, Any], tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    for start in planned["stages"][0]:
        stage_start(planned, start, 0.0, rng)
    tasks.publish(planned)
    rows = _parquet(tmp_path, COMPARISON_STARTS)
    assert {r["engine_id"] for r in rows} == {"postgres-17"}
    arms = {r["arm"]: json.loads(r["settings"]).get("work_mem") for r in rows if r["workload"] == "rel_small"}
    assert arms["b"] == "8MB" != arms["a"]
    order = {(s["pair"], s["arm"].lower()): (s["order"].index(s["arm"]), i) for i, s in enumerate(planned["stages"][0])}
    assert all((r["order_position"], r["sequence"]) == order[(r["pair"], r["arm"])] for r in rows)
    assert all(r["comparison_id"] == r["run_id"] == "manual__starts" and r["stage"] == 0 for r in rows)
    assert not any(r["judged"] for r in rows if r["workload"] in (SETUP_RECORD, "_cell")), "setup and resource rows are not judged"
    assert {r["pair"] for r in rows if r["judged"]} == set(range(8))


def test_an_incomplete_start_is_published_unjudged_and_its_pair_dropped(planned: dict[str, Any], tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    for start in planned["stages"][0]:
        stage_start(planned, start, 0.0, rng)
    broken = tasks.start_cell_id(SUITE, 3, "B")
    (Staging(tmp_path, "manual__starts").root / broken / tasks.DONE).unlink()
    out = tasks.publish(planned)
    assert "3" in out["dropped"] and "did not complete" in out["dropped"]["3"]
    rows = [r for r in _parquet(tmp_path, COMPARISON_STARTS) if r["pair"] == 3 and r["arm"] == "b"]
    assert rows and not any(r["judged"] or r["start_completed"] for r in rows)


STAGED: dict[str, Any] = {**PARAMS, "workloads": ["rel_small", "json_small"], "pairs": [8, 16]}


def test_a_later_stage_runs_only_the_workloads_with_an_undecided_metric(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """rel_small's metrics decide at the first look; json_small's update_time is too noisy to: stage 2 runs json_small
    alone, every start of it, and a start of a stage runs the workloads its hint names, no other."""
    planned = tasks.plan({**STAGED, "results_dir": str(tmp_path)}, "manual__staged", "2026-12-01T00:00:00+00:00")
    rng = np.random.default_rng(6)
    for start in planned["stages"][0]:
        stage_start(planned, start, 0.10, rng)
        cell = tasks.driver.cell_of(planned, tasks.start_cell_id(SUITE, start["pair"], start["arm"]))
        assert cell is not None
        noisy = [Measurement.of("json_small", "default", "update_time", "ms", (10 * np.exp(rng.normal(0, 0.5, 3))).tolist(), kind="timed")]
        t = "2026-12-01T00:00:00+00:00"
        Staging(tmp_path, "manual__staged").write_workload(WorkloadRecord(cell, "json_small", noisy, {}, t, t))
    nxt = tasks.decide(planned, 0)
    assert [(x["pair"], x["arm"]) for x in nxt] == [(x["pair"], x["arm"]) for x in planned["stages"][1]]
    assert all(x["workloads"] == {SUITE: ["json_small"]} for x in nxt)

    ran: list[str] = []
    monkeypatch.setattr(tasks.driver, "provision", lambda planned, cell_id: {})
    monkeypatch.setattr(tasks.driver, "run_workload", lambda planned, cell_id, handle, workload: ran.append(workload))
    monkeypatch.setattr(tasks.driver, "teardown", lambda planned, cell_id, handle: None)
    tasks.run_start(planned, nxt[0], 0)
    assert ran == ["json_small"]
    tasks.run_start(planned, {**nxt[1], "workloads": {SUITE: []}}, 1)
    assert ran == ["json_small"], "a suite with nothing undecided starts no engine"
    marker = tasks._done(Staging(tmp_path, "manual__staged"), tasks.start_cell_id(SUITE, nxt[1]["pair"], nxt[1]["arm"]))
    assert marker is not None and marker["measured"] is False
