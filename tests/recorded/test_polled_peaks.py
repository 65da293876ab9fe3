"""A cell's polled peak is a lower bound: a missed read is no change, a rise beyond the plan's margin is a fact.

Real rows: `recorded/local-fcb0a6f-2de39d7f/` (one host's whole-matrix laptop nights). Night 1's
SQLite 3.54.1 cell read `_cell/disk_peak` 36.90 MB, a poll that missed the peak; night 2 read 41.07 MB, as 49 of 50
recorded laptop cells of SQLite read. Judged as a sampled value with a near-exact sigma, night 2 and night 3 each
raised it as their one drift suspect, and its confirmation could not re-measure a whole cell's row.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest

from jsonbench import paths
from jsonbench.checks.confirm import inputs_of
from jsonbench.checks.library import load_library
from jsonbench.checks.verdicts import can_be_suspect
from jsonbench.dataset.measurement import PLAN_MARGIN, PLAN_SLACK_BYTES
from jsonbench.dataset.read import MEASUREMENTS, read_dataset_report
from jsonbench.history.drift import Settings, drift_frame, judge_polled_peak

FOLDER = paths.RECORDED_DIR / "local-fcb0a6f-2de39d7f"
NIGHT_1 = "manual__2026-12-03T13:27:58.097912+00:00"
NIGHT_2 = "manual__2026-12-03T13:57:42.987253+00:00"
SUITE = "sqlite_jsonb"
ENGINE = "sqlite-3.54.1"


def _no_detector(series: dict[str, Any], **_: Any) -> tuple[str, dict[str, Any]]:
    return "none", {k: [] for k in series}


def _night_2(factor: float = 1.0) -> pd.Series:
    """Night 2's drift row of SQLite 3.54.1's ``_cell/disk_peak``, judged against night 1, its value times ``factor``."""
    ds = read_dataset_report(FOLDER, MEASUREMENTS, hardware_label="local").table.to_pandas()
    ds = ds[(ds["scale"] == "laptop") & ds["run_id"].isin([NIGHT_1, NIGHT_2])]
    tonight = ds[ds["run_id"] == NIGHT_2].copy()
    peak = (tonight["workload"] == "_cell") & (tonight["metric"] == "disk_peak") & (tonight["engine_id"] == ENGINE)
    assert peak.sum() == 1
    tonight.loc[peak, "value"] = tonight.loc[peak, "value"] * factor
    tonight.loc[peak, "samples"] = tonight.loc[peak, "samples"].map(lambda s: None if s is None else [x * factor for x in s])
    run = {"run_id": NIGHT_2, "hardware_label": "local", "scale": "laptop", "logical_date": str(tonight["logical_date"].iloc[0])}
    history = ds[ds["run_id"] == NIGHT_1]
    before = history[(history["workload"] == "_cell") & (history["metric"] == "disk_peak") & (history["engine_id"] == ENGINE)]
    assert float(before["value"].iloc[0]) == pytest.approx(36.90e6, rel=0.01), "night 1's read is the missed peak"
    lib = load_library()
    frame = drift_frame(
        tonight, pd.concat([history, tonight]), run, SUITE, lib.drift_policy(SUITE), detector=_no_detector, calibration=None
    )
    row = frame[(frame["engine_id"] == ENGINE) & (frame["workload"] == "_cell") & (frame["metric"] == "disk_peak")]
    assert len(row) == 1
    return row.iloc[0]


def test_the_true_peak_after_a_missed_read_is_no_drift() -> None:
    row = _night_2()
    assert row["value"] == pytest.approx(41.07e6, rel=0.01)
    assert row["method"] == "polled_peak" and row["judged"] == "yes" and row["verdict"] == "ok", row["note"]
    assert row["relative_change"] == pytest.approx(0.113, abs=0.005) and row["drift_score"] <= 1


def test_a_low_read_is_a_missed_peak_not_a_change() -> None:
    row = _night_2(0.5)
    assert row["verdict"] == "ok" and row["drift_score"] == 0.0, row["note"]


def test_a_peak_beyond_the_plans_margin_fails_at_once_as_a_fact() -> None:
    """Twice the disk: the read is certain (the engine held at least that much), so it is no suspect to measure again."""
    row = _night_2(2.0)
    assert row["verdict"] == "drift" and row["drift_score"] > 1
    assert row["upper"] == pytest.approx(36.90e6 * PLAN_MARGIN + PLAN_SLACK_BYTES, rel=0.01)
    assert row["metric_kind"] == "deterministic"
    failed = {
        "check_kind": "drift",
        "workload": "_cell",
        "success": False,
        "verdict": "drift",
        "details": {"metric_kind": row["metric_kind"]},
    }
    assert not can_be_suspect(failed)


def test_a_cells_own_row_sends_no_cell_to_be_measured_again() -> None:
    """A suspect of ``_cell/duration`` (the sum of every task of the cell) cannot be judged on a few re-measured workloads."""
    lib = load_library()
    assert inputs_of({"check_kind": "drift", "engine_id": ENGINE, "workload": "_cell"}, lib) == set()
    assert inputs_of({"check_kind": "drift", "engine_id": ENGINE, "workload": "reads"}, lib) == {(ENGINE, "reads")}


def _judge_small(history: list[float], tonight: float) -> dict[str, Any]:
    """The polled-peak rule alone, on a cell of about a megabyte (no recorded cell is that small)."""
    g = [SimpleNamespace(run_id=f"r{i}", value=v) for i, v in enumerate(history)]
    s = Settings(min_history=1, det_min_history=1, window=10, recent=3, mode="calibrated", include=None, exclude=set())
    return judge_polled_peak(g, "disk_peak", tonight, s)


def test_a_small_cells_transient_is_within_the_plans_slack() -> None:
    """CI, 2026-12-04: the documents sample's SQLite 3.46.1 cell read 1,011,712 B, then 1,368,064 B on the same input
    (+35 %, a WAL file caught by one poll and not the other). No plan goes wrong by a third of a megabyte."""
    row = _judge_small([1_011_712.0], 1_368_064.0)
    assert row["verdict"] == "ok", row["note"]
    assert row["upper"] == pytest.approx(1_011_712 * PLAN_MARGIN + PLAN_SLACK_BYTES)


def test_a_small_cell_that_grew_beyond_the_slack_fails() -> None:
    row = _judge_small([1_011_712.0], 1_011_712.0 * PLAN_MARGIN + PLAN_SLACK_BYTES + 4096)
    assert row["verdict"] == "drift" and row["drift_score"] > 1, row["note"]


def _judge_typed(history: list[float], tonight: float, typical: float | None) -> dict[str, Any]:
    g = [SimpleNamespace(run_id=f"r{i}", value=v) for i, v in enumerate(history)]
    s = Settings(min_history=1, det_min_history=1, window=10, recent=3, mode="calibrated", include=None, exclude=set())
    return judge_polled_peak(g, "peak_rss", tonight, s, typical, 8)


def test_a_host_whose_polls_miss_the_peak_is_judged_against_the_types_figure() -> None:
    """A host whose polls missed the peak: PostgreSQL 16's large_document_update cell read 158 MB on night 1 and 219 MB on night
    2, which failed against night 1 alone (bound 214 MB); eight hosts of the record read 329 MB. With the record's figure
    beside the history, the same night passes, a cell that grew beyond the figure's margin fails, and a host's first
    night is judged."""
    alone = _judge_typed([158.0e6], 219.0e6, None)
    assert alone["verdict"] == "drift", "the failure as it was"
    typed = _judge_typed([158.0e6], 219.0e6, 328.5e6)
    assert typed["verdict"] == "ok" and typed["reference"] == pytest.approx(328.5e6), typed["note"]
    assert "this hardware type's figure" in typed["note"]
    grown = _judge_typed([158.0e6], 328.5e6 * PLAN_MARGIN + PLAN_SLACK_BYTES + 1e6, 328.5e6)
    assert grown["verdict"] == "drift" and grown["drift_score"] > 1
    first = _judge_typed([], 1.5 * 328.5e6, 328.5e6)
    assert first["judged"] == "yes" and first["verdict"] == "drift" and first["history_n"] == 0
    assert _judge_typed([], 300e6, None).get("judged") != "yes", "no history and no record: not judged, as before"


def test_the_real_night_that_failed_on_a_missed_peak_passes_with_the_records_figure() -> None:
    """Real rows: `recorded/local-570a7f7-76df4b9f/`, one host's nights 1 and 2. Night 2 failed on
    PostgreSQL 16's large_document_update `_cell/peak_rss` (219 MB against night 1's 158 MB alone); judged with the
    committed laptop record beside its history, it passes."""
    folder = paths.RECORDED_DIR / "local-570a7f7-76df4b9f"
    night_1, night_2 = "manual__2026-12-06T15:49:45.199192+00:00", "manual__2026-12-06T16:25:18.930502+00:00"
    ds = read_dataset_report(folder, MEASUREMENTS, hardware_label="local").table.to_pandas()
    ds = ds[(ds["scale"] == "laptop") & ds["run_id"].isin([night_1, night_2])]
    tonight = ds[ds["run_id"] == night_2]
    run = {
        "run_id": night_2,
        "hardware_label": "local",
        "scale": "laptop",
        "logical_date": str(tonight["logical_date"].iloc[0]),
        "results_dir": "",
    }
    suite = "large_document_update"
    lib = load_library()

    def peak(calibration: Any) -> pd.Series:
        frame = drift_frame(tonight, ds, run, suite, lib.drift_policy(suite), detector=_no_detector, calibration=calibration)
        row = frame[(frame["engine_id"] == "postgres-16") & (frame["workload"] == "_cell") & (frame["metric"] == "peak_rss")]
        assert len(row) == 1
        return row.iloc[0]

    alone = peak(None)
    assert alone["verdict"] == "drift" and alone["reference"] == pytest.approx(157.9e6, rel=0.01), "as the night judged it"
    typed = peak(True)
    assert typed["verdict"] == "ok" and typed["reference"] > 300e6, typed["note"]
