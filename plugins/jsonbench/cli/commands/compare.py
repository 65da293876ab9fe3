"""``compare``: two arms (an engine of the matrix, with optional server settings) in interleaved pairs on this host."""

from __future__ import annotations

import argparse


def compare(args: argparse.Namespace) -> int:
    from jsonbench.compare.command import compare_command, parse_settings

    return compare_command(
        args.a,
        args.b,
        suites=[s for s in args.suites.split(",") if s],
        scale=args.scale,
        pairs=args.pairs,
        margin=args.margin,
        seed=args.seed,
        workloads=[w for w in (args.workloads or "").split(",") if w] or None,
        a_settings=parse_settings(args.a_setting, "--a-setting"),
        b_settings=parse_settings(args.b_setting, "--b-setting"),
        results_dir=args.results_dir,
        hardware_label=args.hardware_label,
        backend=args.backend,
    )
