"""SQL views over the results: ``<results>/jsonbench.duckdb``, so any DuckDB client opens them in one line.

::

    duckdb.connect("results/jsonbench.duckdb", read_only=True).sql("FROM findings WHERE verdict = 'fail'").show()

Views (every column typed the same for every reader: ``hardware_label`` VARCHAR, ``run_date`` DATE,
``run_key`` VARCHAR, timestamps TIMESTAMPTZ, ``samples`` DOUBLE[]):

``measurements``  every published measurement row (``MEASUREMENT_SCHEMA`` + the partition columns);
``validations``   every stored check outcome (``VALIDATION_SCHEMA`` + the partition columns);
``runs``          one row per published run: label, date, scale, engines, row count, checks and failed checks;
``latest_run``    the measurement rows of the latest run per hardware label and engine (by logical date,
                  then end time): "what does each engine measure on each machine now";
``findings``      the reproduction verdicts per run, finding and engine, with the seed figure, the band
                  applied at the run's scale, the verdict and its reason, and the Data Docs page;
``change_points`` the change points that drift reported, one row per (label, engine, metric, run where
                  the change starts), from the latest judgement of each;
``dataset_files`` every Parquet file looked at by the last refresh, ``ok`` or ``damaged`` with the error.

The views read the files listed by the last :func:`refresh` (damaged files are left out and listed
in ``dataset_files``), so call it after every publish and every check; the report DAG calls it too.
Paths are those of the results folder when it was refreshed; a copy of the folder opened elsewhere
(another machine, a container that mounts it at another path) says where it is with
``SET VARIABLE jsonbench_results = '/path/to/results'`` before querying, or runs :func:`refresh` there.
:func:`connect` opens the views without the file (an in-memory database), for one process's use.

The file is rewritten whole and renamed into place, so a dashboard that holds it open keeps reading
the previous version and never sees a half-written one; open it ``read_only`` from dashboards.
"""

from __future__ import annotations

import logging
import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

from jsonbench.dataset.read import MEASUREMENTS, VALIDATIONS, full_schema

if TYPE_CHECKING:
    import duckdb

log = logging.getLogger(__name__)

DB_NAME = "jsonbench.duckdb"
ROOT_VARIABLE = "jsonbench_results"

_SIMPLE_TYPES: dict[pa.DataType, str] = {
    pa.string(): "VARCHAR",
    pa.large_string(): "VARCHAR",
    pa.int8(): "TINYINT",
    pa.int16(): "SMALLINT",
    pa.int32(): "INTEGER",
    pa.int64(): "BIGINT",
    pa.float32(): "FLOAT",
    pa.float64(): "DOUBLE",
    pa.bool_(): "BOOLEAN",
    pa.date32(): "DATE",
}


def duckdb_type(t: pa.DataType) -> str:
    """The DuckDB type of an Arrow type of the dataset's schema."""
    if t in _SIMPLE_TYPES:
        return _SIMPLE_TYPES[t]
    if pa.types.is_timestamp(t):
        return "TIMESTAMPTZ" if t.tz else "TIMESTAMP"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return duckdb_type(t.value_type) + "[]"
    raise TypeError(f"no DuckDB type for {t}")


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def scan_files(results_dir: str | Path, table: str) -> tuple[list[tuple[str, set[str]]], list[tuple[str, str]]]:
    """``(readable, damaged)`` files of ``table``: readable as (path relative to the results folder, its columns)."""
    import pyarrow.parquet as pq

    root = Path(results_dir)
    good: list[tuple[str, set[str]]] = []
    bad: list[tuple[str, str]] = []
    for path in sorted((root / table).glob("hardware_label=*/run_date=*/run_key=*/*.parquet")):
        rel = path.relative_to(root).as_posix()
        try:
            good.append((rel, set(pq.read_schema(path).names)))
        except Exception as exc:  # any reader error: leave it out and say so
            bad.append((rel, f"{type(exc).__name__}: {exc}"))
    return good, bad


