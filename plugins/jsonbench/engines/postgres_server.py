"""Existing PostgreSQL server: a dedicated host, a managed service or a local install, via an Airflow connection.

The connection (``backend_options.conn_id``, e.g. ``jsonbench_postgres_17``) is read with
``airflow.sdk.BaseHook.get_connection``, so it can live in the metadata database, a secrets
backend or an ``AIRFLOW_CONN_<ID>`` variable (URI or JSON). Its ``schema`` field is the database.

Isolation: every cell works in its own schema, ``jsonbench_<hash of run and cell>``, created at
provision with a comment that marks it as ours, and made the session's only ``search_path`` (the
``options`` of the connection, and ``PGOPTIONS`` for pgbench), so the suites' unqualified tables
and functions land there. Teardown drops that schema, and only a schema carrying our mark,
after checking that nothing outside it depends on what is inside. Nothing else is created,
altered or dropped: no database, no role, no server setting (settings a session may set are set
for the session only; the others are recorded as not applied).

The backend refuses a database that holds objects of its own (tables, functions, types, schemas
other than ``public`` and other jsonbench schemas), unless the connection's extra says
``{"jsonbench_allow_nonempty": true}``: benchmarking next to someone's data is a choice to make
knowingly. The check runs in the plan task (:meth:`ServerPostgres.check`) and again at provision.

The role needs CREATE on the database; CHECKPOINT (the WAL measurements) needs a superuser or
``pg_checkpoint`` (PostgreSQL 15+). pgbench is the local one (:func:`find_pgbench`), given the
connection through ``PG*`` variables, the password through ``PGPASSWORD`` only.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from psycopg import sql

from jsonbench.engines.base import Engine, Handle
from jsonbench.engines.postgres_common import opened, server_facts, size_bytes
from jsonbench.engines.postgres_embedded import find_pgbench
from jsonbench.engines.postgres_session import PostgresSession
from jsonbench.errors import ConfigError, EngineUnavailable

log = logging.getLogger(__name__)

#: Start of the comment on every schema this backend creates; only such schemas are ever dropped.
MARK = "jsonbench:"
ALLOW_NONEMPTY = "jsonbench_allow_nonempty"
_SSL_KEYS = ("sslmode", "sslrootcert", "sslcert", "sslkey", "sslpassword", "target_session_attrs", "application_name")
_LIBPQ_ENV = {
    "sslmode": "PGSSLMODE",
    "sslrootcert": "PGSSLROOTCERT",
    "sslcert": "PGSSLCERT",
    "sslkey": "PGSSLKEY",
    "target_session_attrs": "PGTARGETSESSIONATTRS",
    "application_name": "PGAPPNAME",
}

# Objects of the database that are not ours: outside the system schemas and outside every schema we
# marked, not members of an extension. An empty ``public`` schema is not an object of its own.
_FOREIGN_OBJECTS_SQL = """
WITH skip AS (
    SELECT n.oid FROM pg_namespace n
    WHERE n.nspname IN ('pg_catalog', 'information_schema', 'pg_toast')
       OR n.nspname LIKE 'pg\\_temp\\_%' OR n.nspname LIKE 'pg\\_toast\\_temp\\_%'
       OR coalesce(obj_description(n.oid, 'pg_namespace'), '') LIKE 'jsonbench:%'
), ext AS (
    SELECT classid, objid FROM pg_depend WHERE deptype = 'e'
)
SELECT kind, name FROM (
    SELECT 'relation' AS kind, format('%I.%I', c.relnamespace::regnamespace, c.relname) AS name FROM pg_class c
     WHERE c.relnamespace NOT IN (SELECT oid FROM skip)
       AND NOT EXISTS (SELECT 1 FROM ext WHERE ext.classid = 'pg_class'::regclass AND ext.objid = c.oid)
    UNION ALL
    SELECT 'function', format('%I.%s', p.pronamespace::regnamespace, p.oid::regprocedure) FROM pg_proc p
     WHERE p.pronamespace NOT IN (SELECT oid FROM skip)
       AND NOT EXISTS (SELECT 1 FROM ext WHERE ext.classid = 'pg_proc'::regclass AND ext.objid = p.oid)
    UNION ALL
    SELECT 'type', format('%I.%I', t.typnamespace::regnamespace, t.typname) FROM pg_type t
     WHERE t.typnamespace NOT IN (SELECT oid FROM skip) AND t.typrelid = 0 AND t.typcategory <> 'A'
       AND NOT EXISTS (SELECT 1 FROM ext WHERE ext.classid = 'pg_type'::regclass AND ext.objid = t.oid)
    UNION ALL
    SELECT 'schema', n.nspname::text FROM pg_namespace n
     WHERE n.oid NOT IN (SELECT oid FROM skip) AND n.nspname <> 'public'
       AND NOT EXISTS (SELECT 1 FROM ext WHERE ext.classid = 'pg_namespace'::regclass AND ext.objid = n.oid)
) found
ORDER BY kind, name
LIMIT 20
"""

# Objects outside the schema that depend on something inside it: DROP SCHEMA ... CASCADE would take
# them along, so teardown refuses instead (an extension we installed into the schema is ours).
_OUTSIDE_DEPENDENTS_SQL = """
WITH inside AS (
    SELECT 'pg_class'::regclass AS classid, c.oid AS objid FROM pg_class c WHERE c.relnamespace = %(ns)s
    UNION ALL SELECT 'pg_proc'::regclass, p.oid FROM pg_proc p WHERE p.pronamespace = %(ns)s
    UNION ALL SELECT 'pg_type'::regclass, t.oid FROM pg_type t WHERE t.typnamespace = %(ns)s
)
SELECT DISTINCT pg_describe_object(d.classid, d.objid, d.objsubid)
FROM pg_depend d JOIN inside i ON d.refclassid = i.classid AND d.refobjid = i.objid
WHERE d.deptype IN ('n', 'a')
  AND d.classid <> 'pg_extension'::regclass
  AND (pg_identify_object(d.classid, d.objid, d.objsubid)).schema IS DISTINCT FROM %(schema)s
  AND NOT (d.classid = 'pg_rewrite'::regclass
           AND EXISTS (SELECT 1 FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class
                       WHERE r.oid = d.objid AND c.relnamespace = %(ns)s))
  AND NOT (d.classid = 'pg_type'::regclass
           AND EXISTS (SELECT 1 FROM pg_type t WHERE t.oid = d.objid AND t.typnamespace = %(ns)s))
