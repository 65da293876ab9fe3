"""Where the project's files live: the project root, SQL, expectations, engine builds, results."""

from __future__ import annotations

import os
from pathlib import Path

#: The project root: the folder holding ``dags/``, ``plugins/`` and ``include/``.
PROJECT_ROOT = Path(os.environ.get("JSONBENCH_HOME", Path(__file__).resolve().parents[2]))

INCLUDE_DIR = PROJECT_ROOT / "include"
SQL_DIR = INCLUDE_DIR / "sql"
EXPECTATIONS_DIR = INCLUDE_DIR / "expectations"
MATRIX_FILE = INCLUDE_DIR / "matrix.yaml"

#: Engine builds fetched by the setup (``engines/postgres/node_modules`` holds the npm packages).
ENGINES_DIR = Path(os.environ.get("JSONBENCH_ENGINES_DIR") or PROJECT_ROOT / "engines")


def results_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The results root: the argument, else ``$JSONBENCH_RESULTS_DIR``, else ``results/``."""
    chosen = override or os.environ.get("JSONBENCH_RESULTS_DIR") or PROJECT_ROOT / "results"
    return Path(chosen).resolve()


def scratch_dir() -> Path:
    """Where throwaway server data directories go (``$JSONBENCH_SCRATCH_DIR``, else the system temp)."""
    import tempfile

    return Path(os.environ.get("JSONBENCH_SCRATCH_DIR") or tempfile.gettempdir())
