"""``run``, ``plan`` and ``rerun``: the benchmark DAG on this machine, its cost beforehand, a run again in place."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from typing import Any

from jsonbench.cli.config import conf_of


def run(args: argparse.Namespace) -> int:
    """The DAG once, then its summary, the SQL views and the report; 0 when the run succeeded."""
    return run_and_report(conf_of(args), args.resume).status


@dataclass(frozen=True)
class Outcome:
    """What a run from the command line came to: its exit status, the run its rows are under, its times."""

    status: int
    run_id: str | None
    wall_s: float
    task_seconds: dict[str, float]


def run_and_report(conf: dict[str, Any], resume: str | None = None) -> Outcome:
    """``jsonbench run``'s path (``resume``: a run id to run again), also taken by the instruments that time it."""
    from jsonbench.orchestration.dagtest import resume_args, run_dag
    from jsonbench.report.summary import summary

    logical = None
    if resume:
        conf, logical = resume_args(resume, conf.get("results_dir"))
    run_id, state, wall, task_seconds = run_dag(conf, logical_date=logical)
    print(f"\nDAG run {run_id}: {state} in {wall:.1f} s")
    if conf.get("resume_of"):  # the rows are published under the run it finished, not under this Airflow run's id
        print(f"(it finished run {conf['resume_of']}, under whose id its rows are published)")
        run_id = conf["resume_of"]
    if run_id:
        print(summary(conf.get("results_dir"), run_id))
        try:  # the views and the report of this run; the run's results stand without them
            from jsonbench.dataset.views import refresh
            from jsonbench.report import build_report

            refresh(conf.get("results_dir"))
            print(f"\nReport: {build_report(conf.get('results_dir'), run_id)}")
        except Exception as exc:
            print(f"\nreport not built: {type(exc).__name__}: {exc}", file=sys.stderr)
    return Outcome(0 if state == "success" else 1, run_id, wall, task_seconds)


def plan(args: argparse.Namespace) -> int:
    from jsonbench.orchestration.dagtest import preview

    print(preview(conf_of(args))[0])
    return 0


def rerun(args: argparse.Namespace) -> int:
    from jsonbench.orchestration.rerun import rerun as again

    return again(args.run_id, args.dag_id, json.loads(args.conf) if args.conf else None)
