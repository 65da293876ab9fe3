"""The documented backfill for a new hardware label (docs/results-and-checks.md), with the installed Airflow CLI.

`--dry-run` is used because a real backfill needs a running scheduler; what it proves is that the
command as documented is accepted and plans one run per night with the new label in its conf.
That such runs land in their own partitions and start their own drift history is tested in
tests/unit/test_checks_run.py::test_drift_history_is_per_hardware_label.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.dag


def test_documented_backfill_command_plans_one_run_per_night(airflow_env: dict[str, str]) -> None:
    airflow = str(Path(sys.executable).parent / "airflow")
    res = subprocess.run([airflow, "dags", "reserialize"], env=airflow_env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    conf = {"hardware_label": "bigbox-epyc", "scale": "smoke"}
    res = subprocess.run(
        [
            airflow,
            "backfill",
            "create",
            "--dag-id",
            "jsonb_benchmark_matrix",
            "--from-date",
            "2026-11-01",
            "--to-date",
            "2026-11-04",
            "--dag-run-conf",
            json.dumps(conf),
            "--max-active-runs",
            "1",
            "--dry-run",
        ],
        env=airflow_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-3000:]
    assert "'hardware_label': 'bigbox-epyc'" in out
    nights = [f"2026-11-0{d} 02:00:00+00:00" for d in (1, 2, 3)]
    assert all(n in out for n in nights) and "2026-11-04 02:00:00+00:00" not in out
    docs = (Path(__file__).resolve().parents[2] / "docs" / "results-and-checks.md").read_text()
    assert "airflow backfill create --dag-id jsonb_benchmark_matrix" in docs and "--dry-run" in docs
