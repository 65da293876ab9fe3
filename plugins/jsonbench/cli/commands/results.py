"""``summary``, ``report``, ``views`` and ``damaged``: a published run's outcome and the results folder's health."""

from __future__ import annotations

import argparse


def summary(args: argparse.Namespace) -> int:
    from jsonbench.report.summary import summary as text

    print(text(args.results_dir, args.run_id))
    return 0


def report(args: argparse.Namespace) -> int:
    from jsonbench.report import build_report

    print(f"report: {build_report(args.results_dir, args.run_id)}")
    return 0


def views(args: argparse.Namespace) -> int:
    from jsonbench.dataset.views import refresh

    print(f"views: {refresh(args.results_dir)}")
    return 0


def damaged(args: argparse.Namespace) -> int:
    from jsonbench.dataset.repair import damaged_command

    return damaged_command(args.results_dir, args.quarantine)
