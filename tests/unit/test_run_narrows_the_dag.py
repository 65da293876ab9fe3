"""`jsonbench run` parses a DAG of its own engines only: what `airflow dags test` walks for a one-cell run.

The environment it gives `airflow dags test` names the run's engines in ``$JSONBENCH_HOST_ENGINES`` (a caller's own
list is kept), and the real DAG file parsed under it holds those engines' groups and no other. Nothing here times.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from jsonbench.orchestration.dagtest import narrowed_env

ROOT = Path(__file__).resolve().parents[2]


def test_the_run_names_its_engines_and_keeps_a_callers_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JSONBENCH_HOST_ENGINES", raising=False)
    env = narrowed_env({"scale": "smoke", "engines": ["postgres-17", "sqlite-3.54.1"], "suites": ["catalogue"]})
    assert env["JSONBENCH_HOST_ENGINES"] == "postgres-17,sqlite-3.54.1"
    monkeypatch.setenv("JSONBENCH_HOST_ENGINES", "postgres-16,postgres-17")
    assert narrowed_env({"scale": "smoke", "engines": ["postgres-17"]})["JSONBENCH_HOST_ENGINES"] == "postgres-16,postgres-17"


def test_a_bad_engine_fails_before_airflow_starts_naming_the_field(monkeypatch: pytest.MonkeyPatch) -> None:
    from jsonbench.errors import ConfigError

    monkeypatch.delenv("JSONBENCH_HOST_ENGINES", raising=False)
    with pytest.raises(ConfigError, match="engines"):
        narrowed_env({"scale": "smoke", "engines": ["postgres-99"]})


def test_the_dag_parsed_in_that_environment_holds_the_runs_groups_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JSONBENCH_HOST_ENGINES", raising=False)
    env = narrowed_env({"scale": "smoke", "engines": ["postgres-17"], "suites": ["large_document_update"]})
    env["PYTHONPATH"] = str(ROOT / "plugins")
    probe = (
        "import json\n"
        "from airflow.dag_processing.dagbag import DagBag\n"
        f"bag = DagBag(dag_folder={str(ROOT / 'dags' / 'jsonb_benchmark_matrix.py')!r})\n"
        "assert not bag.import_errors, bag.import_errors\n"
        "dag = bag.dags['jsonb_benchmark_matrix']\n"
        "print(json.dumps(sorted(g for g in dag.task_group_dict if '.' not in g)))\n"
    )
    res = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    groups = json.loads(res.stdout.strip().splitlines()[-1])
    assert groups and all(g.endswith("__postgres-17") for g in groups), groups
    assert "large_document_update__postgres-17" in groups
