"""Airflow's floor (``jsonbench-dev airflow-floor``, ``scheduler-run --floor``): the floor DAG really runs, as many task
instances as asked, in a private Airflow home, and its DAG folder carries the project's DAGs beside it.

Nothing here judges a timing: the counts and the folder's contents are deterministic facts.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jsonbench_dev import floor
from jsonbench_dev.scheduler_trial import _floor_words, durations_in_order

# Outside tests/integration/, which marks its tests so by folder: these start real engines and Airflow too.
pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def test_the_floor_runs_every_task_it_is_asked_for_in_a_private_home() -> None:
    own_home = Path(os.environ.get("AIRFLOW_HOME") or ROOT / ".airflow")
    before = sorted((ROOT / ".cache").glob("floor-*")) if (ROOT / ".cache").is_dir() else []
    out = floor.dags_test_floor(tasks=4, seconds=0.0)
    # The parameter's reader and three sleeps, each an instance of its own; nothing slept.
    assert out["ran"] == 4, out
    assert out["sleeps_s"] == 0.0
    assert out["airflow_s"] == pytest.approx(out["wall_s"])
    # Its Airflow home is gone, and the project's own metadata database never saw the floor DAG.
    assert sorted((ROOT / ".cache").glob("floor-*")) == before
    db = own_home / "airflow.db"
    if db.exists():
        import sqlite3

        with sqlite3.connect(db) as con:
            tables = {r[0] for r in con.execute("select name from sqlite_master where type = 'table'")}
            if "dag" in tables:
                assert con.execute("select count(*) from dag where dag_id = ?", (floor.DAG_ID,)).fetchone()[0] == 0


def test_a_bad_count_fails_before_airflow_starts() -> None:
    with pytest.raises(ValueError, match="tasks"):
        floor.dags_test_floor(tasks=1)
    with pytest.raises(ValueError, match="seconds"):
        floor.dags_test_floor(tasks=3, seconds=-1)


def test_the_scheduler_floor_folder_holds_the_project_dags_and_the_floor(tmp_path: Path) -> None:
    from airflow.dag_processing.dagbag import DagBag

    folder = floor.dag_folder(tmp_path, with_project=True)
    bag = DagBag(dag_folder=str(folder))
    assert bag.import_errors == {}, bag.import_errors
    assert {floor.DAG_ID, "jsonb_benchmark_matrix", "jsonb_benchmark_report"} <= set(bag.dags)
    hold = bag.dags[floor.DAG_ID].get_task("hold")
    assert hold.pool == "benchmark_host"
    # Only the floor itself, without the project's DAGs, for `dags test`.
    alone = floor.dag_folder(tmp_path / "alone", with_project=False)
    assert sorted(p.name for p in alone.iterdir()) == [f"{floor.DAG_ID}.py"]


def test_the_floor_sleeps_the_run_s_task_durations_in_start_order() -> None:
    tis = [
        {"task_id": "b", "start_date": "2026-12-06T12:00:05Z", "duration": 2.0},
        {"task_id": "a", "start_date": "2026-12-06T12:00:01Z", "duration": 3.5},
        {"task_id": "skipped", "start_date": None, "duration": None},
    ]
    assert durations_in_order(tis) == [3.5, 2.0]


def test_the_report_says_the_dag_s_own_share_beyond_the_floor() -> None:
    out = {
        "wall_s": 130.0,
        "task_seconds": {"w": 100.0},
        "floor": {
            "run_id": "manual__f",
            "state": "success",
            "wall_s": 115.0,
            "task_seconds": {"hold": 100.0},
            "sleeps": 50,
            "slept_s": 99.0,
            "gaps": {"gaps": 15.0, "count": 50, "to_queued_s": 14.0, "to_start_s": 1.0, "with_links_s": 0.0, "links": 0},
            "airflow_cpu_s": {"airflow scheduler": 10.0},
        },
    }
    words = "\n".join(_floor_words(out))
    assert "own share: +0.150 of its 1.300" in words
    assert "115.0 s / 100.0 s = 1.150" in words
    assert _floor_words({"wall_s": 1.0}) == []
