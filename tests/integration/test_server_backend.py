"""The existing-server backend against a real PostgreSQL 16 (an embedded server standing in for someone's server).

The server is started with the embedded adapter; an Airflow connection given as
``AIRFLOW_CONN_JSONBENCH_POSTGRES_16`` (JSON) points at its unix socket. Everything else is the
real path: plan (check), provision, the large-document suite's workloads, teardown, through
:mod:`jsonbench.orchestration.tasks`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from jsonbench import pgbench
from jsonbench.cell import Cell
from jsonbench.dataset.staging import Staging
from jsonbench.engines.base import engine_for
from jsonbench.engines.postgres_server import ServerPostgres
from jsonbench.errors import EngineUnavailable
from jsonbench.orchestration import tasks
from jsonbench.suites import get_suite
from tests.conftest import planned_of

CONN_VAR = "AIRFLOW_CONN_JSONBENCH_POSTGRES_16"
SUITE = "large_document_update"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A running PostgreSQL 16 (embedded build), stopped at the end of the module."""
    from jsonbench.cell import RunRef
    from jsonbench.orchestration.plan import plan_cells, resolve

    cfg = resolve(
        {"scale": "smoke", "engines": ["postgres-16"], "suites": [SUITE], "results_dir": str(tmp_path_factory.mktemp("unused"))}, env={}
    )
    cell = plan_cells(cfg, RunRef(run_id="server_host", logical_date=None, hardware_label="t", results_dir="", scale="smoke"))[0]
    engine = engine_for(cell)
    handle = engine.provision()
    try:
        yield handle.to_json()
    finally:
        engine.teardown(handle)


def _connect(server: dict[str, Any], dbname: str = "bench") -> psycopg.Connection:
    return psycopg.connect(host=server["socket_dir"], port=server["port"], user=server["user"], dbname=dbname, autocommit=True)


def _use_connection(monkeypatch: pytest.MonkeyPatch, server: dict[str, Any], **extra: Any) -> None:
    conn = {
        "conn_type": "postgres",
        "host": server["socket_dir"],
        "port": server["port"],
        "login": server["user"],
        "schema": "bench",
        "extra": extra,
    }
    monkeypatch.setenv(CONN_VAR, json.dumps(conn))


def _snapshot(server: dict[str, Any]) -> dict[str, Any]:
    """Everything outside a jsonbench schema that a benchmark must leave alone, in every database."""
    snap: dict[str, Any] = {}
    with _connect(server, "postgres") as pg:
        snap["databases"] = sorted(r[0] for r in pg.execute("SELECT datname FROM pg_database"))
        snap["roles"] = sorted(r[0] for r in pg.execute("SELECT rolname || ':' || rolsuper::text FROM pg_roles"))
    for db in ("postgres", "bench"):
        with _connect(server, db) as pg:
            not_ours = (
                "n.nspname NOT LIKE 'jsonbench\\_%%' AND n.nspname NOT LIKE 'pg\\_temp%%' AND n.nspname NOT LIKE 'pg\\_toast\\_temp%%'"
            )
            snap[db] = {
                "schemas": sorted(r[0] for r in pg.execute(f"SELECT n.nspname FROM pg_namespace n WHERE {not_ours}", ())),
                "relations": sorted(
                    r[0]
                    for r in pg.execute(
                        f"SELECT n.nspname || '.' || c.relname || ':' || c.relkind::text FROM pg_class c JOIN pg_namespace n ON "
                        f"n.oid = c.relnamespace WHERE {not_ours}",
                        (),
                    )
                ),
                "functions": sorted(
                    r[0]
                    for r in pg.execute(
                        f"SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE {not_ours}",
                        (),
                    )
                ),
                "extensions": sorted(
                    r[0] for r in pg.execute("SELECT extname || ':' || extnamespace::regnamespace::text FROM pg_extension")
                ),
            }
    return snap


def _jsonbench_schemas(server: dict[str, Any]) -> list[str]:
    with _connect(server) as pg:
        return [r[0] for r in pg.execute("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'jsonbench\\_%'")]


