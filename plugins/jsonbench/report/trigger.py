"""How the report DAG finds the run that triggered it, and waits for that run's checks.

The benchmark's publish task updates the Asset ``jsonbench_measurements`` before its check task
runs, so the report DAG may start while the checks are still validating. It waits (bounded) for
the run's validation rows to appear, then builds the report with or without them.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

DEFAULT_WAIT_S = 900


def source_run_id(context: Any) -> str | None:
    """The benchmark run id of the latest asset event that triggered this report run, if any."""
    events = context.get("triggering_asset_events") or {}
    latest = None
    try:
        for evs in events.values():
            for ev in evs:
                if getattr(ev, "source_run_id", None) and (latest is None or ev.timestamp >= latest.timestamp):
                    latest = ev
    except (AttributeError, TypeError):  # a context without asset events (manual trigger, dags test)
        return None
    return latest.source_run_id if latest is not None else None


def validations_present(results_dir: str | Path | None, run_id: str) -> bool:
    """True when the run's validation rows are stored."""
    from jsonbench import paths
    from jsonbench.dataset.schema import run_key

    root = paths.results_dir(results_dir) / "validations"
    return any(root.glob(f"hardware_label=*/run_date=*/run_key={run_key(run_id)}/part-0.parquet"))


def wait_for_validations(results_dir: str | Path | None, run_id: str, timeout_s: float | None = None, poll_s: float = 10.0) -> bool:
    """Wait up to ``timeout_s`` (``$JSONBENCH_REPORT_WAIT``, default 900 s) for the run's validation rows."""
    timeout = float(os.environ.get("JSONBENCH_REPORT_WAIT", DEFAULT_WAIT_S)) if timeout_s is None else timeout_s
    deadline = time.monotonic() + timeout
    while True:
        if validations_present(results_dir, run_id):
            return True
        if time.monotonic() >= deadline:
            log.warning("no validation rows for run %s after %.0f s; building the report without its verdicts", run_id, timeout)
            return False
        time.sleep(poll_s)