"""


def _same_setting(asked: str, current: str) -> bool:
    """True when a server setting already has the asked value (``1GB`` and ``1024MB`` are the same)."""
    a, c = size_bytes(asked), size_bytes(current)
    return asked.strip() == current.strip() or (a is not None and a == c)


def _truthy(value: Any) -> bool:
    return value is True or str(value).strip().lower() in ("1", "true", "yes", "on")


def _escape_option(value: str) -> str:
    """Escape a value for libpq's ``options`` (spaces and backslashes are special there)."""
    return str(value).replace("\\", "\\\\").replace(" ", "\\ ")


@dataclass
class ServerHandle(Handle):
    """The cell's schema on the server (``cell.identity.schema``) and what provision learnt."""

    conn_id: str = ""
    schema: str = ""
    dbname: str | None = None
    created_schema: bool = False
    settings_requested: dict[str, str] = field(default_factory=dict)
    session_settings: dict[str, str] = field(default_factory=dict)
    settings_not_applied: dict[str, str] = field(default_factory=dict)


class ServerPostgres(Engine[ServerHandle, PostgresSession]):
    """A schema of its own in a database of an existing server."""

    family = "postgres"
    backend = "server"
    handle_type = ServerHandle

    @property
    def conn_id(self) -> str:
        conn_id = self.options.get("conn_id")
        if not conn_id:
            raise ConfigError(
                f"matrix.engines.{self.cell.engine_id}.backends.server.conn_id", "no Airflow connection given for the server backend"
            )
        return str(conn_id)

    def connection(self) -> Any:
        """The Airflow connection, or :class:`EngineUnavailable` saying how to define it."""
        from airflow.sdk import BaseHook
        from airflow.sdk.exceptions import AirflowNotFoundException

        try:
            return BaseHook.get_connection(self.conn_id)
        except AirflowNotFoundException:
            raise EngineUnavailable(
                f"Existing-server path selected (backend=server) but the Airflow connection {self.conn_id!r} is not defined; "
                f"add it (airflow connections add, the UI) or set AIRFLOW_CONN_{self.conn_id.upper()} to a URI or JSON"
            ) from None

    def allow_nonempty(self, conn: Any | None = None) -> bool:
        conn = conn or self.connection()
        return _truthy((conn.extra_dejson or {}).get(ALLOW_NONEMPTY, False))

    def conninfo(self, conn: Any, schema: str | None = None, settings: dict[str, str] | None = None) -> dict[str, Any]:
        """libpq parameters from the connection; the schema becomes the only search_path, settings session-level."""
        extra = conn.extra_dejson or {}
        info: dict[str, Any] = {
            "host": conn.host or None,
            "port": int(conn.port or 5432),
            "user": conn.login or None,
            "dbname": conn.schema or "postgres",
        }
        if conn.password:
            info["password"] = conn.password
        info.update({k: str(extra[k]) for k in _SSL_KEYS if k in extra})
        options = [f"-c search_path={schema}"] if schema else []
        options += [f"-c {name}={_escape_option(value)}" for name, value in (settings or {}).items()]
        if options:
            info["options"] = " ".join(options)
        return {k: v for k, v in info.items() if v is not None}

    def _connect(self, conn: Any, schema: str | None = None) -> Any:
        import psycopg

        info = self.conninfo(conn, schema)
        try:
            return psycopg.connect(**info, autocommit=True, connect_timeout=int((conn.extra_dejson or {}).get("connect_timeout", 15)))
        except psycopg.OperationalError as exc:
            where = f"{info.get('host') or 'local socket'}:{info.get('port')}/{info.get('dbname')}"
            raise EngineUnavailable(
                f"Existing-server path selected (backend=server) but connection {self.conn_id!r} ({where}) fails: {str(exc).strip()}"
            ) from None

    def foreign_objects(self, pg: Any) -> list[str]:
        """Up to 20 objects of the database that this backend did not create (``kind name``)."""
        return [f"{kind} {name}" for kind, name in pg.execute(_FOREIGN_OBJECTS_SQL).fetchall()]

    def _refuse_if_occupied(self, conn: Any, pg: Any) -> None:
        if self.allow_nonempty(conn):
            return
        found = self.foreign_objects(pg)
        if found:
            raise EngineUnavailable(
                f"database {pg.info.dbname!r} of connection {self.conn_id!r} holds objects jsonbench did not create "
                f"({', '.join(found[:8])}{', ...' if len(found) > 8 else ''}); refusing to benchmark next to them. Use an empty "
                f'database, or set {{"{ALLOW_NONEMPTY}": true}} in the connection\'s extra to run in a schema of its own anyway'
            )

    def _check_version(self, pg: Any) -> None:
        num = int(pg.execute("SHOW server_version_num").fetchone()[0])
        want = int(str(self.version).split(".")[0])
        if num // 10000 != want:
            raise EngineUnavailable(
                f"connection {self.conn_id!r} reaches PostgreSQL {num // 10000} but engine {self.cell.engine_id} is PostgreSQL {want}"
            )

    # -- contract -------------------------------------------------------------------------

    def check(self) -> None:
        conn = self.connection()
        with self._connect(conn) as pg:
            self._check_version(pg)
            self._refuse_if_occupied(conn, pg)

    def pgbench(self) -> list[str] | None:
        found = find_pgbench()
        return [str(found)] if found else None

    def handle_for(self) -> ServerHandle:
        return ServerHandle(workdir=str(self.workdir), conn_id=self.conn_id, schema=self.cell.identity.schema)

    def provision(self) -> ServerHandle:
        handle = self.handle_for()
        Path(handle.workdir).mkdir(parents=True)  # marks "this cell has an engine" for the DAG's sweep
        schema = handle.schema
        try:
            conn = self.connection()
            with self._connect(conn) as pg:
                self._check_version(pg)
                self._refuse_if_occupied(conn, pg)
                comment = pg.execute(
                    "SELECT obj_description(n.oid, 'pg_namespace') FROM pg_namespace n WHERE n.nspname = %s", (schema,)
                ).fetchall()
                if comment and not str(comment[0][0] or "").startswith(MARK):
                    raise EngineUnavailable(f"schema {schema} exists in {pg.info.dbname!r} and was not made by jsonbench; leaving it alone")
                if comment:  # an earlier attempt of this very cell left it: ours, drop it first
                    self._drop_schema(pg, schema)
                pg.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
                handle.created_schema = True
                note = (
                    f"{MARK} run={self.cell.run.run_id} cell={self.cell.cell_id}; made by the existing-server backend, dropped at teardown"
                )
                pg.execute(sql.SQL("COMMENT ON SCHEMA {} IS {}").format(sql.Identifier(schema), sql.Literal(note)))
                handle.dbname = pg.info.dbname
                handle.settings_requested = self.cell.server_settings
                handle.session_settings, handle.settings_not_applied = self._split_settings(pg, handle.settings_requested)
        except BaseException:
            try:
                self.teardown(handle)
            except Exception as exc:  # keep the first error: it is the one that explains
                log.error("cleanup after a failed provision of %s failed too: %s", schema, exc)
            raise
        return handle

    def _split_settings(self, pg: Any, wanted: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
        """Settings a session may set (set per session), and the others with what the server has instead."""
        superuser = bool(pg.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()[0])
        rows = {
            r[0]: (r[1], r[2])
            for r in pg.execute("SELECT name, context, current_setting(name) FROM pg_settings WHERE name = ANY(%s)", (list(wanted),))
        }
        session: dict[str, str] = {}
        skipped: dict[str, str] = {}
        for name, value in wanted.items():
            if name not in rows:
                skipped[name] = f"asked {value}; unknown to this server"
            elif rows[name][0] == "user" or (rows[name][0] == "superuser" and superuser):
                session[name] = str(value)
            elif _same_setting(str(value), rows[name][1]):
                continue  # the server already runs with it
            else:
                skipped[name] = f"asked {value}; the server runs with {rows[name][1]} ({rows[name][0]} setting, not settable per session)"
        return session, skipped

    def _drop_schema(self, pg: Any, schema: str) -> None:
        ns = pg.execute("SELECT oid FROM pg_namespace WHERE nspname = %s", (schema,)).fetchall()
        if not ns:
            return
        outside = [r[0] for r in pg.execute(_OUTSIDE_DEPENDENTS_SQL, {"ns": ns[0][0], "schema": schema}).fetchall()]
        if outside:
            raise EngineUnavailable(f"not dropping schema {schema}: objects outside it depend on it ({', '.join(outside[:8])})")
        pg.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))

    def facts(self, handle: ServerHandle) -> dict[str, Any]:
        conn = self.connection()
        with self.session(handle) as s:
            facts = server_facts(s)
        facts["build"] = f"existing server via connection {self.conn_id}: {facts.get('version_string')}"
        facts["backend"] = self.backend
        facts["schema"] = handle.schema
        facts["database"] = handle.dbname or conn.schema
        facts["settings_not_applied"] = handle.settings_not_applied
        pgbench = find_pgbench()
        facts["pgbench"] = str(pgbench) if pgbench else None
        return facts

    @contextmanager
    def session(self, handle: ServerHandle) -> Iterator[PostgresSession]:
        conn = self.connection()
        schema = handle.schema
        info = self.conninfo(conn, schema, handle.session_settings)
        env = {
            "PGHOST": str(info.get("host", "")),
            "PGPORT": str(info["port"]),
            "PGUSER": str(info.get("user", "")),
            "PGDATABASE": str(info["dbname"]),
        }
        env.update({_LIBPQ_ENV[k]: str(v) for k, v in info.items() if k in _LIBPQ_ENV})
        if conn.password:
            env["PGPASSWORD"] = conn.password  # the only way the password reaches pgbench: never on its command line
        pgbench = find_pgbench()
        session = PostgresSession(
            conninfo=info,
            pgbench=_pgbench_keeping_options(str(pgbench), info.get("options", "")) if pgbench else None,
            pgbench_env={k: v for k, v in env.items() if v},
            schema=schema,
            statement_timeout_s=self.cell.postgres.statement_timeout_s if self.cell.postgres else 0,
        )
        with opened(session):
            yield session

    def teardown(self, handle: ServerHandle) -> None:
        """Drop the cell's schema (only if it carries our mark), then the local marker folder. Idempotent."""
        schema = handle.schema or self.cell.identity.schema
        conn = self.connection()
        with self._connect(conn) as pg:
            row = pg.execute("SELECT obj_description(n.oid, 'pg_namespace') FROM pg_namespace n WHERE n.nspname = %s", (schema,)).fetchall()
            if row and str(row[0][0] or "").startswith(MARK):
                self._drop_schema(pg, schema)
            elif row:
                log.warning("schema %s exists but was not made by jsonbench: left alone", schema)
        shutil.rmtree(handle.workdir, ignore_errors=True)


def _pgbench_keeping_options(pgbench: str, options: str) -> list[str]:
    """pgbench behind a tiny shell that puts our options in front of any ``PGOPTIONS`` the caller sets.

    A caller that sets ``PGOPTIONS`` for one run (``-c synchronous_commit=off``) would otherwise
    replace the search_path and pgbench would look for the tables in the wrong schema.
    """
    if not options:
        return [pgbench]
    quoted = options.replace("'", "'\\''")
    script = f'PGOPTIONS=\'{quoted}\'"${{PGOPTIONS:+ $PGOPTIONS}}"; export PGOPTIONS; exec "$0" "$@"'
    return ["/bin/sh", "-c", script, pgbench]