def test_suite_runs_in_its_own_schema_and_leaves_nothing_behind(
    server: dict[str, Any], make_cells: Any, results_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _use_connection(monkeypatch, server)
    before = _snapshot(server)
    planned = tasks.plan(
        {"scale": "smoke", "engines": ["postgres-16"], "suites": [SUITE], "backend": "server", "results_dir": str(results_dir)},
        "server_run",
        None,
    )
    cell = Cell.from_json(planned["cells"][0])
    assert cell.backend == "server" and isinstance(engine_for(cell), ServerPostgres)
    handle = tasks.provision(planned_of(cell), cell.cell_id)
    schema = handle["schema"]
    try:
        assert schema == cell.identity.schema and _jsonbench_schemas(server) == [schema]
        with _connect(server) as pg:  # the suite's tables and helper function landed in the cell's schema only
            assert (
                pg.execute(
                    "SELECT count(*) FROM pg_proc WHERE proname = 'jsonbench_make_noise' AND pronamespace = %s::regnamespace", (schema,)
                ).fetchone()[0]
                == 1
            )
        for workload in get_suite(SUITE).workloads:
            tasks.run_workload(planned_of(cell), cell.cell_id, handle, workload)
        with _connect(server) as pg:
            tables = {
                r[0] for r in pg.execute("SELECT relname FROM pg_class WHERE relnamespace = %s::regnamespace AND relkind = 'r'", (schema,))
            }
        assert {f"docs_{w}" for w in get_suite(SUITE).workloads} <= tables
    finally:
        tasks.teardown(planned_of(cell), cell.cell_id, handle)
    tasks.teardown(planned_of(cell), cell.cell_id, handle)  # idempotent
    assert _jsonbench_schemas(server) == []
    assert not cell.identity.workdir().exists()
    assert _snapshot(server) == before

    staging = Staging(results_dir, "server_run")
    facts = staging.read_engine(cell.cell_id)
    assert facts["backend"] == "server" and facts["version"].startswith("16.") and facts["schema"] == schema
    m = {(r.workload, x.metric): x for r in staging.records() for x in r.measurements}
    half = cell.scale_params["rows"] // 2
    for workload in get_suite(SUITE).workloads:
        # statistics read from the cell's schema (not public), really flushed
        assert m[(workload, "n_tup_upd")].value == half, workload
        assert m[(workload, "heap_bytes_after")].value > 0
        assert m[(workload, "wal_bytes")].value > 0
    assert m[("json_big_idx", "n_tup_hot_upd")].value == 0
    assert m[("rel_small", "n_tup_hot_upd")].value > 0
    assert m[("json_big", "toast_growth")].value > 0
    assert m[("rel_big", "toast_growth")].value == 0


def test_refuses_a_database_holding_other_objects_unless_allowed(
    server: dict[str, Any], make_cells: Any, results_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _connect(server) as pg:
        pg.execute("CREATE TABLE public.keep_me (id int PRIMARY KEY, note text)")
        pg.execute("INSERT INTO public.keep_me VALUES (1, 'someone else''s data')")
    try:
        _use_connection(monkeypatch, server)
        before = _snapshot(server)
        params = {"scale": "smoke", "engines": ["postgres-16"], "suites": [SUITE], "backend": "server", "results_dir": str(results_dir)}
        with pytest.raises(EngineUnavailable, match=r"public\.keep_me.*jsonbench_allow_nonempty"):
            tasks.plan(params, "refused_run", None)  # the plan task refuses before anything starts
        cell = make_cells(SUITE, ["postgres-16"], backend="server", run_id="refused_run")[0]
        with pytest.raises(EngineUnavailable, match="jsonbench_allow_nonempty"):
            tasks.provision(planned_of(cell), cell.cell_id)  # and so does provision, if it is reached anyway
        assert _jsonbench_schemas(server) == [] and not cell.identity.workdir().exists()

        _use_connection(monkeypatch, server, jsonbench_allow_nonempty=True)
        planned = tasks.plan(params, "allowed_run", None)
        cell = Cell.from_json(planned["cells"][0])
        handle = tasks.provision(planned_of(cell), cell.cell_id)
        try:
            tasks.run_workload(planned_of(cell), cell.cell_id, handle, "rel_small")
        finally:
            tasks.teardown(planned_of(cell), cell.cell_id, handle)
        assert _jsonbench_schemas(server) == []
        assert _snapshot(server) == before
        with _connect(server) as pg:
            assert pg.execute("SELECT id, note FROM public.keep_me").fetchall() == [(1, "someone else's data")]
            # the suite's tables of the same names went to its schema, not next to keep_me
            assert pg.execute("SELECT count(*) FROM pg_class WHERE relname LIKE 'docs\\_%'").fetchone()[0] == 0
        m = {(r.workload, x.metric): x for r in Staging(results_dir, "allowed_run").records() for x in r.measurements}
        assert m[("rel_small", "n_tup_upd")].value == cell.scale_params["rows"] // 2
    finally:
        with _connect(server) as pg:
            pg.execute("DROP TABLE IF EXISTS public.keep_me")


def test_teardown_drops_nothing_that_something_outside_depends_on(
    server: dict[str, Any], make_cells: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _use_connection(monkeypatch, server, jsonbench_allow_nonempty=True)
    cell = make_cells(SUITE, ["postgres-16"], backend="server", run_id="dependents_run")[0]
    engine = engine_for(cell)
    handle = engine.provision()
    schema = handle.schema
    try:
        with _connect(server) as pg:
            pg.execute(f"CREATE TABLE {schema}.t (id int)")
            pg.execute(f"CREATE VIEW public.watch_t AS SELECT id FROM {schema}.t")
        with pytest.raises(EngineUnavailable, match="watch_t"):
            engine.teardown(handle)
        assert _jsonbench_schemas(server) == [schema]  # left in place, with the view outside intact
        with _connect(server) as pg:
            assert pg.execute("SELECT count(*) FROM public.watch_t").fetchone()[0] == 0
            pg.execute("DROP VIEW public.watch_t")
    finally:
        engine.teardown(handle)
    assert _jsonbench_schemas(server) == []


def test_foreign_schema_of_the_same_name_is_never_dropped(server: dict[str, Any], make_cells: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _use_connection(monkeypatch, server, jsonbench_allow_nonempty=True)
    cell = make_cells(SUITE, ["postgres-16"], backend="server", run_id="squatted_run")[0]
    engine = engine_for(cell)
    schema = cell.identity.schema
    with _connect(server) as pg:
        pg.execute(f"CREATE SCHEMA {schema}")  # not ours: no jsonbench comment
        pg.execute(f"CREATE TABLE {schema}.precious (id int)")
    try:
        with pytest.raises(EngineUnavailable, match="not made by jsonbench"):
            engine.provision()
        engine.teardown(engine.handle_for())  # a sweep must not drop it either
        with _connect(server) as pg:
            assert pg.execute(f"SELECT count(*) FROM {schema}.precious").fetchone()[0] == 0
    finally:
        with _connect(server) as pg:
            pg.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def test_session_settings_search_path_and_pgbench(
    server: dict[str, Any], make_cells: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _use_connection(monkeypatch, server)
    cell = make_cells(
        SUITE, ["postgres-16"], backend="server", run_id="session_run", server_settings={"work_mem": "7MB", "shared_buffers": "96MB"}
    )[0]
    engine = engine_for(cell)
    handle = engine.provision()
    try:
        with engine.session(handle) as s:
            assert s.scalar("SHOW work_mem") == "7MB"  # user-level setting applied to the session
            assert s.scalar("SHOW search_path") == handle.schema and s.schema == handle.schema
            s.execute("CREATE TABLE probe AS SELECT g AS id FROM generate_series(1, 10) g")
            assert s.relation_sizes("probe").heap > 0  # default schema is the cell's
            script = tmp_path / "probe.sql"
            script.write_text("SELECT count(*) FROM probe;\n")
            assert s.pgbench is not None and "PGPASSWORD" not in " ".join(s.pgbench)
            # A caller's own PGOPTIONS must not lose the search_path (probe exists only in the cell's schema).
            res = pgbench.run(
                s.pgbench, s.pgbench_env, script, clients=1, threads=1, transactions=5, options="-c synchronous_commit=off", log=False
            )
            assert res.processed == 5 and res.failed == 0
        facts = engine.facts(handle)
        # a server-level setting is not changed on someone's server: recorded as not applied, with what runs instead
        assert "shared_buffers" not in handle.session_settings
        assert facts["settings_not_applied"]["shared_buffers"].startswith("asked 96MB; the server runs with 1GB (postmaster")
        assert facts["settings"].get("work_mem") == "7MB"
    finally:
        engine.teardown(handle)


def test_missing_connection_is_a_clear_error(make_cells: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CONN_VAR, raising=False)
    cell = make_cells(SUITE, ["postgres-16"], backend="server")[0]
    with pytest.raises(EngineUnavailable, match=r"backend=server.*jsonbench_postgres_16.*AIRFLOW_CONN_JSONBENCH_POSTGRES_16"):
        engine_for(cell).check()


def test_wrong_major_version_is_refused(server: dict[str, Any], make_cells: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    conn = {"conn_type": "postgres", "host": server["socket_dir"], "port": server["port"], "login": server["user"], "schema": "bench"}
    monkeypatch.setenv("AIRFLOW_CONN_JSONBENCH_POSTGRES_17", json.dumps(conn))
    cell = make_cells(SUITE, ["postgres-17"], backend="server")[0]
    with pytest.raises(EngineUnavailable, match="reaches PostgreSQL 16 but engine postgres-17 is PostgreSQL 17"):
        engine_for(cell).check()


def test_two_cells_share_a_database_without_stepping_on_each_other(
    server: dict[str, Any], make_cells: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two suites on one server interleave: pg_prewarm installed into one cell's schema must serve the other too."""
    _use_connection(monkeypatch, server)
    before = _snapshot(server)
    a = make_cells(SUITE, ["postgres-16"], backend="server", run_id="shared_a")[0]
    b = make_cells(SUITE, ["postgres-16"], backend="server", run_id="shared_b")[0]
    engine = engine_for(a)
    ha = engine.provision()
    hb = engine_for(b).provision()
    try:
        assert ha.schema != hb.schema
        with engine.session(ha) as sa, engine_for(b).session(hb) as sb:
            for s in (sa, sb):
                s.execute("CREATE TABLE t AS SELECT g AS id FROM generate_series(1, 1000) g")
            assert sa.prewarm("t") > 0  # installs pg_prewarm into a's schema
            assert sb.prewarm("t") > 0  # b reaches it there
            assert sa.relation_sizes("t") == sb.relation_sizes("t")  # each its own table of the same name
        engine.teardown(ha)  # takes the extension along with a's schema
        with engine_for(b).session(hb) as sb:
            assert sb.prewarm("t") > 0  # reinstalled, now in b's schema
    finally:
        engine.teardown(ha)
        engine_for(b).teardown(hb)
    assert _jsonbench_schemas(server) == [] and _snapshot(server) == before
