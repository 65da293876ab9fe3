"""A value its own confirmation cleared is judged by the next night as its re-measurement, end to end.

Without it, a value the night before had cleared by measuring it again stays in the history as measured: a night's
window of the last two nights judges it again (the host's own noise leaves that night out, so it is heard). Synthetic
published runs (checks_synth, seeded noise) and a calibration record built from them by :mod:`jsonbench_dev.record`;
real GX where the checks run. The product's side alone is ``tests/unit/test_cleared_history.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from jsonbench.cell import RunRef
from jsonbench.checks import ChecksFailed, check_run
from jsonbench.checks.confirm import confirm_run
from jsonbench.checks.library import load_library
from jsonbench.dataset.read import CONFIRMATIONS, MEASUREMENTS, VALIDATIONS, read_dataset, read_dataset_report
from jsonbench.history.cleared import as_history
from jsonbench.history.drift import drift_frame
from jsonbench_dev import record
from tests.unit.checks_synth import confirm_run_cells, make_run, replace_metric, run_cells

LABEL = "synth"
SUITE = "large_document_update"
SERIES = {"suite": SUITE, "engine_id": "postgres-16", "workload": "json_big", "variant": "default", "metric": "update_time"}
DOUBLED = replace_metric("postgres-16", "json_big", "update_time", lambda v: 2 * v)


@pytest.fixture(autouse=True)
def _no_data_docs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JSONBENCH_DATA_DOCS", "0")


def _no_detector(series: dict[str, Any], **_: Any) -> tuple[str, dict[str, Any]]:
    """Otava stands aside: no change points in any history (the window test alone decides)."""
    return "none", {k: [] for k in series}


def _cleared(run_id: str) -> pd.DataFrame:
    """The validation row a confirmation that cleared :data:`SERIES` on ``run_id`` leaves (the columns read)."""
    return pd.DataFrame([{"run_id": run_id, "check_kind": "drift", "verdict": "cleared", **SERIES}])


def _verdict(tonight: RunRef, data: pd.DataFrame, rec: dict[str, Any]) -> pd.Series:
    lib = load_library()
    frame = drift_frame(
        data[data["run_id"] == tonight.run_id],
        data,
        tonight.to_json(),
        SUITE,
        lib.drift_policy(SUITE),
        detector=_no_detector,
        calibration=rec,
    )
    hit = frame[(frame["engine_id"] == "postgres-16") & (frame["workload"] == "json_big") & (frame["metric"] == "update_time")]
    return hit.iloc[0]


def test_the_next_night_judges_a_cleared_value_as_its_re_measurement(make_cells: Any, results_dir: Path) -> None:
    for n in range(5):
        make_run(make_cells, n, hardware_label=LABEL)
    rec = record.build_record(results_dir, "smoke", LABEL)
    first = make_run(make_cells, 5, hardware_label=LABEL, tamper=DOUBLED)  # one start twice as slow, not reproduced:
    confirm_run_cells(run_cells(make_cells, 5, hardware_label=LABEL), {"json_big"})  # its confirmation is honest
    tonight = make_run(make_cells, 6, hardware_label=LABEL)
    measured = read_dataset_report(results_dir, MEASUREMENTS).table.to_pandas()
    assert _verdict(first, measured[measured["run_id"] != tonight.run_id], rec)["verdict"] == "drift", "the first value was a suspect"

    # As measured, the doubled value stays in tonight's history. The host's own noise leaves that night out (far from
    # the others), so its sigma stays the honest nights'; tonight's window of the last two nights holds the value
    # again and calls drift on it a second time (the defect).
    raw = _verdict(tonight, measured, rec)
    assert raw["verdict"] == "drift" and "1 far from the others left out" in raw["note"], raw["note"]

    confirmations = read_dataset(results_dir, CONFIRMATIONS).to_pandas()
    read, cleared = as_history(measured, _cleared(first.run_id), confirmations, tonight=tonight.run_id)
    row = _verdict(tonight, read, rec)
    assert row["verdict"] == "ok" and first.run_id in row["history_runs"], "the night stays in the history, as re-measured"
    assert raw["sigma"] == pytest.approx(row["sigma"], rel=0.1), "the host's noise as its honest nights give it"
    assert cleared.replaced == [(first.run_id, *SERIES.values())] and cleared.left_out == []
    again = confirmations[(confirmations["engine_id"] == "postgres-16") & (confirmations["workload"] == "json_big")]
    again = again[again["metric"] == "update_time"]
    mine = read[(read["run_id"] == first.run_id) & (read["engine_id"] == "postgres-16") & (read["workload"] == "json_big")]
    mine = mine[mine["metric"] == "update_time"]
    assert len(mine) == 1 and mine["value"].iloc[0] == pytest.approx(again["value"].iloc[0])
    assert mine["logical_date"].iloc[0] == measured.loc[measured["run_id"] == first.run_id, "logical_date"].iloc[0]
    assert len(read) == len(measured), "one value a night: swapped, not added"

    # Its re-measurement unreadable (removed): the first value is left out, and the rest of its night stays.
    gone, cleared = as_history(measured, _cleared(first.run_id), confirmations.iloc[0:0], tonight=tonight.run_id)
    row = _verdict(tonight, gone, rec)
    assert row["verdict"] == "ok" and first.run_id not in row["history_runs"]
    assert cleared.left_out == [(first.run_id, *SERIES.values())] and len(gone) == len(measured) - 1

    # A night judged again keeps its own cleared value as measured (tonight is never read otherwise).
    same, cleared = as_history(measured, _cleared(first.run_id), confirmations, tonight=first.run_id)
    assert same is measured and cleared.note() is None


def test_a_night_after_a_cleared_suspect_says_how_its_history_was_read(make_cells: Any, results_dir: Path) -> None:
    """The check and the confirmation read the history through it (examine.check_run, confirm.confirm_run)."""
    for n in range(5):
        make_run(make_cells, n)
    # Otava judges here (no record for this label): 17's doubled update is a suspect (test_confirmation's case)
    first = make_run(make_cells, 5, tamper=replace_metric("postgres-17", "json_big", "update_time", lambda v: 2 * v))
    assert check_run(first)["suspect"] >= 1
    confirm_run_cells(run_cells(make_cells, 5), {"json_big"})  # honest
    assert confirm_run(first)["cleared"] >= 1
    v = read_dataset(results_dir, VALIDATIONS, run_id=first.run_id).to_pandas()
    n = int(((v["check_kind"] == "drift") & (v["verdict"] == "cleared")).sum())
    assert n >= 1
    tonight = make_run(make_cells, 6)
    try:
        summary = check_run(tonight)
    except ChecksFailed as exc:  # the verdicts are test_the_next_night_...'s; this test reads the notes
        summary = exc.summary
    assert f"history: {n} earlier value(s) their confirmation cleared read as re-measured" in summary["notes"]
