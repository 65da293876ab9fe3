"""The pieces a command table is made of: an option said once (:class:`Arg`), a command (:class:`ActionCommand`).

In the style of Airflow's ``cli_config``: a command names its function by import path, so building the parser (and
printing ``--help``) imports none of the command's code; the function is imported when its command runs. An option's
closed set of values may come from the matrix file (:class:`MatrixValues`), read when a help text shows it or a value
is checked against it, never when the top-level help is printed. ``jsonbench_dev`` builds its own table from these
same classes.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

#: The help group of the commands a user runs, and the one of the steps ``./bin/setup`` runs.
COMMANDS = "commands"
SETUP = "setup steps, run by ./bin/setup"


class Arg:
    """One option or positional argument: its flags, its help, and what else ``add_argument`` takes.

    ``listing`` names a :class:`MatrixValues` whose values the help text shows as ``%(listing)s`` (for a
    comma-separated list, whose values the run's plan checks and names the field of).
    """

    def __init__(
        self, flags: tuple[str, ...], help: str, listing: MatrixValues | None = None, exclusive: str | None = None, **kwargs: Any
    ) -> None:
        self.flags = flags
        self.help = help
        self.listing = listing
        #: Arguments of one command that name the same ``exclusive`` group may not be given together.
        self.exclusive = exclusive
        self.kwargs = kwargs

    def but(self, help: str | None = None, **changes: Any) -> Arg:
        """The same argument with some of its settings changed (a required ``--scale``, another default)."""
        return Arg(self.flags, help or self.help, self.listing, self.exclusive, **{**self.kwargs, **changes})

    def add_to(self, parser: argparse.ArgumentParser | argparse._MutuallyExclusiveGroup) -> argparse.Action:
        action = parser.add_argument(*self.flags, help=self.help, **self.kwargs)
        if self.listing is not None:
            action.listing = self.listing  # type: ignore[attr-defined]  # read by the help text's %(listing)s
        return action


@dataclass(frozen=True)
class ActionCommand:
    """A command: its name, one-line help, the function it runs (``module:function``, taking the parsed arguments and
    returning the exit status) and its arguments. ``description`` is the longer text of its own ``--help``; ``doc_of``
    names a module whose docstring is that text instead (read from its file when the help is printed, not imported)."""

    name: str
    help: str
    func: str
    args: tuple[Arg, ...] = ()
    description: str | None = None
    doc_of: str | None = None
    group: str = COMMANDS


class UsageError(Exception):
    """A command's arguments do not go together: its parser prints its usage and the message, and exits with 2."""


class CommandParser(argparse.ArgumentParser):
    """An argument parser whose description may be read only when its help is printed (``describe``)."""

    def __init__(self, *args: Any, describe: Callable[[], str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.describe = describe

    def format_help(self) -> str:
        if self.describe is not None:
            self.description, self.describe = self.describe(), None
        return super().format_help()


def module_doc(module: str) -> str:
    """The docstring of ``module``, read from its source file without importing it."""
    import ast
    import importlib.util

    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return ""
    with open(spec.origin, encoding="utf-8") as fh:
        return ast.get_docstring(ast.parse(fh.read())) or ""


class MatrixValues(Sequence[str]):
    """A closed set of values read from the matrix file when first needed (``--scale``'s choices, the engines listed).

    A matrix file that does not load admits every value here: the run's plan then refuses it, naming the file and
    the field, which says more than "invalid choice" would.
    """

    def __init__(self, what: str, read: Callable[[Any], Sequence[str]]) -> None:
        self.what = what
        self._read = read
        self._values: tuple[str, ...] | None = None
        self.error: str | None = None

    def _load(self) -> tuple[str, ...]:
        if self._values is None:
            from jsonbench.errors import BenchmarkError
            from jsonbench.matrix import load_matrix

            try:
                self._values = tuple(self._read(load_matrix()))
            except BenchmarkError as exc:
                self.error, self._values = str(exc), ()
        return self._values

    def __getitem__(self, index: Any) -> Any:
        return self._load()[index]

    def __len__(self) -> int:
        return len(self._load())

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __contains__(self, value: object) -> bool:
        values = self._load()
        return self.error is not None or value in values

    def __str__(self) -> str:
        values = self._load()
        return ", ".join(values) if not self.error else f"(the matrix file does not load: {self.error})"


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions as written; each option's help followed by its choices and its default, where it has them."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if action.choices is not None and "%(choices)" not in text and not isinstance(action, argparse._SubParsersAction):
            text += "; one of: %(choices)s"
        default = action.default
        if default is not None and default is not False and default not in (argparse.SUPPRESS, []) and "%(default)" not in text:
            text += " (default: %(default)s)"
        return text
