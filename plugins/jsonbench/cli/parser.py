"""argparse from a command table: one subcommand per :class:`~jsonbench.cli.table.ActionCommand`, its arguments
added from its :class:`~jsonbench.cli.table.Arg` entries, and the top-level help listing the commands by group."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from jsonbench.cli.table import COMMANDS, ActionCommand, CommandParser, HelpFormatter, UsageError, module_doc


def build_parser(prog: str, description: str, commands: Sequence[ActionCommand]) -> argparse.ArgumentParser:
    """The parser of ``prog``: each command a subcommand (``args.command`` names it), listed in ``--help`` under its
    group ("commands" first, then the others in the order the table names them)."""
    parser = CommandParser(prog=prog, description=description, formatter_class=HelpFormatter)
    sub = parser.add_subparsers(title=COMMANDS, dest="command", metavar="COMMAND", required=True)
    groups: dict[str, list[ActionCommand]] = {}
    for cmd in commands:
        groups.setdefault(cmd.group, []).append(cmd)
    for cmd in commands:
        # Only the first group's commands are listed by the subparsers' own entry; the others get a section below.
        listed = {"help": cmd.help} if cmd.group == COMMANDS else {}
        doc_of = cmd.doc_of
        p = sub.add_parser(
            cmd.name,
            description=cmd.description or cmd.help,
            describe=(lambda m=doc_of: module_doc(m)) if doc_of else None,
            formatter_class=HelpFormatter,
            **listed,  # type: ignore[arg-type]
        )
        exclusive: dict[str, argparse._MutuallyExclusiveGroup] = {}
        for arg in cmd.args:
            if arg.exclusive and arg.exclusive not in exclusive:
                exclusive[arg.exclusive] = p.add_mutually_exclusive_group()
            arg.add_to(exclusive[arg.exclusive] if arg.exclusive else p)
        p.set_defaults(func=cmd.func)
    for title, members in groups.items():
        if title == COMMANDS:
            continue
        section = parser.add_argument_group(title)
        for cmd in members:
            # A line of the help only: argparse lists a subcommand in one section, so the others show theirs this way.
            section._group_actions.append(sub._ChoicesPseudoAction(cmd.name, (), cmd.help))
    return parser


def subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Each command's own parser, by name (for the tests that walk every option)."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def run(parser: argparse.ArgumentParser, argv: Sequence[str]) -> int:
    """Parse ``argv`` and run its command's function (imported now, not before); a :class:`BenchmarkError` becomes
    ``error: ...`` on stderr and exit status 2, and a :class:`UsageError` the command's usage and the message, as
    argparse does for a bad option."""
    import sys

    from jsonbench import load_object
    from jsonbench.errors import BenchmarkError

    args = parser.parse_args(list(argv))
    try:
        return int(load_object(args.func)(args))
    except BenchmarkError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except UsageError as exc:
        subparsers(parser)[args.command].error(str(exc))  # exits with 2, as for any bad argument
        raise  # not reached: error() exits
