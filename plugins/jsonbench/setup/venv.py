"""The two commands that make a venv of its own for a tool the project's venv cannot hold.

Both the SQLite builds (one apsw each) and Apache Otava (numpy pinned below the project's) get one:
a venv without pip, filled by this interpreter's pip with wheels only (``--only-binary``: nothing is
built from source, which would fetch sources from elsewhere) and without resolving dependencies
(``--no-deps``: the pins name every package).
"""

from __future__ import annotations

import sys
from pathlib import Path


def venv_commands(venv: Path, *pip_args: str) -> list[list[str]]:
    """Create ``venv``, then ``pip install`` ``pip_args`` (packages, or ``-r FILE``) into it."""
    return [
        [sys.executable, "-m", "venv", "--without-pip", str(venv)],
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-input",
            "--no-deps",
            "--only-binary",
            ":all:",
            *pip_args,
        ],
    ]
