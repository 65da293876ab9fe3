"""Every ``--help`` text of the command line comes out as recorded: a move of code between rooms changes none of them.

``python -m jsonbench.cli --help`` and the help of each of its subcommands (those whose parser is the
command line's own, and those that parse their own arguments, such as ``rerun`` and ``views``) are
compared with ``tests/unit/data/cli_help.golden.txt``, at a fixed terminal width. The golden file was
written from the tree after the package was sorted into rooms (issue 21), whose texts equal those of
the move itself (8557343); before it (57f61bc) every subcommand printed the same text and the top level
lacked only the four entry points the move brought into ``cli``. The texts a later change adds or rewrites on purpose
go in with ``JSONBENCH_UPDATE_GOLDEN=1``, and the test then fails once more, saying so, so that a
rewrite never passes unnoticed.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import io
import os
from pathlib import Path

import pytest

GOLDEN = Path(__file__).with_name("data") / "cli_help.golden.txt"


def _help_of(argv: list[str]) -> str:
    """What ``jsonbench <argv> --help`` prints (argparse exits after printing)."""
    from jsonbench.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main([*argv, "--help"])
    return out.getvalue()


def help_texts() -> str:
    """The top-level help, then each subcommand's, each under a header line naming it."""
    from jsonbench.cli import _OWN_PARSERS, _parser

    sub = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    names = sorted(sub.choices)
    parts = ["### jsonbench --help", _help_of([])]
    for name in names:
        parts += [f"### jsonbench {name} --help", _help_of([name])]
    assert set(_OWN_PARSERS) <= set(names), "a command that parses its own arguments is listed in --help too"
    return "\n".join(parts)


def test_every_help_text_is_the_recorded_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    text = help_texts()
    if os.environ.get("JSONBENCH_UPDATE_GOLDEN") == "1":
        GOLDEN.write_text(text, encoding="utf-8")
        pytest.fail(f"rewrote {GOLDEN}: review its diff, then run again without JSONBENCH_UPDATE_GOLDEN")
    golden = GOLDEN.read_text(encoding="utf-8")
    diff = "".join(difflib.unified_diff(golden.splitlines(True), text.splitlines(True), "golden", "now", n=1))
    assert text == golden, f"the --help texts changed (JSONBENCH_UPDATE_GOLDEN=1 rewrites the golden file):\n{diff[:4000]}"
