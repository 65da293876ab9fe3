"""The PostgreSQL session every PostgreSQL backend hands to suites, with the measuring primitives.

The primitives follow the seeds' methods: WAL is an LSN difference taken right after a
CHECKPOINT; table statistics are read only after the backend that changed the table has
flushed them (PostgreSQL 15+ batches them) and the snapshot is cleared; relations are prewarmed
with pg_prewarm before reads.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import sql

from jsonbench.engines.base import Session
from jsonbench.sqlfiles import compose, load_sql, statements


@dataclass(frozen=True)
class RelationSizes:
    """Sizes of one table in bytes: main fork (heap), TOAST (with its index), all indexes, total."""

    heap: int
    toast: int
    indexes: int
    total: int


@dataclass(frozen=True)
class TableStats:
    """``pg_stat_user_tables`` counters of one table."""

    n_tup_upd: int
    n_tup_hot_upd: int
    n_dead_tup: int
    n_live_tup: int


@dataclass
class PostgresSession(Session):
    """A psycopg connection (autocommit) to the benchmark database, plus measuring primitives.

    ``conninfo`` is the libpq connection dict; ``pgbench`` is the argv prefix that runs a pgbench
    able to reach this server (``None`` when the backend has none), with ``pgbench_env``.
    """

    conninfo: dict[str, Any]
    capabilities: dict[str, bool] = field(default_factory=dict)
    pgbench: list[str] | None = None
    pgbench_env: dict[str, str] = field(default_factory=dict)
    conn: psycopg.Connection[Any] | None = None
    #: The schema the suite's tables land in (the first of the search_path); an existing server uses its own.
    schema: str = "public"
    #: ``statement_timeout`` of this session and of pgbench's connections (seconds; 0: none), so a
    #: hung statement fails its task instead of holding the host.
    statement_timeout_s: int = 0

    def __post_init__(self) -> None:
        if self.statement_timeout_s:
            limit = f"-c statement_timeout={int(self.statement_timeout_s)}s"
            self.conninfo = {**self.conninfo, "options": f"{self.conninfo.get('options', '')} {limit}".strip()}
            self.pgbench_env = {**self.pgbench_env, "PGOPTIONS": f"{self.pgbench_env.get('PGOPTIONS', '')} {limit}".strip()}
        if self.conn is None:
            self.conn = psycopg.connect(**self.conninfo, autocommit=True)

    # -- plumbing -------------------------------------------------------------------------

    def close(self) -> None:
        if self.conn is not None and not self.conn.closed:
            self.conn.close()

    def execute(self, query: Any, params: Any = None) -> list[tuple[Any, ...]]:
        """Run one statement; return its rows (empty list when it returns none)."""
        assert self.conn is not None
        with self.conn.cursor() as cur:
            cur.execute(query, params)
            return cur.fetchall() if cur.description else []

    def scalar(self, query: Any, params: Any = None) -> Any:
        rows = self.execute(query, params)
        return rows[0][0] if rows else None

    def run_file(self, suite: str, name: str, params: dict[str, Any] | None = None, **identifiers: str) -> None:
        """Run every statement of ``include/sql/<suite>/<name>.sql``, with identifiers bound."""
        for stmt in statements(load_sql(suite, name)):
            self.execute(compose(stmt, **identifiers), params)

    def query_file(self, suite: str, name: str, params: dict[str, Any] | None = None, **identifiers: str) -> list[tuple[Any, ...]]:
        """Run a one-statement SQL file and return its rows."""
        return self.execute(compose(load_sql(suite, name), **identifiers), params)

    def copy_rows(self, query: Any, rows: Iterable[tuple[Any, ...]]) -> int:
        """Stream ``rows`` into a ``COPY ... FROM STDIN`` statement (psycopg escapes each value); returns the rows sent.

        How data that lives outside the server (a user's documents) is loaded: one statement, no
        per-row round trip, and no file the server itself would have to read.
        """
        assert self.conn is not None
        sent = 0
        with self.conn.cursor() as cur, cur.copy(query) as copy:
            for row in rows:
                copy.write_row(row)
                sent += 1
        return sent

    def set(self, name: str, value: str) -> None:
        """``SET name = value`` for this session (a session-level setting, such as synchronous_commit)."""
        self.execute(sql.SQL("SELECT set_config({}, {}, false)").format(sql.Literal(name), sql.Literal(str(value))))

    # -- measuring primitives -------------------------------------------------------------

    def reset(self, name: str) -> None:
        """``RESET name`` for this session (undoes :meth:`set`)."""
        self.execute(sql.SQL("RESET {}").format(sql.Identifier(name)))

    def create_extension(self, name: str) -> None:
        """``CREATE EXTENSION IF NOT EXISTS name`` (raises when the role may not create it)."""
        self.execute(sql.SQL("CREATE EXTENSION IF NOT EXISTS {}").format(sql.Identifier(name)))

    def checkpoint(self) -> None:
        self.execute("CHECKPOINT")

    def current_lsn(self) -> str:
        """The WAL write position (``pg_current_wal_lsn()``): what a seed read around a synchronous commit."""
        return str(self.scalar("SELECT pg_current_wal_lsn()"))

    def wal_bytes_since(self, lsn: str) -> int:
        return int(self.scalar("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), %s::pg_lsn)", (lsn,)))

    def insert_lsn(self) -> str:
        """The WAL insert position (``pg_current_wal_insert_lsn()``).

        Around a run with ``synchronous_commit = off`` the write position can lag behind the last
        records when the run returns, and a short run would count nothing; the insert position does not.
        """
        return str(self.scalar("SELECT pg_current_wal_insert_lsn()"))

    def wal_bytes_between(self, start: str, end: str) -> int:
        """Bytes of WAL between two positions (``pg_wal_lsn_diff(end, start)``)."""
        return int(self.scalar("SELECT pg_wal_lsn_diff(%s::pg_lsn, %s::pg_lsn)", (end, start)))

    def wait_wal_flushed(self, lsn: str, timeout: float = 10.0) -> bool:
        """Wait until WAL up to ``lsn`` is flushed (the WAL writer flushes asynchronous commits within
        ``wal_writer_delay``); False when it was not within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while self.scalar("SELECT pg_current_wal_flush_lsn() < %s::pg_lsn", (lsn,)):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True

    def relation_exists(self, table: str, schema: str | None = None) -> bool:
        """Whether ``table`` is in the cell's schema (what an earlier engine start of the cell kept, say)."""
        return bool(self.scalar("SELECT to_regclass(%s) IS NOT NULL", (f"{schema or self.schema}.{table}",)))

    def relation_sizes(self, table: str, schema: str | None = None) -> RelationSizes:
        rel = f"{schema or self.schema}.{table}"
        heap, toast, indexes, total = self.execute(
            """
            SELECT pg_relation_size(c.oid),
                   coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0),
                   pg_indexes_size(c.oid),
                   pg_total_relation_size(c.oid)
            FROM pg_class c WHERE c.oid = %s::regclass
            """,
            (rel,),
        )[0]
        return RelationSizes(int(heap), int(toast), int(indexes), int(total))

    def fingerprint(self) -> str:
        """Per table of the session's schema (by name): its row count and the sum of its rows' ``hashtext`` (order-free),
        all hashed together (sha256). One sequential scan per table, its TOAST read."""
        import hashlib

        h = hashlib.sha256()
        tables = self.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = %s AND c.relkind IN ('r', 'p', 'm') ORDER BY c.relname",
            (self.schema,),
        )
        for (name,) in tables:
            query = sql.SQL("SELECT count(*), coalesce(sum(hashtext(t::text)::bigint), 0) FROM {} AS t").format(
                sql.Identifier(self.schema, name)
            )
            count, total = self.execute(query)[0]
            h.update(f"{name}\t{count}\t{total}\n".encode())
        return h.hexdigest()

    def flush_stats(self) -> None:
        """Make this backend's pending table statistics visible to every session (PostgreSQL 15+)."""
        if int(self.scalar("SHOW server_version_num")) >= 150000:
            self.execute("SELECT pg_stat_force_next_flush()")
            # The flush happens when the backend next reports, at the end of a transaction.
            self.execute("SELECT 1")

    def table_stats(self, table: str, schema: str | None = None, expect_updates: int | None = None, timeout: float = 10.0) -> TableStats:
        """Counters of ``table`` once they are really flushed.

        With ``expect_updates`` the counters are polled (snapshot cleared each time) until
        ``n_tup_upd`` reaches it, so a number read too early can never be recorded.
        """
        schema = schema or self.schema
        self.flush_stats()
        deadline = time.monotonic() + timeout
        while True:
            self.execute("SELECT pg_stat_clear_snapshot()")
            row = self.execute(
                "SELECT n_tup_upd, n_tup_hot_upd, n_dead_tup, n_live_tup FROM pg_stat_user_tables WHERE schemaname = %s AND relname = %s",
                (schema, table),
            )
            stats = TableStats(*(int(v) for v in row[0])) if row else None
            if stats and (expect_updates is None or stats.n_tup_upd >= expect_updates):
                return stats
            if time.monotonic() > deadline:
                raise RuntimeError(f"statistics of {schema}.{table} not flushed after {timeout}s (last read: {stats})")
            time.sleep(0.05)
            self.flush_stats()

    def explain(
        self, query: Any, params: Any = None, *, analyze: bool = False, buffers: bool = False, timing: bool = True
    ) -> dict[str, Any]:
        """``EXPLAIN (FORMAT JSON)`` of a statement, optionally with ANALYZE, BUFFERS and TIMING OFF;
        returns the top dict (``Plan``, and with ANALYZE ``Execution Time``)."""
        options = ["FORMAT JSON"]
        if analyze:
            options.insert(0, "ANALYZE")
            if not timing:
                options.append("TIMING OFF")
        if buffers:
            options.append("BUFFERS")
        stmt = sql.SQL("EXPLAIN ({}) ").format(sql.SQL(", ".join(options))) + (sql.SQL(query) if isinstance(query, str) else query)
        return self.execute(stmt, params)[0][0][0]

    def explain_analyze(self, query: Any, params: Any = None) -> dict[str, Any]:
        """``EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)`` of a statement; returns the top plan dict."""
        return self.explain(query, params, analyze=True, buffers=True)

    def prewarm(self, relation: str, fork: str = "main") -> int:
        """Load one fork of a relation (``main``, ``vm``, ``fsm``) into shared buffers with pg_prewarm; returns blocks
        read, 0 for a fork the relation does not have (an index has no visibility map; a table has one once vacuumed)."""
        if fork not in ("main", "vm", "fsm"):
            raise ValueError(f"prewarm: fork must be main, vm or fsm, not {fork!r}")
        self.create_extension("pg_prewarm")
        if fork != "main" and not self.scalar("SELECT pg_relation_size(%s::regclass, %s) > 0", (relation, fork)):
            return 0
        # Called through the extension's own schema: on a shared database (the existing-server backend) it
        # may have been installed into another cell's schema, outside this session's search_path.
        schema = self.scalar(
            "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_prewarm'"
        )
        return int(
            self.scalar(sql.SQL("SELECT {}.pg_prewarm(%s::regclass, 'buffer', %s)").format(sql.Identifier(schema)), (relation, fork))
        )
