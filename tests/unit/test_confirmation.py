"""Suspect before alert, and unjudged is visible (contract C3), on synthetic published runs: real GX, no engine.

A timing finding out of its band on one run is ``suspect`` and alerts only when its confirmation (the
suspect workloads measured again, published under ``confirmations/``) fails the same way; a night
whose every measurement was busy alerts as not judged.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from jsonbench.cell import RunRef
from jsonbench.checks import ChecksFailed, check_run
from jsonbench.checks.alerts import alert_text
from jsonbench.checks.confirm import confirm_run, suspect_cells
from jsonbench.checks.library import load_library
from jsonbench.checks.outcome import check_outcome
from jsonbench.dataset.publish import CONFIRMATIONS, MEASUREMENTS, VALIDATIONS, read_dataset
from tests.unit.checks_synth import confirm_run_cells, make_run, replace_metric, run_cells

SLOWDOWN = "big_document_jsonb_update_slowdown"
INVERTED = replace_metric("postgres-16", "json_big", "update_time", lambda v: 0.09)


@pytest.fixture(autouse=True)
def _no_data_docs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JSONBENCH_DATA_DOCS", "0")


def _row(results_dir: Path, run_id: str, expectation: str, engine_id: str) -> pd.Series:
    v = read_dataset(results_dir, VALIDATIONS, run_id=run_id).to_pandas()
    return v[(v["expectation"] == expectation) & (v["engine_id"] == engine_id)].iloc[0]


def _facts(run: RunRef) -> dict:
    return {"run_id": run.run_id, "dag_id": "d", "task_id": "t", "logical_date": None, "results_dir": run.results_dir}


def test_a_timing_finding_out_of_band_is_suspect_and_names_its_cell_and_workloads(make_cells, results_dir: Path) -> None:
    run = make_run(make_cells, 0, tamper=INVERTED)
    summary = check_run(run)  # no alert: a timing finding failed on one run only
    assert summary["failed"] == 0 and summary["suspect"] == 1 and summary["judgement"] == "suspect"
    assert any(SLOWDOWN in line for line in summary["suspects"])
    row = _row(results_dir, run.run_id, SLOWDOWN, "postgres-16")
    assert row["verdict"] == "suspect" and not row["success"]
    assert suspect_cells(results_dir, run.run_id) == [
        {"suite": "large_document_update", "engine_id": "postgres-16", "workloads": ["json_big", "rel_big"]}
    ]
    out = check_outcome(results_dir, run.run_id)
    assert out["facts_ok"] and out["sanity_ok"] and out["judgement"] == "suspect"


def test_a_confirmation_that_fails_the_same_way_alerts_with_both_measurements(make_cells, results_dir: Path) -> None:
    run = make_run(make_cells, 0, tamper=INVERTED)
    check_run(run)
    before = {p: p.read_bytes() for p in (results_dir / MEASUREMENTS).rglob("*.parquet")}
    confirm_run_cells(run_cells(make_cells, 0), {"json_big", "rel_big"}, tamper=INVERTED)
    with pytest.raises(ChecksFailed) as err:
        confirm_run(run)
    s = err.value.summary
    assert s["confirmed"] == 1 and s["cleared"] == 0 and s["kind"] == "confirmation"
    row = _row(results_dir, run.run_id, SLOWDOWN, "postgres-16")
    d = json.loads(row["details"])
    assert row["verdict"] == "confirmed" and not row["success"]
    assert d["first"]["observed"] == pytest.approx(row["observed"]) and d["confirmation"]["observed"] < 20
    assert d["confirmation"]["run_id"] == run.run_id + "+confirm"
    subject, text = alert_text({**_facts(run), "summary": s})
    assert "confirmed" in subject and "first " in text and "confirmation " in text and SLOWDOWN in text
    # The confirmation lives apart: the night's measurements are untouched and history sees no partial run.
    assert {p: p.read_bytes() for p in (results_dir / MEASUREMENTS).rglob("*.parquet")} == before
    redone = read_dataset(results_dir, CONFIRMATIONS).to_pandas()
    assert set(redone["run_id"]) == {run.run_id + "+confirm"} and set(redone["workload"]) - {"_cell"} == {"json_big", "rel_big"}
    assert set(redone["engine_id"]) == {"postgres-16", "postgres-17"}  # the synthetic helper stages both cells
    assert check_outcome(results_dir, run.run_id)["facts_ok"]


def test_a_confirmation_that_passes_clears_the_suspect(make_cells, results_dir: Path) -> None:
    run = make_run(make_cells, 0, tamper=INVERTED)
    check_run(run)
    confirm_run_cells(run_cells(make_cells, 0), {"json_big", "rel_big"})  # honest this time
    summary = confirm_run(run)
    assert summary["cleared"] == 1 and summary["confirmed"] == 0 and summary["judgement"] == "passed"
    row = _row(results_dir, run.run_id, SLOWDOWN, "postgres-16")
    d = json.loads(row["details"])
    assert row["verdict"] == "cleared" and row["success"] and d["first"]["observed"] < 20 and d["confirmation"]["observed"] > 20


def test_a_suspect_whose_cell_was_not_measured_again_stays_unconfirmed_and_is_not_judged(make_cells, results_dir: Path) -> None:
    run = make_run(make_cells, 0, tamper=INVERTED)
    check_run(run)
    confirm_run_cells(run_cells(make_cells, 0), {"json_small"})  # not the suspect's workloads
    summary = confirm_run(run)  # 1 of 6 timing findings unjudged: 83 %, above the threshold, still judged
    row = _row(results_dir, run.run_id, SLOWDOWN, "postgres-16")
    assert row["verdict"] == "unconfirmed" and not row["success"]
    assert "not measured again" in json.loads(row["details"])["confirmation"]["why"]
    assert (
        summary["unconfirmed"] == 1
        and summary["judged"]["timing_findings"]["judged"] == summary["judged"]["timing_findings"]["judgeable"] - 1
    )


def test_a_deterministic_fact_alerts_at_once(make_cells, results_dir: Path) -> None:
    run = make_run(make_cells, 0, tamper=replace_metric("postgres-17", "rel_small", "n_tup_hot_upd", lambda v: v + 1))
    with pytest.raises(ChecksFailed) as err:
        check_run(run)
    assert err.value.summary["suspect"] == 0 and "rel_small_hot_count" in str(err.value)
    assert not check_outcome(results_dir, run.run_id)["facts_ok"]


def test_a_night_with_every_measurement_busy_alerts_as_not_judged(make_cells, results_dir: Path) -> None:
    run = make_run(make_cells, 0, busy=True)
    with pytest.raises(ChecksFailed) as err:
        check_run(run)
    s = err.value.summary
    assert s["failed"] == 0 and s["not_judged"] and s["judgement"] == "not_judged"
    assert s["judged"]["timing_findings"]["judged"] == 0 and s["judged"]["timing_findings"]["judgeable"] > 0
    assert "not judged" in str(err.value)
    subject, text = alert_text({**_facts(run), "summary": s})
    assert "NOT JUDGED" in subject and "judged 0 of" in text and "does not count as passed" in text
    out = check_outcome(results_dir, run.run_id)
    assert out["facts_ok"] and out["judgement"] == "not_judged"


def test_a_quiet_night_states_its_judged_share(make_cells, results_dir: Path) -> None:
    summary = check_run(make_run(make_cells, 0))
    assert summary["judgement"] == "passed" and summary["judged"]["share"] == 1.0 and summary["judged"]["timing_findings"]["judgeable"] == 6
    assert "timing findings" in summary["judged_line"] and "still building history" in summary["judged_line"]


def test_a_statistical_drift_is_confirmed_by_the_same_drift_judgement_on_its_confirmation(make_cells, results_dir: Path) -> None:
    doubled = replace_metric("postgres-17", "json_big", "update_time", lambda v: 2 * v)
    for n in range(5):
        make_run(make_cells, n)
    run = make_run(make_cells, 5, tamper=doubled)
    assert check_run(run)["suspect"] >= 1
    confirm_run_cells(run_cells(make_cells, 5), {"json_big"}, tamper=doubled)
    with pytest.raises(ChecksFailed) as err:
        confirm_run(run)
    v = read_dataset(results_dir, VALIDATIONS, run_id=run.run_id).to_pandas()
    row = v[
        (v["check_kind"] == "drift") & (v["engine_id"] == "postgres-17") & (v["workload"] == "json_big") & (v["metric"] == "update_time")
    ]
    assert row["verdict"].iloc[0] == "confirmed"
    d = json.loads(row["details"].iloc[0])
    assert d["first"]["observed"] == pytest.approx(row["observed"].iloc[0]) and d["confirmation"]["observed"] is not None
    assert any("no_drift:json_big/default/update_time" in line for line in err.value.summary["failures"])


def test_the_report_never_shows_a_night_not_judged_as_passed_and_shows_both_measurements(make_cells, results_dir: Path) -> None:
    from jsonbench.report import build_report

    busy = make_run(make_cells, 0, busy=True)
    with pytest.raises(ChecksFailed):
        check_run(busy)
    page = build_report(results_dir, busy.run_id).read_text(encoding="utf-8")
    assert "NOT JUDGED" in page and "all checks passed" not in page and "judged 0 of" in page

    run = make_run(make_cells, 1, tamper=INVERTED)
    check_run(run)
    confirm_run_cells(run_cells(make_cells, 1), {"json_big", "rel_big"}, tamper=INVERTED)
    with pytest.raises(ChecksFailed):
        confirm_run(run)
    page = build_report(results_dir, run.run_id).read_text(encoding="utf-8")
    assert "checks FAILED" in page and "Measured twice before any timing alert" in page
    assert f"<b>confirmed</b> large_document_update · postgres-16: {SLOWDOWN}: first " in page and ", confirmation " in page


def test_a_confirmation_that_fails_the_other_way_clears_the_suspect() -> None:
    """Confirmed needs the same failure in the same direction; one far above then one far below is noise, not a change."""
    from jsonbench.checks.confirm import _verdict

    def drift(value: float, change: float) -> dict:
        return {"verdict": "suspect", "success": False, "observed": value, "min_value": 250.0, "max_value": 350.0,
                "details": json.dumps({"relative_change": change})}  # fmt: skip

    first = drift(425.0, 0.42)
    assert _verdict(first, drift(410.0, 0.37), True)[:2] == ("confirmed", False)
    assert _verdict(first, drift(201.0, -0.33), True)[:2] == ("cleared", True)
    band = {"verdict": "suspect", "success": False, "observed": 0.8, "min_value": 1.1, "max_value": 3.5, "details": "{}"}
    assert _verdict(band, {**band, "observed": 0.9}, True)[0] == "confirmed"  # below the band both times
    assert _verdict(band, {**band, "observed": 4.0}, True)[0] == "cleared"  # below, then above
    assert _verdict(band, None, True)[0] == "unconfirmed"


def test_suspects_beyond_the_confirmation_budget_stay_unconfirmed_and_say_why(
    make_cells, results_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A night of 1,000 s of cells affords 100 s of re-measuring: a suspect cell that costs 150 s is left out, unconfirmed,
    and the summary says what the budget spent and left out; in a night of 2,000 s it fits. A small night affords
    confirm.BUDGET_FLOOR_S all the same (the DAG's one-cell confirmation test)."""
    from jsonbench.checks import confirm

    run = make_run(make_cells, 0, tamper=INVERTED)
    check_run(run)
    cell = ("large_document_update", "postgres-16")
    monkeypatch.setattr(confirm, "_costs", lambda *_: (1000.0, {cell: (140.0, {"json_big": 5.0, "rel_big": 5.0})}))
    todo, budget = confirm.confirmation_budget(results_dir, run.run_id)
    assert todo == [] and budget == {
        "night_s": 1000.0,
        "budget_s": 100.0,
        "spent_s": 0.0,
        "left_out": ["large_document_update/postgres-16"],
    }
    with monkeypatch.context() as m:
        m.setattr(confirm, "_costs", lambda *_: (2000.0, {cell: (140.0, {"json_big": 5.0, "rel_big": 5.0})}))
        assert confirm.suspect_cells(results_dir, run.run_id) == [
            {"suite": "large_document_update", "engine_id": "postgres-16", "workloads": ["json_big", "rel_big"]}
        ], "150 s fits 10 % of 2,000 s"
    summary = confirm_run(run)
    row = _row(results_dir, run.run_id, SLOWDOWN, "postgres-16")
    assert row["verdict"] == "unconfirmed" and "over the confirmation budget" in json.loads(row["details"])["confirmation"]["why"]
    assert any("confirmation budget: 0 s of 100 s" in n and "large_document_update/postgres-16" in n for n in summary["notes"])


