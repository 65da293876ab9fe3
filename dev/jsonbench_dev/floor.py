"""Benchmark command: Airflow's own floor under the benchmark DAG's orchestration overhead.

Two targets measure what orchestration adds: a scheduler run's wall time over its task sum (at most
1.02), and a one-cell ``dags test`` run's time beyond its cell (at most 10 s). Both hold Airflow's own cost, which no
DAG can remove, beside the benchmark DAG's. This module measures that floor on the same machine, with the same
Airflow and settings, by running :mod:`jsonbench_dev.floor_dag` (sleeps, one at a time through the same pool):

* :func:`dags_test_floor` (``jsonbench-dev airflow-floor --tasks N``): ``airflow dags test`` of N tasks sleeping 0 s, in a
  private Airflow home, as ``jsonbench run`` runs the benchmark: Airflow's start, its parses, its in-process execution
  API and its exit, with no plan, canary, engine or check;
* ``jsonbench-dev scheduler-run --floor``: the same private scheduler that ran the benchmark runs the floor DAG right after
  it, each task sleeping one of the run's task durations (:mod:`jsonbench_dev.scheduler_trial`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from jsonbench import paths
from jsonbench.cli import UsageError
from jsonbench_dev import child_pythonpath

#: The floor DAG's id, and its file (copied into a private DAG folder, never imported here: it defines a DAG).
DAG_ID = "jsonbench_floor"
DAG_FILE = Path(__file__).with_name("floor_dag.py")


def dag_folder(where: Path, with_project: bool) -> Path:
    """A private DAG folder under ``where``: the floor DAG, and links to the project's DAG files when ``with_project``.

    The floor DAG never lives in the project's ``dags/``: a user's Airflow would show it.
    """
    folder = where / "dags"
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(DAG_FILE, folder / f"{DAG_ID}.py")
    if with_project:
        for dag_file in sorted((paths.PROJECT_ROOT / "dags").glob("*.py")):
            (folder / dag_file.name).symlink_to(dag_file)
    return folder


def _run(argv: list[str], env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, env=env, capture_output=True, text=True, check=True, timeout=timeout)


def dags_test_floor(tasks: int, seconds: float = 0.0) -> dict[str, Any]:
    """``airflow dags test`` of the floor DAG with ``tasks`` task instances in all (one reads the parameter, the rest
    sleep ``seconds`` each), timed from the command's start to its exit, as :func:`jsonbench.cli.run_dag` times a run.

    Runs in a private Airflow home (its metadata database migrated first, not timed), so the project's own metadata
    database never sees the floor DAG. Returns the wall time, the sleeps' sum and what is left: Airflow's own.
    """
    from jsonbench.environment import apply

    if tasks < 2:
        raise ValueError(f"tasks: at least 2 (the parameter's reader and one sleep), got {tasks}")
    if seconds < 0:
        raise ValueError(f"seconds: must not be negative, got {seconds}")
    cache = paths.PROJECT_ROOT / ".cache"
    cache.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="floor-", dir=cache))
    try:
        env = dict(apply(dict(os.environ)))
        env.update(
            {
                "AIRFLOW_HOME": str(work / "airflow"),
                "AIRFLOW__CORE__DAGS_FOLDER": str(dag_folder(work, with_project=False)),
                "PYTHONPATH": child_pythonpath(paths.PROJECT_ROOT / "plugins", env),
            }
        )
        airflow = shutil.which("airflow", path=env.get("PATH")) or "airflow"
        _run([airflow, "db", "migrate"], env, 600)
        sleeps = [seconds] * (tasks - 1)
        t0 = time.perf_counter()
        done = _run([airflow, "dags", "test", DAG_ID, "-c", json.dumps({"seconds": sleeps})], env, 600)
        wall = time.perf_counter() - t0
        ran = done.stdout.count("[DAG TEST] end task")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"tasks": tasks, "ran": ran, "wall_s": wall, "sleeps_s": sum(sleeps), "airflow_s": wall - sum(sleeps)}


def report(out: dict[str, Any]) -> str:
    return (
        f"airflow dags test of {out['tasks']} tasks ({out['ran']} ran) sleeping {out['sleeps_s']:.1f} s in all: "
        f"{out['wall_s']:.1f} s, of which Airflow's own {out['airflow_s']:.1f} s "
        "(its start, its parses of the DAG, its in-process execution API, each task's start and end, its exit)"
    )


def main(args: argparse.Namespace) -> int:
    """``jsonbench-dev airflow-floor``: the ``dags test`` floor of a run of ``--tasks`` tasks."""
    try:
        out = dags_test_floor(args.tasks, args.seconds)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    print(report(out))
    return 0
