"""Reading the Parquet dataset: every file checked on its own, damaged ones skipped and named.

One unreadable file (a copy cut short by a full disk, a sync tool, a hand edit) must not take the
whole history down with it: every later check, drift judgement and report reads around it and says
which file it skipped. A file counts as readable only when all of it decodes (footer, every page)
into the table's schema and its folder names are valid partition values; anything less is a
:class:`DamagedFile` (``python -m jsonbench.cli damaged --quarantine`` moves such files out of the
way, so tools that read the folder wholesale work again).

Reads always pass the full schema, so a column that an older file lacks comes back as nulls instead
of vanishing from the result, and the partition columns are typed the same for every reader:
``hardware_label`` string, ``run_date`` date (date32), ``run_key`` string. The other readers get the
same types by being told them (see :func:`partitioning` and :data:`DUCKDB_HIVE_TYPES`)::

    pd.read_parquet("results/measurements", partitioning=partitioning(), schema=full_schema("measurements"))
    duckdb.sql("SELECT ... FROM read_parquet('results/measurements/**/*.parquet', hive_partitioning=true,"
               " hive_types={'hardware_label': VARCHAR, 'run_date': DATE, 'run_key': VARCHAR}, union_by_name=true)")

Only files named ``hardware_label=*/run_date=*/run_key=*/<name>.parquet`` whose names do not start
with ``.`` or ``_`` belong to the dataset; that is what pyarrow, pandas and DuckDB's
``**/*.parquet`` see too, and why publishing keeps its temporary files under hidden names that do not
end in ``.parquet`` (see :mod:`jsonbench.dataset.publish`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pyarrow as pa

from jsonbench.dataset.schema import COMPARISON_SCHEMA, COMPARISONS, MEASUREMENT_SCHEMA, PARTITION_KEYS, VALIDATION_SCHEMA, partition_schema

log = logging.getLogger(__name__)

MEASUREMENTS = "measurements"
VALIDATIONS = "validations"
#: A run's confirmation measurements (the suspect cells measured again in the same DAG run), apart from
#: ``measurements`` so that history, drift, the report's trends and the cost estimates never read a
#: partial run; same schema, rows' run id ``<run id>+confirm`` (jsonbench.checks.confirm).
CONFIRMATIONS = "confirmations"
SCHEMAS: dict[str, pa.Schema] = {
    MEASUREMENTS: MEASUREMENT_SCHEMA,
    VALIDATIONS: VALIDATION_SCHEMA,
    CONFIRMATIONS: MEASUREMENT_SCHEMA,
    COMPARISONS: COMPARISON_SCHEMA,
}

#: DuckDB's ``hive_types`` for the dataset (without it DuckDB guesses: a numeric-looking run key or label becomes a number).
DUCKDB_HIVE_TYPES = {"hardware_label": "VARCHAR", "run_date": "DATE", "run_key": "VARCHAR"}

#: A run's one file, inside its run folder.
FILE_NAME = "part-0.parquet"
#: A publish's temporary file in the run folder: hidden (pyarrow and pandas skip it) and not ``*.parquet`` (DuckDB's glob skips it).
TMP_PREFIX = f".{FILE_NAME}."
TMP_SUFFIX = ".tmp"

#: The glob of a run's file, relative to a table's folder (hidden and ``_`` names are excluded separately).
FILE_GLOB = "hardware_label=*/run_date=*/run_key=*/*.parquet"


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


def table_schema(table: str) -> pa.Schema:
    """The stored columns of ``table`` (``measurements`` or ``validations``)."""
    try:
        return SCHEMAS[table]
    except KeyError:
        raise ValueError(f"unknown dataset table {table!r}; the dataset has {sorted(SCHEMAS)}") from None


def full_schema(table: str) -> pa.Schema:
    """The stored columns of ``table`` followed by the hive partition columns, typed."""
    return pa.schema(list(table_schema(table)) + list(partition_schema()))


def partitioning() -> Any:
    """The dataset's hive partitioning for ``pyarrow.dataset`` / ``pd.read_parquet(partitioning=...)``, typed."""
    import pyarrow.dataset as ds

    return ds.partitioning(partition_schema(), flavor="hive")


