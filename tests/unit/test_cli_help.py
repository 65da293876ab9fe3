"""The user's command line as its ``--help`` shows it: the commands it lists, every option explained, the texts recorded.

``jsonbench --help`` lists the user's commands, then the setup steps ``./bin/setup`` runs, each with its one-line
help, and nothing else (the maintainers' instruments are ``./bin/jsonbench-dev``'s). Every option of every command has
a help text. Printing the help imports neither Airflow nor pandas. And the help texts are compared with
``tests/unit/data/cli_help.golden.txt`` at a fixed terminal width, so that a move of code changes none of them: the
texts a change adds or rewrites on purpose go in with ``JSONBENCH_UPDATE_GOLDEN=1``, and the test then fails once
more, saying so, so that a rewrite never passes unnoticed.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from jsonbench.cli import SETUP, jsonbench_parser
from jsonbench.cli.parser import subparsers

GOLDEN = Path(__file__).with_name("data") / "cli_help.golden.txt"
USER_COMMANDS = ["run", "plan", "compare", "summary", "report", "views", "damaged", "rerun", "host", "airflow"]
SETUP_STEPS = ["link-engines", "install-sqlite", "install-otava", "sample-documents"]


def _help_of(argv: list[str]) -> str:
    """What ``jsonbench <argv> --help`` prints (argparse exits after printing)."""
    from jsonbench.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main([*argv, "--help"])
    return out.getvalue()


def help_texts() -> str:
    """The top-level help, then each command's, each under a header line naming it."""
    parts = ["### jsonbench --help", _help_of([])]
    for name in sorted(subparsers(jsonbench_parser())):
        parts += [f"### jsonbench {name} --help", _help_of([name])]
    return "\n".join(parts)


def _listed(text: str, section: str) -> dict[str, str]:
    """The entries of one section of the top-level help: name -> its help line (continuations joined)."""
    body = text.split(f"\n{section}:\n", 1)[1].split("\n\n", 1)[0]
    out: dict[str, str] = {}
    name = ""
    for line in body.splitlines():
        m = re.match(r"^ {2,4}([a-z][a-z-]*)(?: {2,}(.*))?$", line)
        if m and not line.startswith(" " * 6):
            name = m.group(1)
            out[name] = m.group(2) or ""
        elif name:
            out[name] = (out[name] + " " + line.strip()).strip()
    return out


def test_the_top_level_help_lists_the_users_commands_and_the_setup_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    text = _help_of([])
    commands, setup = _listed(text, "commands"), _listed(text, SETUP)
    assert list(commands) == USER_COMMANDS, commands
    assert list(setup) == SETUP_STEPS, setup
    assert all(len(line) > 20 for line in [*commands.values(), *setup.values()]), "every command has its one-line help"
    assert set(subparsers(jsonbench_parser())) == {*USER_COMMANDS, *SETUP_STEPS}, "no command hides from the listing"


def test_no_option_lacks_help() -> None:
    parsers = {"jsonbench": jsonbench_parser(), **{f"jsonbench {k}": v for k, v in subparsers(jsonbench_parser()).items()}}
    bare = [
        f"{prog} {'/'.join(a.option_strings) or a.dest}"
        for prog, p in parsers.items()
        for a in p._actions
        if not isinstance(a, argparse._SubParsersAction) and not (a.help and a.help.strip() and a.help != argparse.SUPPRESS)
    ]
    assert len(parsers) == 1 + len(USER_COMMANDS) + len(SETUP_STEPS) and sum(len(p._actions) for p in parsers.values()) >= 50, (
        "the walk reaches every command's options"
    )
    assert bare == []


def test_run_help_lists_this_checkouts_scales_suites_engines_and_backends(monkeypatch: pytest.MonkeyPatch) -> None:
    from jsonbench.matrix import load_matrix

    monkeypatch.setenv("COLUMNS", "400")  # one line per option: the lists are not wrapped
    m = load_matrix()
    for cmd in ("run", "plan"):
        text = _help_of([cmd])
        for what, names in (("scale", m.scales), ("engines", m.engines), ("suites", m.suites), ("backend", m.backends)):
            line = next(line for line in text.splitlines() if line.strip().startswith(f"--{what} "))
            assert all(n in line for n in names), (cmd, what, line)


def test_a_bad_value_fails_before_any_work(capsys: pytest.CaptureFixture[str]) -> None:
    from jsonbench.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["plan", "--scale", "enormous"])
    assert exc.value.code == 2 and "invalid choice: 'enormous'" in capsys.readouterr().err
    assert main(["plan", "--engines", "postgres-99"]) == 2
    assert "engines: unknown engine 'postgres-99'" in capsys.readouterr().err, "a comma-separated list is checked by the plan"


def test_printing_help_imports_neither_airflow_nor_pandas() -> None:
    code = (
        "import contextlib, io, sys\n"
        "from jsonbench.cli import main\n"
        "for argv in ([], ['run'], ['summary']):\n"
        "    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "        main([*argv, '--help'])\n"
        "print(sorted(m for m in ('airflow', 'pandas', 'pyarrow') if m in sys.modules))\n"
    )
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert got.returncode == 0, got.stderr
    assert got.stdout.strip() == "[]"


def test_every_help_text_is_the_recorded_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    text = help_texts()
    if os.environ.get("JSONBENCH_UPDATE_GOLDEN") == "1":
        GOLDEN.write_text(text, encoding="utf-8")
        pytest.fail(f"rewrote {GOLDEN}: review its diff, then run again without JSONBENCH_UPDATE_GOLDEN")
    golden = GOLDEN.read_text(encoding="utf-8")
    diff = "".join(difflib.unified_diff(golden.splitlines(True), text.splitlines(True), "golden", "now", n=1))
    assert text == golden, f"the --help texts changed (JSONBENCH_UPDATE_GOLDEN=1 rewrites the golden file):\n{diff[:4000]}"
