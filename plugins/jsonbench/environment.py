"""The project's Airflow and jsonbench environment, said once for the shell scripts and the ``jsonbench`` command.

Every command the README prints must work from a fresh shell: no ``source bin/env.sh``, no
``PATH`` beyond the system's, no ``AIRFLOW_HOME``. So :func:`apply` is the first thing the
``jsonbench`` command (and ``python -m jsonbench.cli``) does: each variable below gets its default
unless the caller set it, and the folder of the running interpreter (the venv's ``bin/``, where
``airflow`` and ``pgbench``'s neighbours live) goes first on ``PATH`` for the processes it starts.
``bin/env.sh`` reads the same defaults (``python3 plugins/jsonbench/environment.py --sh``), so the
scripts and the command cannot disagree. Standard library only: it runs before the venv exists.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import MutableMapping
from pathlib import Path

#: The project root: the folder holding ``dags/``, ``plugins/`` and ``include/``.
HOME = Path(__file__).resolve().parents[2]


def defaults(home: Path | None = None) -> dict[str, str]:
    """Each variable and its default (the caller's value wins, see :func:`apply`)."""
    root = Path(os.environ.get("JSONBENCH_HOME") or home or HOME)
    return {
        "JSONBENCH_HOME": str(root),
        "AIRFLOW_HOME": str(root / ".airflow"),
        "AIRFLOW__CORE__DAGS_FOLDER": str(root / "dags"),
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(root / "plugins"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__UNIT_TEST_MODE": "False",
        # The DAG processor must not time out while importing the DAG files on a busy 2-core box.
        "AIRFLOW__CORE__DAGBAG_IMPORT_TIMEOUT": "120",
        "AIRFLOW__CORE__DAG_FILE_PROCESSOR_TIMEOUT": "180",
        # A benchmark host should not spend its CPU re-parsing an unchanged DAG file while it measures: one
        # parse of the whole matrix costs the DAG processor about 3-4 CPU seconds, one core's worth beside the
        # measure windows. Every 300 s, the parses of a laptop run through the scheduler were the most CPU in
        # its disturbed windows (7.3 s), so an unchanged file is parsed once a day. A changed file
        # is parsed at the next directory refresh all the same (Airflow's default modified_time sort mode
        # queues a file modified since its last parse whatever this interval says).
        "AIRFLOW__DAG_PROCESSOR__MIN_FILE_PROCESS_INTERVAL": "86400",
        "AIRFLOW__DAG_PROCESSOR__PARSING_PROCESSES": "1",
        "JSONBENCH_RESULTS_DIR": str(root / "results"),
    }


def apply(env: MutableMapping[str, str] | None = None, bin_dir: str | None = None) -> MutableMapping[str, str]:
    """Fill ``env`` (``os.environ``) with the defaults it lacks; put ``bin_dir`` (the interpreter's folder) first on PATH
    and the project's ``plugins/`` on PYTHONPATH, for the processes it starts (``airflow dags test`` and its tasks)."""
    target = os.environ if env is None else env
    for key, value in defaults().items():
        if not target.get(key):
            target[key] = value
    plugins = str(Path(target["JSONBENCH_HOME"]) / "plugins")
    paths = [p for p in target.get("PYTHONPATH", "").split(os.pathsep) if p]
    if plugins not in paths:
        target["PYTHONPATH"] = os.pathsep.join([plugins, *paths])
    first = bin_dir or str(Path(sys.executable).parent)
    parts = [p for p in target.get("PATH", os.defpath).split(os.pathsep) if p]
    if not parts or parts[0] != first:
        target["PATH"] = os.pathsep.join([first, *[p for p in parts if p != first]])
    return target


def shell_exports(env: MutableMapping[str, str] | None = None) -> str:
    """``export NAME=value`` lines for every default the environment lacks (what ``bin/env.sh`` evaluates)."""
    current = os.environ if env is None else env
    lines = [f"export {k}={shlex.quote(current.get(k) or v)}" for k, v in defaults().items()]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    if sys.argv[1:] != ["--sh"]:
        sys.exit("usage: python3 plugins/jsonbench/environment.py --sh")
    sys.stdout.write(shell_exports())