def test_a_cell_of_drift_suspects_too_dear_to_measure_whole_is_measured_in_part(monkeypatch: pytest.MonkeyPatch) -> None:
    """A family's verdict makes most of one engine's suite suspect: a catalogue cell of 250 s in a night whose budget is
    160 s. Its workloads are taken by suspects per second while they fit; the rest are said as left out, one by one. A cell
    with a reproduction suspect is never cut: its finding reads several workloads at once."""
    from jsonbench.checks import confirm

    def drift(engine: str, workload: str) -> dict[str, Any]:
        return {"verdict": "suspect", "check_kind": "drift", "suite": "catalogue", "engine_id": engine, "workload": workload}

    rows = [drift("postgres-17", w) for w, n in (("reads", 30), ("updates", 20), ("hybrid", 12), ("indexes", 6)) for _ in range(n)]
    per = {"reads": 73.0, "updates": 63.0, "hybrid": 14.0, "indexes": 14.0}
    monkeypatch.setattr(confirm, "stored_rows", lambda *_: rows)
    monkeypatch.setattr(confirm, "_costs", lambda *_: (1600.0, {("catalogue", "postgres-17"): (10.0, per)}))
    todo, budget = confirm.confirmation_budget("unused", "run", load_library())
    # hybrid 0.86 a second, reads 0.41, indexes 0.43, updates 0.32: hybrid, indexes, reads fit (10 + 14 + 14 + 73 = 111 s);
    # updates would make 174 s
    assert todo == [{"suite": "catalogue", "engine_id": "postgres-17", "workloads": ["hybrid", "indexes", "reads"]}]
    assert budget == {"night_s": 1600.0, "budget_s": 160.0, "spent_s": 111.0, "left_out": ["catalogue/postgres-17:updates"]}
    # A suspect of the workload left out is over the budget, not "failed to run".
    from jsonbench.checks.confirm import apply_confirmations

    left = {**drift("postgres-17", "updates"), "variant": "default", "metric": "tps", "details": "{}"}
    changed = apply_confirmations([left], {}, set(), load_library(), "run+confirm", set(budget["left_out"]))
    assert (
        changed[0]["verdict"] == "unconfirmed"
        and "over the confirmation budget" in json.loads(changed[0]["details"])["confirmation"]["why"]
    )


