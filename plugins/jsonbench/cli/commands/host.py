"""``host`` and ``airflow``: the benchmark host's lease, and Airflow's own command line with the project's environment."""

from __future__ import annotations

import argparse


def host(args: argparse.Namespace) -> int:
    from jsonbench.host import lease as hostlease

    lease = hostlease.holder() if args.action == "status" else hostlease.force_release()
    what = "holds" if args.action == "status" else "released; it held"
    print(
        f"{lease.cell_id} of run {lease.run_id} {what} the host since {lease.acquired_at} (engine folder {lease.workdir})"
        if lease
        else "the host is free"
    )
    return 0


def airflow(args: argparse.Namespace) -> int:
    """The venv's ``airflow ARGS...`` (the environment is the project's: :func:`jsonbench.cli.main` applied it)."""
    import shutil
    import subprocess

    exe = shutil.which("airflow") or "airflow"
    return subprocess.run([exe, *(["--help"] if args.args == ["help"] else args.args)]).returncode