def duckdb_source(results_dir: str | Path, table: str = MEASUREMENTS) -> str:
    """The ``read_parquet(...)`` table expression that reads ``table`` in DuckDB with the contract's types."""
    table_schema(table)
    types = ", ".join(f"'{k}': {v}" for k, v in DUCKDB_HIVE_TYPES.items())
    glob = str(Path(results_dir) / table / "**" / "*.parquet").replace("'", "''")
    return f"read_parquet('{glob}', hive_partitioning=true, hive_types={{{types}}}, union_by_name=true)"


def _visible(path: Path, root: Path) -> bool:
    """True when no part of ``path`` below ``root`` is hidden (``.``) or private (``_``), as pyarrow decides."""
    return not any(part.startswith((".", "_")) for part in path.relative_to(root).parts)


def dataset_files(results_dir: str | Path, table: str = MEASUREMENTS) -> list[Path]:
    """Every file of ``table`` that the dataset's readers see, in a stable order."""
    table_schema(table)
    root = Path(results_dir) / table
    if not root.is_dir():
        return []
    return [p for p in sorted(root.glob(FILE_GLOB)) if _visible(p, root)]


def partition_values(path: Path) -> dict[str, Any]:
    """``{hardware_label, run_date (a date), run_key}`` from a file's folders; ``ValueError`` when they are not valid."""
    folders = [path.parent.parent.parent.name, path.parent.parent.name, path.parent.name]
    values: dict[str, Any] = {}
    for key, folder in zip(PARTITION_KEYS, folders, strict=True):
        prefix = f"{key}="
        if not folder.startswith(prefix) or len(folder) == len(prefix):
            raise ValueError(f"folder {folder!r} is not a {key}=<value> partition")
        values[key] = unquote(folder[len(prefix) :])
    try:
        values["run_date"] = date.fromisoformat(values["run_date"])
    except ValueError:
        raise ValueError(f"folder run_date={values['run_date']} is not a YYYY-MM-DD date") from None
    return values


def _conform(data: pa.Table, schema: pa.Schema) -> pa.Table:
    """``data`` with exactly ``schema``'s columns: missing ones null, others cast (an impossible cast raises)."""
    columns = []
    for field in schema:
        if field.name in data.column_names:
            col = data.column(field.name)
            if not col.type.equals(field.type):
                try:
                    col = col.cast(field.type)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                    raise ValueError(f"column {field.name!r} is {col.type}, expected {field.type}: {exc}") from None
            columns.append(col)
        else:
            columns.append(pa.nulls(data.num_rows, field.type))
    return pa.Table.from_arrays(columns, schema=schema)


def read_file(path: str | Path, table: str = MEASUREMENTS) -> pa.Table:
    """One dataset file, whole, in the table's full schema (partition columns from its folders).

    Raises when any part of it cannot be read: this is the test of "damaged".
    """
    import pyarrow.parquet as pq

    path = Path(path)
    values = partition_values(path)
    with pq.ParquetFile(path) as pf:
        data = pf.read()
    data = _conform(data, table_schema(table))
    n = data.num_rows
    for field in partition_schema():
        data = data.append_column(field, pa.array([values[field.name]] * n, type=field.type))
    return data


def check_file(path: str | Path, table: str = MEASUREMENTS) -> DamagedFile | None:
    """None when ``path`` reads whole, else what is wrong with it."""
    try:
        read_file(path, table)
    except Exception as exc:  # any reader error means: damaged, say what it was
        return DamagedFile(str(path), f"{type(exc).__name__}: {exc}")
    return None


