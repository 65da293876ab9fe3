"""The sanity frames of a run: its published rows as GX sees them, and what was promised vs published.

``completeness_frame`` lists, for every cell of the run's plan (the check is given the plan's
cells; it does not re-derive them from staging or Parquet), every ``(workload, metric)`` its
suite's :meth:`~jsonbench.suites.base.Suite.expected_metrics` promises, and whether the run
published it (a metric recorded ``not_applicable`` with a reason counts as present; without a
reason it does not).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import pandas as pd

from jsonbench.cell import cell_id_of
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


def cells_in_rows(published: pd.DataFrame) -> list[tuple[str, str]]:
    """``(suite, engine_id)`` of every cell with published rows: the cells, for a caller without the run's plan.

    Only the check of checks (a copy of an old run, re-checked) has no plan; the DAG's check task
    passes the plan's cells, so a planned cell that published nothing is missed, not forgotten.
    """
    from jsonbench.dataset.measurement import HOST_SUITE

    pairs = published[["suite", "engine_id"]].drop_duplicates()
    return sorted({(str(suite), str(engine_id)) for suite, engine_id in pairs.itertuples(index=False) if suite != HOST_SUITE})


def completeness_frame(cells: Iterable[tuple[str, str]], published: pd.DataFrame) -> pd.DataFrame:
    """One row per promised ``(cell, workload, metric)`` of ``cells`` (``(suite, engine_id)`` pairs): present or not, and with which status."""
    from jsonbench.suites import get_suite

    rows: list[dict[str, Any]] = []
    for suite_name, engine_id in sorted(set(cells), key=lambda c: cell_id_of(*c)):
        suite = get_suite(suite_name)
        mine = published[(published["engine_id"] == engine_id) & (published["suite"] == suite_name)]
        have: dict[tuple[str, str], tuple[str, Any]] = {}
        for r in mine.itertuples(index=False):
            have.setdefault((r.workload, r.metric), (r.status, r.reason))
        for workload, metric in suite.expected_metrics():
            status, reason = have.get((workload, metric), ("missing", None))
            present = status == "ok" or (status == "not_applicable" and isinstance(reason, str) and bool(reason.strip()))
            rows.append(
                {
                    "cell_id": cell_id_of(suite_name, engine_id),
                    "engine_id": engine_id,
                    "suite": suite_name,
                    "workload": workload,
                    "metric": metric,
                    "present": present,
                    "status": status,
                }
            )
    return pd.DataFrame(rows, columns=COMPLETENESS_COLUMNS).astype({"present": bool})
