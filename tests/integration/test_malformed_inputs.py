"""A malformed matrix file or expectation file fails the run before any engine starts, naming the file and the field.

Through the real entry points: ``python -m jsonbench.cli run`` (which checks before Airflow starts)
and ``airflow dags test`` (the DAG file loads the matrix when it is parsed; the plan task validates
the expectation files). No server may have started (the session's leak check) and nothing may be
published.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from jsonbench import paths

pytestmark = pytest.mark.dag

CONF = {"scale": "smoke", "engines": ["postgres-17"], "suites": ["large_document_update"]}


def _bad_matrix(tmp_path: Path) -> Path:
    path = tmp_path / "matrix.yaml"
    path.write_text(paths.matrix_file().read_text().replace("    repetitions: 2\n", "    repetitions: two\n", 1))
    return path


def _bad_expectations(tmp_path: Path) -> Path:
    root = tmp_path / "expectations"
    shutil.copytree(paths.expectations_dir(), root)
    rep = root / "large_document_update.reproduction.json"
    data = json.loads(rep.read_text())
    data["findings"][1].pop("bands")
    rep.write_text(json.dumps(data))
    return rep


def _airflow(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(Path(sys.executable).parent / "airflow"), *args], env=env, capture_output=True, text=True, timeout=900)


def test_cli_refuses_a_malformed_matrix_before_airflow_starts(airflow_env: dict[str, str], tmp_path: Path, leak_check: Any) -> None:
    bad = _bad_matrix(tmp_path)
    env = {**airflow_env, "JSONBENCH_MATRIX": str(bad)}
    res = subprocess.run(
        [sys.executable, "-m", "jsonbench.cli", "run", "--scale", "smoke", "--results-dir", str(tmp_path / "r")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    print(res.stderr.strip())
    assert res.returncode == 2, res.stdout[-2000:] + res.stderr[-2000:]
    assert f"matrix file {bad}: matrix.scales.smoke.repetitions: must be an integer >= 1, got 'two'" in res.stderr
    assert "airflow" not in res.stdout.lower() and not (tmp_path / "r").exists()
    assert leak_check() == []


def test_dag_with_a_malformed_matrix_fails_to_load_naming_file_and_field(
    airflow_env: dict[str, str], tmp_path: Path, leak_check: Any
) -> None:
    bad = _bad_matrix(tmp_path)
    res = _airflow(
        {**airflow_env, "JSONBENCH_MATRIX": str(bad)},
        "dags",
        "test",
        "jsonb_benchmark_matrix",
        "-c",
        json.dumps({**CONF, "results_dir": str(tmp_path / "r")}),
    )
    log = res.stdout + res.stderr
    assert res.returncode != 0
    assert f"matrix file {bad}: matrix.scales.smoke.repetitions" in log, log[-3000:]
    assert "[DAG TEST] starting" not in log  # not one task ran
    assert not (tmp_path / "r").exists()
    assert leak_check() == []


def test_malformed_expectation_file_fails_the_plan_before_any_engine_starts(
    airflow_env: dict[str, str], dags_test: Any, tmp_path: Path, leak_check: Any
) -> None:
    bad = _bad_expectations(tmp_path)
    out = dags_test(
        "jsonb_benchmark_matrix", {**CONF, "results_dir": str(tmp_path / "r")}, extra_env={"JSONBENCH_EXPECTATIONS_DIR": str(bad.parent)}
    )
    message = f"expectation file {bad}: findings[1].bands: missing"
    print(next((line.strip() for line in out["log"].splitlines() if message in line), "")[:300])
    assert out["state"] == "failed" and message in out["log"], out["log"][-4000:]
    res = _airflow(airflow_env, "tasks", "states-for-dag-run", "jsonb_benchmark_matrix", out["run_id"], "-o", "json")
    states = {r["task_id"]: r["state"] for r in json.loads(res.stdout[res.stdout.index("[") :])}
    assert states["plan"] == "failed"
    provisions = {t: st for t, st in states.items() if t.endswith(".provision")}
    assert provisions and set(provisions.values()) == {"skipped"}, provisions  # every cell's setup ran and skipped: no engine started
    assert not (tmp_path / "r" / "measurements").exists()
    assert leak_check() == []
