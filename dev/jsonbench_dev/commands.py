"""The functions of the instruments whose table entry names no module of their own (``jsonbench_dev.cli``).

Each imports what it needs when it runs, so ``jsonbench-dev --help`` pays for none of it.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from jsonbench import paths
from jsonbench.cli.config import conf_of


def handcheck(args: argparse.Namespace) -> int:
    from jsonbench_dev.handcheck import handcheck as check

    print(check(args.engine, args.rows, args.repetitions))
    return 0


def fat_update_handcheck(args: argparse.Namespace) -> int:
    from jsonbench_dev.handcheck import fat_update_handcheck as check

    print(check(args.engine, args.scale, args.rounds))
    return 0


def fat_update_wal_clients(args: argparse.Namespace) -> int:
    from jsonbench_dev.handcheck import fat_update_wal_clients as check

    print(check(args.engine, args.scale, args.rounds))
    return 0


def fat_update_reads(args: argparse.Namespace) -> int:
    from jsonbench_dev.handcheck import fat_update_reads as check

    print(check(args.engine, args.scale, args.rounds))
    return 0


def load_handcheck(args: argparse.Namespace) -> int:
    from jsonbench_dev.handcheck import load_handcheck as check

    print(check(args.engine, args.scale, args.rounds))
    return 0


def pgbench_overhead(args: argparse.Namespace) -> int:
    from jsonbench_dev.pgbench_overhead import measure, report

    print(report(measure(args.engine, args.script, args.seconds, args.rounds, args.scale)))
    return 0


def quiet_check(args: argparse.Namespace) -> int:
    from jsonbench_dev.quietcheck import measure, report

    text, ok = report(*measure(args.seconds, args.engine))
    print(text)
    return 0 if ok else 1


def overhead(args: argparse.Namespace) -> int:
    """``jsonbench run``'s own path (the DAG, the summary, the views, the report), then the phase table."""
    from jsonbench.cli.commands.run import run_and_report
    from jsonbench_dev.overhead import overhead_report

    conf = conf_of(args)
    out = run_and_report(conf, args.resume)
    if out.run_id:
        print()
        print(overhead_report(conf.get("results_dir"), out.run_id, out.wall_s, out.task_seconds))
    return out.status


def scheduler_run(args: argparse.Namespace) -> int:
    from jsonbench.orchestration.dagtest import preview
    from jsonbench_dev.scheduler_trial import report as run_report
    from jsonbench_dev.scheduler_trial import scheduler_run as trial

    conf = conf_of(args)
    # A bad parameter fails here, before Airflow starts. Then wait for the run as long as its plan says it takes, three
    # times over (a laptop matrix takes most of an hour on 2 cores; a wait that ran out would stop Airflow under a cell).
    _, expected = preview(conf)
    out = trial(conf, port=args.port, timeout_s=max(3600.0, 3 * sum(expected.values()) + 900), floor=args.floor)
    print(run_report(out))
    return 0 if out.get("state") == "success" else 1


def calibrate(args: argparse.Namespace) -> int:
    from jsonbench_dev.calibrate import as_json, calibrate, render

    if args.record:
        from jsonbench_dev.record import build_record, parse_exclude, render_record, write_record

        sources = None
        if args.recorded:
            from jsonbench_dev.recheck import folders_to_check

            sources = folders_to_check([args.results_dir] if args.results_dir else [])
        record = build_record(
            paths.results_dir(args.results_dir),
            args.scale,
            args.hardware_label or "local",
            exclude=parse_exclude(args.exclude),
            why=args.why,
            command="bin/jsonbench-dev " + shlex.join(sys.argv[1:]),
            sources=sources,
        )
        print(render_record(record))
        print(f"record: {write_record(record, args.results_dir)}")
        return 0
    cals = calibrate(
        paths.results_dir(args.results_dir),
        args.scale,
        args.hardware_label,
        [s for s in (args.suites or "").split(",") if s] or None,
        args.fact_tolerance,
        include_disturbed=args.include_disturbed,
    )
    print(as_json(cals) if args.as_json else render(cals, args.scale, args.fact_tolerance))
    return 0


def campaign(args: argparse.Namespace) -> int:
    from jsonbench.orchestration.dagtest import resume_args, run_dag
    from jsonbench_dev.campaign import campaign as run_campaign

    return run_campaign(conf_of(args), args.runs, run_dag=run_dag, resume_args=resume_args)


def checkcheck(args: argparse.Namespace) -> int:
    from jsonbench_dev.checkcheck import checkcheck as check
    from jsonbench_dev.checkcheck import render_checkcheck, save

    outcome = check(
        paths.results_dir(args.results_dir),
        hardware_label=args.hardware_label,
        scale=args.scale,
        work_dir=args.work_dir,
        kinds=[k for k in (args.kinds or "").split(",") if k] or None,
        honest=args.honest,
        target=args.target,
        measure_power=args.power,
    )
    print(json.dumps(outcome, indent=1, default=str) if args.as_json else render_checkcheck(outcome))
    print(f"figures: {save(outcome, args.save_to)}", file=sys.stderr)
    return 0 if outcome.get("ok") else 1


def figures(args: argparse.Namespace) -> int:
    from jsonbench.report.figures import write_markdown

    dirs = args.results_dirs or [str(paths.results_dir(None))]
    print(f"figures: {write_markdown(dirs, Path(args.out))} (from {', '.join(dirs)})")
    return 0