def test_drift_suspects_across_every_engine_are_said_as_the_host_or_harness() -> None:
    from jsonbench.checks.confirm import _mass_notes

    one = [{"check_kind": "drift", "engine_id": "postgres-16", "suite": "catalogue"} for _ in range(4)]
    assert _mass_notes(one) == [], "one engine's suspects are one version's"
    engines = ("postgres-16", "postgres-17", "postgres-18")
    assert _mass_notes([{"check_kind": "drift", "engine_id": e, "suite": "catalogue"} for e in engines]) == [], "one each: noise"
    every = [{"check_kind": "drift", "engine_id": e, "suite": "catalogue"} for e in engines for _ in range(2)]
    assert _mass_notes(every) and _mass_notes(every)[0].startswith("tonight's host or harness: 6 drift suspects across 3 engine(s)")


def test_a_confirmation_within_the_historys_range_between_starts_clears_the_suspect() -> None:
    """Confirmed only beyond the history's between-start range, the same way. A recorded night
    (`recorded/local-570a7f7-76df4b9f/`): 17's one-client WAL record bytes 327.93, judged against 335.69 and
    327.93, was confirmed at 327.93; it is a value the host had already read."""
    from jsonbench.checks.confirm import _verdict, history_ranges

    def drift(value: float, change: float) -> dict:
        return {"check_kind": "drift", "verdict": "suspect", "success": False, "observed": value, "min_value": 328.5,
                "max_value": 335.1, "suite": "catalogue", "engine_id": "postgres-17", "workload": "updates",
                "variant": "rel_fixed_1client", "metric": "wal_record_bytes_per_update",
                "details": json.dumps({"relative_change": change, "history_runs": ["n1", "n2"]})}  # fmt: skip

    first, again = drift(327.93, -0.012), drift(327.93, -0.012)
    history = pd.DataFrame(
        [
            {
                "run_id": run,
                "suite": "catalogue",
                "engine_id": "postgres-17",
                "workload": "updates",
                "variant": "rel_fixed_1client",
                "metric": metric,
                "value": value,
            }  # fmt: skip
            for run, metric, value in [
                ("n1", "wal_record_bytes_per_update", 335.69),
                ("n2", "wal_record_bytes_per_update", 327.93),
                ("n0", "wal_record_bytes_per_update", 300.0),  # not a run it was judged against
                ("n1", "wal_bytes_per_update", 7918.9),  # another metric
            ]
        ]
    )
    seen = history_ranges([first], history)
    assert list(seen.values()) == [(327.93, 335.69, 2)]
    verdict, success, why = _verdict(first, again, True, seen=next(iter(seen.values())))
    assert (verdict, success) == ("cleared", True) and "within what the series read on the 2 earlier run(s)" in why
    # Beyond the range on the same side: confirmed, as before; without a range (no history read), as before.
    assert _verdict(first, drift(320.0, -0.03), True, seen=(327.93, 335.69, 2))[:2] == ("confirmed", False)
    assert _verdict(first, again, True)[:2] == ("confirmed", False)
    # A rise is confirmed only above the range's top.
    up = drift(340.0, 0.02)
    assert _verdict(up, drift(335.0, 0.015), True, seen=(327.93, 335.69, 2))[0] == "cleared"
    assert _verdict(up, drift(340.0, 0.02), True, seen=(327.93, 335.69, 2))[0] == "confirmed"
    # A near-exact count's confirmation a record or two below the range's foot (the quota night: 327.9008 against
    # 327.9273-335.6881) is within it by one of its sigmas; a timing gets no such slack.
    quota = {**first, "details": json.dumps({"relative_change": -0.01, "sigma": 0.001, "history_runs": ["n1", "n2"]})}
    assert _verdict(quota, drift(327.9008, -0.01), True, seen=(327.9273, 335.6881, 3))[0] == "cleared"
    assert _verdict(first, drift(327.9008, -0.01), True, seen=(327.9273, 335.6881, 3))[0] == "confirmed", "no sigma, no slack"
    assert _verdict(quota, drift(318.0, -0.03), True, seen=(327.9273, 335.6881, 3))[0] == "confirmed", "+3 % beyond: a change"
    timed = {**quota, "suite": "catalogue", "workload": "reads", "variant": "cb_rel", "metric": "latency_avg"}
    assert _verdict(timed, {**drift(0.3275, -0.01)}, True, seen=(0.32755, 0.40, 3))[0] == "confirmed"
