"""A small, real-code-path dataset for the report, views and README tests.

Runs of the large_document_update suite (values of a real smoke run, see checks_synth.py) are
planned by the real matrix, staged and published by the real dataset code and checked by the real
``check_run`` (Great Expectations, file-backed context): ``runs`` nightly runs at ``smoke`` on
PostgreSQL 16 and 17, the last one with json_big's WAL doubled on 17 (a drift, so its check fails),
plus one earlier run at ``laptop`` scale (so the scorecard has a second scale). The last run's drift
row for that WAL also gets ``details.change_points`` in the shape of contract 6 (what the checks'
change-point detection writes), since the report must draw them whichever check wrote them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jsonbench.cell import RunRef
from tests.unit.checks_synth import make_run, replace_metric

LAST = "scheduled__2026-11-{:02d}T02:00:00+00:00"


def make_cells_for(results_dir: Path, scale: str = "smoke") -> Callable[..., list[Any]]:
    """A ``make_cells`` for checks_synth.make_run: cells planned by the real matrix at ``scale``, hardware label ``local``."""
    from jsonbench.cell import RunRef
    from jsonbench.orchestration.plan import plan_cells, resolve

    def make_cells(suite: str, engines: list[str], run_id: str, **params: Any) -> list[Any]:
        cfg = resolve(
            {"scale": scale, "results_dir": str(results_dir), "suites": [suite], "engines": engines, "hardware_label": "local", **params}
        )
        run = RunRef(
            run_id=run_id,
            logical_date=None,
            hardware_label=cfg.hardware_label,
            results_dir=cfg.results_dir,
            scale=cfg.scale,
            git_revision="test",
        )
        return [c for c in plan_cells(cfg, run) if c.suite == suite]

    return make_cells


def plant_change_point(results_dir: Path, run: RunRef, engine_id: str, workload: str, metric: str, at_run: str) -> None:
    """Add a change point (contract 6 shape) to one drift row of ``run``'s stored validations, judged drift.

    What Otava says of a doubled WAL volume once the history is long enough (it needs ``min_history``
    quiet earlier runs; these few synthetic nights are not), written where the report reads it.
    """
    import pyarrow as pa

    from jsonbench.dataset.publish import VALIDATIONS, partition_dir, read_dataset, replace_run
    from jsonbench.dataset.schema import VALIDATION_SCHEMA, run_key

    table = read_dataset(results_dir, VALIDATIONS, run_key=run_key(run.run_id))
    rows = table.drop_columns(["hardware_label", "run_date", "run_key"]).to_pylist()
    for r in rows:
        if r["check_kind"] == "drift" and r["engine_id"] == engine_id and r["workload"] == workload and r["metric"] == metric:
            d = json.loads(r["details"] or "{}")
            d["method"] = d.get("method") or "e-divisive (planted by the test)"
            d["change_points"] = [
                {
                    "run_id": at_run,
                    "logical_date": at_run.split("__", 1)[1],
                    "metric_before": 6.05e6,
                    "metric_after": 1.21e7,
                    "relative_change": 1.0,
                    "pvalue": 0.001,
                }
            ]
            r["details"] = json.dumps(d)
            r["verdict"], r["success"] = "drift", False
    replace_run(
        partition_dir(results_dir, VALIDATIONS, run.hardware_label, run.logical_date, run.run_id),
        pa.Table.from_pylist(rows, schema=VALIDATION_SCHEMA),
    )


def build(results_dir: Path, runs: int = 5, docs_for_last: bool = True) -> RunRef:
    """Publish and check the runs; return the last run. Runs are dated 2026-11-01 ... (n)."""
    import os

    from jsonbench.checks import ChecksFailed, check_run

    old = os.environ.get("JSONBENCH_DATA_DOCS")
    try:
        os.environ["JSONBENCH_DATA_DOCS"] = "0"
        check_run(make_run(make_cells_for(results_dir, "laptop"), 0, seed=99))  # 2026-11-01, laptop scale
        for n in range(1, runs):
            check_run(make_run(make_cells_for(results_dir), n))
        os.environ["JSONBENCH_DATA_DOCS"] = "1" if docs_for_last else "0"
        last = make_run(make_cells_for(results_dir), runs, tamper=replace_metric("postgres-17", "json_big", "wal_bytes", lambda v: 2 * v))
        try:
            check_run(last)
        except ChecksFailed:
            pass
    finally:
        if old is None:
            os.environ.pop("JSONBENCH_DATA_DOCS", None)
        else:
            os.environ["JSONBENCH_DATA_DOCS"] = old
    plant_change_point(results_dir, last, "postgres-17", "json_big", "wal_bytes", last.run_id)
    return last


_BUILT: dict[tuple[int, bool], Path] = {}


def build_once(results_dir: Path, runs: int = 4, docs_for_last: bool = True) -> Path:
    """:func:`build` once per test process and arguments, then a copy into ``results_dir`` (checks take a while)."""
    import atexit
    import shutil
    import tempfile

    key = (runs, docs_for_last)
    if key not in _BUILT:
        folder = Path(tempfile.mkdtemp(prefix="jsonbench-report-synth-"))
        atexit.register(shutil.rmtree, folder, True)
        build(folder / "results", runs=runs, docs_for_last=docs_for_last)
        _BUILT[key] = folder / "results"
    shutil.copytree(_BUILT[key], results_dir, ignore=shutil.ignore_patterns("_staging"))
    return results_dir
