"""The user's command line, ``jsonbench`` (``.venv/bin/jsonbench``, or ``python -m jsonbench.cli``).

Its commands and options are declared in :mod:`jsonbench.cli.config` (an option said once, a command one entry);
:mod:`jsonbench.cli.parser` builds argparse from that table and :mod:`jsonbench.cli.commands` holds the functions,
each imported only when its command runs, so ``jsonbench --help`` imports neither Airflow nor pandas. The
maintainers' instruments are another command, ``./bin/jsonbench-dev`` (``dev/jsonbench_dev``), built from the same
:class:`Arg` and :class:`ActionCommand`.
"""

from __future__ import annotations

import argparse
import sys

from jsonbench.cli.table import COMMANDS, SETUP, ActionCommand, Arg, HelpFormatter, MatrixValues, UsageError

__all__ = ["COMMANDS", "SETUP", "ActionCommand", "Arg", "HelpFormatter", "MatrixValues", "UsageError", "jsonbench_parser", "main"]


def jsonbench_parser() -> argparse.ArgumentParser:
    """The ``jsonbench`` parser, from the command table."""
    from jsonbench.cli import config
    from jsonbench.cli.parser import build_parser

    return build_parser("jsonbench", config.DESCRIPTION, config.COMMANDS)


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (the process's arguments by default) and run its command; returns the exit status.

    The project's environment is applied first (:func:`jsonbench.environment.apply`), so the command works
    the same from a fresh shell as after ``source bin/env.sh``.
    """
    from jsonbench import environment
    from jsonbench.cli.parser import run

    environment.apply()
    return run(jsonbench_parser(), sys.argv[1:] if argv is None else argv)