def _table_sql(table: str, files: list[tuple[str, set[str]]], root_expr: str) -> str:
    """``SELECT`` of every column of the table's full schema, typed, over the listed files."""
    schema = full_schema(table)
    if not files:
        cols = ", ".join(f"CAST(NULL AS {duckdb_type(f.type)}) AS {_ident(f.name)}" for f in schema)
        return f"SELECT {cols} WHERE false"
    present = set().union(*(c for _, c in files)) | {"hardware_label", "run_date", "run_key"}
    cols = ", ".join(
        (
            f"CAST({_ident(f.name)} AS {duckdb_type(f.type)}) AS {_ident(f.name)}"
            if f.name in present
            else f"CAST(NULL AS {duckdb_type(f.type)}) AS {_ident(f.name)}"
        )
        for f in schema
    )
    paths = "[" + ", ".join(_quote(p) for p, _ in files) + "]"
    return (
        f"SELECT {cols} FROM read_parquet(list_transform({paths}, lambda p: {root_expr} || '/' || p), "
        "hive_partitioning = true, union_by_name = true, "
        "hive_types = {'hardware_label': VARCHAR, 'run_date': DATE, 'run_key': VARCHAR})"
    )


RUNS_SQL = """
WITH m AS (
    SELECT hardware_label, run_date, run_key, any_value(run_id) AS run_id, max(logical_date) AS logical_date,
           any_value(scale) AS scale, list(DISTINCT engine_id ORDER BY engine_id) AS engines, count(*) AS measurements,
           min(started_at) AS started_at, max(ended_at) AS ended_at, any_value(git_revision) AS git_revision
    FROM measurements GROUP BY hardware_label, run_date, run_key
), v AS (
    SELECT hardware_label, run_date, run_key, count(*) AS checks, count(*) FILTER (WHERE NOT success) AS failed_checks,
           max(validated_at) AS validated_at
    FROM validations GROUP BY hardware_label, run_date, run_key
)
SELECT m.*, v.checks, v.failed_checks, v.validated_at,
       CASE WHEN v.checks IS NULL THEN 'not checked' WHEN v.failed_checks > 0 THEN 'failed' ELSE 'passed' END AS check_status
FROM m LEFT JOIN v USING (hardware_label, run_date, run_key)
"""

LATEST_RUN_SQL = """
WITH per_run AS (
    SELECT hardware_label, engine_id, run_id, max(logical_date) AS logical_date, max(ended_at) AS ended_at
    FROM measurements GROUP BY hardware_label, engine_id, run_id
), pick AS (
    SELECT hardware_label, engine_id, run_id FROM per_run
    QUALIFY row_number() OVER (PARTITION BY hardware_label, engine_id ORDER BY logical_date DESC, ended_at DESC NULLS LAST, run_id DESC) = 1
)
SELECT m.* FROM measurements m JOIN pick USING (hardware_label, engine_id, run_id)
"""

FINDINGS_SQL = """
SELECT run_id, hardware_label, run_date, run_key, logical_date,
       coalesce(scale, json_extract_string(details, '$.scale')) AS scale,
       suite, engine_id, engine_version, engine_build,
       expectation AS finding, description, unit, observed,
       min_value AS band_min, max_value AS band_max,
       TRY_CAST(json_extract_string(details, '$.seed.value') AS DOUBLE) AS seed_value,
       json_extract_string(details, '$.seed.figure') AS seed_figure,
       verdict, success,
       coalesce(json_extract_string(details, '$.reason'), json_extract_string(details, '$.not_applicable_reason'),
                json_extract_string(details, '$.problem')) AS reason,
       json_extract_string(details, '$.band_reason') AS band_reason,
       json_extract_string(details, '$.data_docs_page') AS data_docs_page,
       validated_at
FROM validations
WHERE check_kind = 'reproduction' AND engine_id IS NOT NULL
"""

