"""The maintainers' instruments: the benchmark of the benchmark and the check of the checks (``./bin/jsonbench-dev``).

The handchecks (the pipeline against the same work by hand), the pgbench overhead, what orchestration costs and
Airflow's floor beneath it, a run through a private scheduler, the report's build benchmark, the checks' calibration
and the record it writes, their own check (checkcheck), drift on every recorded host, where noise enters, the
derivation of the deterministic facts, the quiet detector's check and the calibration campaign. The command table is
:mod:`jsonbench_dev.cli`. This package lives outside ``plugins/``: it is neither in the wheel nor in the Airflow
containers, and nothing of the product imports it (``tests/unit/test_import_graph.py``), so a change here cannot
change what the DAGs measure or judge.
"""

from __future__ import annotations

import os
from pathlib import Path

#: The folder that holds this package: a child Airflow that imports one of its DAG files needs it on its path.
DEV_ROOT = Path(__file__).resolve().parent.parent


def child_pythonpath(plugins: Path, env: dict[str, str]) -> str:
    """``PYTHONPATH`` for a child process that loads this package's DAG files: the product's plugins, this package's
    folder, then whatever the environment already had."""
    parts = [str(plugins), str(DEV_ROOT)]
    if env.get("PYTHONPATH"):
        parts.append(env["PYTHONPATH"])
    return os.pathsep.join(parts)
