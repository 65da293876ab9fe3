"""Reading the Parquet dataset: every file checked on its own, damaged ones skipped and named.

One unreadable file (a copy cut short by a full disk, a sync tool, a hand edit) must not take the
whole history down with it: every later check, drift judgement and report reads around it and says
which file it skipped. Reads always pass the full schema, so a column that an older file lacks comes
back as nulls instead of vanishing from the result.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from jsonbench.dataset.schema import MEASUREMENT_SCHEMA, VALIDATION_SCHEMA, partition_schema

log = logging.getLogger(__name__)

MEASUREMENTS = "measurements"
VALIDATIONS = "validations"
SCHEMAS: dict[str, pa.Schema] = {MEASUREMENTS: MEASUREMENT_SCHEMA, VALIDATIONS: VALIDATION_SCHEMA}


@dataclass(frozen=True)
class DamagedFile:
    """A dataset file that could not be read, and what the reader said."""

    path: str
    error: str


@dataclass(frozen=True)
class DatasetRead:
    """The readable rows of a dataset table, and the files that were skipped."""

    table: pa.Table
    damaged: tuple[DamagedFile, ...]


def full_schema(table: str) -> pa.Schema:
    """The stored columns of ``table`` followed by the hive partition columns, typed."""
    base = SCHEMAS[table]
    return pa.schema(list(base) + list(partition_schema()))


def read_dataset_report(results_dir: str | Path, table: str = MEASUREMENTS, **filters: str) -> DatasetRead:
    """Read ``table`` (rows matching the equality ``filters``), skipping and naming unreadable files."""
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    schema = full_schema(table)
    root = Path(results_dir) / table
    if not root.exists():
        return DatasetRead(schema.empty_table(), ())
    partitioning = ds.partitioning(partition_schema(), flavor="hive")
    good: list[str] = []
    damaged: list[DamagedFile] = []
    for path in sorted(root.glob("hardware_label=*/run_date=*/run_key=*/*.parquet")):
        try:
            pq.read_metadata(path)
            good.append(str(path))
        except Exception as exc:  # any reader error means: skip it and say so
            damaged.append(DamagedFile(str(path), f"{type(exc).__name__}: {exc}"))
    for d in damaged:
        log.warning("skipping unreadable dataset file %s (%s)", d.path, d.error)
    if not good:
        return DatasetRead(schema.empty_table(), tuple(damaged))
    dataset = ds.dataset(good, schema=schema, format="parquet", partitioning=partitioning, partition_base_dir=str(root))
    expr = None
    for name, value in filters.items():
        term = ds.field(name) == value
        expr = term if expr is None else expr & term
    return DatasetRead(dataset.to_table(filter=expr), tuple(damaged))


def read_dataset(results_dir: str | Path, table: str = MEASUREMENTS, **filters: str) -> pa.Table:
    """The readable rows of ``table`` (see :func:`read_dataset_report`; damaged files are logged and skipped)."""
    return read_dataset_report(results_dir, table, **filters).table