def _partition_match(path: Path, filters: dict[str, Any]) -> bool:
    """False when a filter on a partition column excludes this file by its folder names alone."""
    want = {k: v for k, v in filters.items() if k in PARTITION_KEYS}
    if not want:
        return True
    try:
        values = partition_values(path)
    except ValueError:
        return True  # let the read name it damaged
    for key, value in want.items():
        have = values[key]
        if key == "run_date" and not isinstance(value, date):
            value = date.fromisoformat(str(value))
        if have != value:
            return False
    return True


def _filter(data: pa.Table, filters: dict[str, Any]) -> pa.Table:
    import pyarrow.compute as pc

    mask = None
    for name, value in filters.items():
        if name not in data.column_names:
            raise ValueError(f"cannot filter on {name!r}: not a column of the dataset")
        kind = data.schema.field(name).type
        if pa.types.is_date32(kind) and isinstance(value, str):
            value = date.fromisoformat(value)
        term = pc.equal(data.column(name), pa.scalar(value, type=kind))
        mask = term if mask is None else pc.and_(mask, term)
    return data if mask is None else data.filter(pc.fill_null(mask, False))


def read_dataset_report(results_dir: str | Path, table: str = MEASUREMENTS, **filters: Any) -> DatasetRead:
    """Read ``table`` (rows matching the equality ``filters``), skipping and naming unreadable files.

    Filters on partition columns (``hardware_label``, ``run_date``, ``run_key``) select files by their
    folders before anything is read, so a damaged file outside them is neither read nor named.
    """
    schema = full_schema(table)
    for name in filters:
        if name not in schema.names:
            raise ValueError(f"cannot filter on {name!r}: not a column of {table}")
    parts: list[pa.Table] = []
    damaged: list[DamagedFile] = []
    for path in dataset_files(results_dir, table):
        if not _partition_match(path, filters):
            continue
        try:
            parts.append(read_file(path, table))
        except Exception as exc:  # any reader error means: skip it and say so
            damaged.append(DamagedFile(str(path), f"{type(exc).__name__}: {exc}"))
    for d in damaged:
        log.warning("skipping unreadable dataset file %s (%s)", d.path, d.error)
    data = pa.concat_tables(parts) if parts else schema.empty_table()
    return DatasetRead(_filter(data, filters), tuple(damaged))


def read_dataset(results_dir: str | Path, table: str = MEASUREMENTS, **filters: Any) -> pa.Table:
    """The readable rows of ``table`` (see :func:`read_dataset_report`; damaged files are logged and skipped)."""
    return read_dataset_report(results_dir, table, **filters).table


def find_damaged(results_dir: str | Path, tables: tuple[str, ...] = (MEASUREMENTS, VALIDATIONS)) -> list[DamagedFile]:
    """Every file of the dataset's ``tables`` that does not read whole."""
    found: list[DamagedFile] = []
    for table in tables:
        for path in dataset_files(results_dir, table):
            bad = check_file(path, table)
            if bad is not None:
                found.append(bad)
    return found


def row_tuples(df: Any, columns: tuple[str, ...] | list[str]) -> Any:
    """``df.itertuples(index=False)`` over the ``columns`` it has, each as a plain NumPy column first.

    pandas 3 backs strings with Arrow, and iterating an Arrow column converts one element at a time: a loop over every
    row of a few hundred runs (the noise record, the findings of each run) spent most of its time there, on columns it
    never read. Values are the same Python objects as the Arrow column's own iteration gives (a missing string is its
    dtype's ``na_value``).
    """
    import pandas as pd

    cols = [c for c in columns if c in df.columns]
    plain = pd.DataFrame(
        {
            c: (df[c].to_numpy(dtype=object, na_value=df[c].dtype.na_value) if isinstance(df[c].dtype, pd.StringDtype) else df[c])
            for c in cols
        },
        index=df.index,
        copy=False,
    )
    return plain.itertuples(index=False)