CHANGE_POINTS_SQL = """
WITH d AS (
    SELECT run_id AS judged_in_run, logical_date AS judged_at, hardware_label, suite, engine_id, engine_version, engine_build,
           workload, variant, metric, unit,
           unnest(from_json(json_extract(details, '$.change_points'),
                  '[{"run_id": "VARCHAR", "logical_date": "VARCHAR", "metric_before": "DOUBLE", "metric_after": "DOUBLE",
                     "relative_change": "DOUBLE", "pvalue": "DOUBLE"}]')) AS cp
    FROM validations
    WHERE check_kind = 'drift' AND json_type(json_extract(details, '$.change_points')) = 'ARRAY'
)
SELECT hardware_label, suite, engine_id, engine_version, engine_build, workload, variant, metric, unit,
       cp.run_id AS run_id, TRY_CAST(cp.logical_date AS TIMESTAMPTZ) AS logical_date,
       cp.metric_before AS metric_before, cp.metric_after AS metric_after,
       cp.relative_change AS relative_change, cp.pvalue AS pvalue, judged_in_run, judged_at
FROM d
QUALIFY row_number() OVER (PARTITION BY hardware_label, engine_id, suite, workload, variant, metric, cp.run_id ORDER BY judged_at DESC, judged_in_run DESC) = 1
"""


def _create_views(con: duckdb.DuckDBPyConnection, results_dir: Path, root_expr: str) -> dict[str, int]:
    """Create every view on ``con``; return the number of readable files per table."""
    counts: dict[str, int] = {}
    listing: list[tuple[str, str, str, str | None]] = []
    for table in (MEASUREMENTS, VALIDATIONS):
        good, bad = scan_files(results_dir, table)
        counts[table] = len(good)
        listing += [(table, p, "ok", None) for p, _ in good] + [(table, p, "damaged", e) for p, e in bad]
        for p, e in bad:
            log.warning("views: leaving out unreadable file %s (%s)", p, e)
        con.execute(f"CREATE OR REPLACE VIEW {table} AS {_table_sql(table, good, root_expr)}")
    con.execute('CREATE OR REPLACE TABLE dataset_files ("table" VARCHAR, path VARCHAR, status VARCHAR, error VARCHAR)')
    if listing:
        con.executemany("INSERT INTO dataset_files VALUES (?, ?, ?, ?)", listing)
    con.execute(f"CREATE OR REPLACE VIEW runs AS {RUNS_SQL}")
    con.execute(f"CREATE OR REPLACE VIEW latest_run AS {LATEST_RUN_SQL}")
    con.execute(f"CREATE OR REPLACE VIEW findings AS {FINDINGS_SQL}")
    con.execute(f"CREATE OR REPLACE VIEW change_points AS {CHANGE_POINTS_SQL}")
    return counts


def refresh(results_dir: str | Path | None = None) -> Path:
    """(Re)write ``<results>/jsonbench.duckdb`` with the views over the dataset as it is now; return its path.

    Cheap (reads the Parquet footers only); call it after every publish and every check.
    """
    import duckdb

    from jsonbench import paths

    root = paths.results_dir(results_dir).resolve()
    root.mkdir(parents=True, exist_ok=True)
    target = root / DB_NAME
    tmp = root / f".{DB_NAME}.tmp-{uuid.uuid4().hex[:8]}"
    root_expr = f"coalesce(getvariable('{ROOT_VARIABLE}'), {_quote(str(root))})"
    try:
        con = duckdb.connect(str(tmp))
        try:
            counts = _create_views(con, root, root_expr)
            con.execute("CHECKPOINT")
        finally:
            con.close()
        os.replace(tmp, target)
    finally:
        for leftover in (tmp, Path(f"{tmp}.wal")):
            leftover.unlink(missing_ok=True)
    log.info("views refreshed: %s (%s)", target, ", ".join(f"{k}: {v} file(s)" for k, v in counts.items()))
    return target


def connect(results_dir: str | Path | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with the same views over ``results_dir`` as it is now (nothing written)."""
    import duckdb

    from jsonbench import paths

    root = paths.results_dir(results_dir).resolve()
    con = duckdb.connect()
    _create_views(con, root, _quote(str(root)))
    return con


__all__ = ["DB_NAME", "ROOT_VARIABLE", "connect", "duckdb_type", "refresh"]


def main(argv: list[str] | None = None) -> int:
    """``python -m jsonbench.cli views [--results-dir D]``: refresh the views here (e.g. on the host of a Compose deployment)."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m jsonbench.cli views", description=main.__doc__)
    p.add_argument("--results-dir", help="the results folder (default: $JSONBENCH_RESULTS_DIR or results/)")
    args = p.parse_args(argv)
    print(f"views: {refresh(args.results_dir)}")
    return 0
