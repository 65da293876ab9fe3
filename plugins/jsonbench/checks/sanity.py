"""The sanity frames of a run: its published rows as GX sees them, and what was promised vs published.

``completeness_frame`` lists, for every cell that ran (it staged at least one record), every
``(workload, metric)`` its suite's :meth:`~jsonbench.suites.base.Suite.expected_metrics` promises
at the cell's scale, and whether the run published it (a metric recorded ``not_applicable`` with
a reason counts as present; without a reason it does not).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from jsonbench.dataset.schema import MEASUREMENT_SCHEMA, PARTITION_KEYS

COMPLETENESS_COLUMNS = ["cell_id", "engine_id", "suite", "workload", "metric", "present", "status"]


def measurements_frame(published: pd.DataFrame) -> pd.DataFrame:
    """The run's published rows with the derived columns the sanity expectations use (``is_finite``)."""
    df = published.drop(columns=["samples"], errors="ignore").copy()
    df["is_finite"] = [bool(isinstance(v, (int, float)) and math.isfinite(v)) for v in df["value"]]
    return df


def schema_expectations(columns: list[str] | None = None) -> list[dict[str, Any]]:
    """The tidy schema's columns (and the partition keys) are all there; extra columns are allowed."""
    names = columns or [f.name for f in MEASUREMENT_SCHEMA if f.name != "samples"] + list(PARTITION_KEYS)
    return [
        {
            "type": "expect_table_columns_to_match_set",
            "kwargs": {"column_set": names, "exact_match": False},
            "meta": {"notes": "tidy schema: MEASUREMENT_SCHEMA in results/schema.py plus the hive partition keys"},
        }
    ]


def cells_that_ran(results_dir: str | Path, run_id: str, published: pd.DataFrame) -> list[dict[str, Any]]:
    """The run's cells, from its staging records; if staging is gone, rebuilt from the published rows."""
    from jsonbench.dataset.staging import Staging

    cells: dict[str, dict[str, Any]] = {}
    for rec in Staging(results_dir, run_id).records():
        cells.setdefault(rec.cell.cell_id, rec.cell.to_json())
    if cells:
        return list(cells.values())
    for (engine_id, suite), g in published.groupby(["engine_id", "suite"]):
        cells[f"{suite}/{engine_id}"] = {
            "cell_id": f"{suite}/{engine_id}",
            "engine_id": engine_id,
            "suite": suite,
            "scale_params": json.loads(g["scale_params"].iloc[0] or "{}"),
        }
    return list(cells.values())


def completeness_frame(cells: list[dict[str, Any]], published: pd.DataFrame) -> pd.DataFrame:
    """One row per promised ``(cell, workload, metric)``: present or not, and with which status."""
    from jsonbench.suites import get_suite

    rows: list[dict[str, Any]] = []
    for cell in cells:
        suite = get_suite(cell["suite"])
        mine = published[(published["engine_id"] == cell["engine_id"]) & (published["suite"] == cell["suite"])]
        have: dict[tuple[str, str], tuple[str, Any]] = {}
        for r in mine.itertuples(index=False):
            have.setdefault((r.workload, r.metric), (r.status, r.reason))
        for workload, metric in suite.expected_metrics():
            status, reason = have.get((workload, metric), ("missing", None))
            present = status == "ok" or (status == "not_applicable" and isinstance(reason, str) and bool(reason.strip()))
            rows.append(
                {
                    "cell_id": cell["cell_id"],
                    "engine_id": cell["engine_id"],
                    "suite": cell["suite"],
                    "workload": workload,
                    "metric": metric,
                    "present": present,
                    "status": status,
                }
            )
    return pd.DataFrame(rows, columns=COMPLETENESS_COLUMNS).astype({"present": bool})
