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
#: Honest recorded runs of hosts of the reference type, which ``jsonbench-dev recheck`` judges every band on.
RECORDED_DIR = PROJECT_ROOT / "recorded"


def include_dir() -> Path:
    """The folder holding ``matrix.yaml``, ``sql/`` and ``expectations/`` (``$JSONBENCH_INCLUDE_DIR`` overrides)."""
    return Path(os.environ.get("JSONBENCH_INCLUDE_DIR") or INCLUDE_DIR)


def matrix_file() -> Path:
    """The matrix file (``$JSONBENCH_MATRIX`` overrides, else ``<include>/matrix.yaml``)."""
    return Path(os.environ.get("JSONBENCH_MATRIX") or include_dir() / "matrix.yaml")


def sql_dir() -> Path:
    return include_dir() / "sql"


def expectations_dir() -> Path:
    return include_dir() / "expectations"


#: Engine builds fetched by the setup (``engines/postgres/node_modules`` holds the npm packages).
ENGINES_DIR = Path(os.environ.get("JSONBENCH_ENGINES_DIR") or PROJECT_ROOT / "engines")


def results_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The results root: the argument, else ``$JSONBENCH_RESULTS_DIR``, else ``results/``."""
    chosen = override or os.environ.get("JSONBENCH_RESULTS_DIR") or PROJECT_ROOT / "results"
    return Path(chosen).resolve()


def recorded_folders(root: Path | None = None) -> list[Path]:
    """The results folders under ``recorded/`` (or ``root``): one per host and campaign, each with its ``measurements/``."""
    root = root or RECORDED_DIR
    return sorted(p for p in root.iterdir() if (p / "measurements").is_dir()) if root.is_dir() else []


def scratch_dir() -> Path:
    """Where throwaway server data directories go (``$JSONBENCH_SCRATCH_DIR``, else the system temp)."""
    import tempfile

    return Path(os.environ.get("JSONBENCH_SCRATCH_DIR") or tempfile.gettempdir())


def host_lock_dir() -> Path:
    """Where the host lease lives (``$JSONBENCH_HOST_LOCK_DIR``, else ``<system temp>/jsonbench-host``).

    One folder per machine: every run on the host, from any process or Airflow deployment, takes
    the lease in the same place, so two runs never have engines alive at once.
    """
    import tempfile

    return Path(os.environ.get("JSONBENCH_HOST_LOCK_DIR") or Path(tempfile.gettempdir()) / "jsonbench-host")
