"""One damaged file in the history must not stop later runs: they are still checked (drift over what is readable) and reported.

Synthetic runs published by the real functions (checks_synth); the damage is real bytes cut off a real file.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from jsonbench.checks import ChecksFailed, check_run
from jsonbench.dataset.publish import MEASUREMENTS, VALIDATIONS, partition_dir, read_dataset, read_dataset_report
from jsonbench.report import build_report
from tests.unit.checks_synth import make_run

ROOT = Path(__file__).resolve().parents[2]


def test_later_runs_check_and_report_around_a_damaged_run(make_cells, results_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JSONBENCH_DATA_DOCS", "0")
    runs = [make_run(make_cells, n) for n in range(4)]
    victim = partition_dir(results_dir, MEASUREMENTS, runs[1].hardware_label, runs[1].logical_date, runs[1].run_id) / "part-0.parquet"
    victim.write_bytes(victim.read_bytes()[: victim.stat().st_size // 3])

    tonight = make_run(make_cells, 4)
    try:
        summary = check_run(tonight)
    except ChecksFailed as exc:  # whether tonight's checks pass is the checks' business; reading around the damage is not
        summary = exc.summary
    assert summary["run_id"] == tonight.run_id and summary["checked"] > 0
    read = read_dataset_report(results_dir, MEASUREMENTS)
    assert [d.path for d in read.damaged] == [str(victim)]
    damaged_rows = read_dataset(results_dir, VALIDATIONS, run_id=tonight.run_id).to_pandas()
    damaged_rows = damaged_rows[damaged_rows["expectation"].str.startswith("dataset_file_readable:")]
    assert len(damaged_rows) == 1 and list(damaged_rows["scale"]) == ["smoke"], (
        "the damaged-file row carries the run's scale like every row"
    )
    assert sorted(set(read.table.column("run_id").to_pylist())) == sorted(r.run_id for r in runs + [tonight] if r is not runs[1])

    html = build_report(results_dir, run_id=tonight.run_id).read_text()
    assert f"run {tonight.run_id}" in html
    env = {"PYTHONPATH": str(ROOT / "plugins"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-m", "jsonbench.cli", "summary", "--results-dir", str(results_dir)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0 and f"run {tonight.run_id}" in out.stdout, out.stderr[-2000:]
