"""Suite "documents" on PostgreSQL: the seeds' experiments on the user's own documents.

The documents are the run's input (:mod:`jsonbench.suites.documents.input`): the setup step copies
the first ``max_documents`` of them, as their exact text, into a source table (``COPY``), then loads
that text in row order into a json table, a jsonb table (both pglz, default fillfactor) and the typed
twin (seed 000's design: one typed column per top-level scalar key, ``_rest`` jsonb for the rest).
Three workloads:

* ``storage`` (seeds 001 and 003): the input text's average length; json and jsonb datums before
  compression and the share of them over the 2 kB TOAST threshold; per type and TOAST method (pglz,
  and lz4 where the build has it, else not applicable with the reason) the average stored size, the
  share compressed, table and TOAST bytes; the twin's table and TOAST bytes; their ratios;
* ``read`` (seeds 001 and 003): per read key, ``count`` and ``sum(length(...))`` of the key over every
  row of the json table, the jsonb table and the twin's column, timed by the server (``EXPLAIN
  ANALYZE``, TIMING OFF) after one warm-up, ``read_runs`` times, the three interleaved; the counts must
  agree (else the tables do not hold the same documents, and the workload fails);
* ``update`` (seeds 000 and 004): per update key and design, on a fresh fillfactor-70 copy and after a
  CHECKPOINT, a fixed count of single-row updates (``update_count`` rows, evenly spread over the table,
  the same rows on every host; each its own transaction, synchronous commit on): ``jsonb`` rewrites the
  document with ``jsonb_set``, ``column`` (seed 004) writes the key held in its own column next to the
  rest of the document, ``twin`` (seed 000) writes the twin's column (or its ``_rest`` for a nested
  key). WAL per update (insert position difference over the fixed count: the project's fixed-count
  method), HOT share, heap and TOAST growth, tps, and their ratios.

Where it departs from the seeds: the documents are not generated, so no seed figure is reproduced and
no reproduction band applies (there is no ``documents.reproduction.json``); the seeds' mechanisms are
measured on the user's data instead. Reads are of the user's keys, not of a key ``first``. Updates
are a fixed count of single-row transactions (the catalogue's fixed-count WAL method without pgbench:
one client, so tps is one session's rate), not seed 004's one statement over half the table. json is
not updated (it has no setter; seed 001's round trip through jsonb says nothing about the designs).

Why two suites (this one and ``documents_sqlite``) sharing the input module, and not one suite for
both families: the matrix pairs a suite with the engines of its ``family``, and a suite talks to one
kind of session; one class for both would have to ask which engine it has. The matrix's ``part_of``
makes ``--suites documents`` select the SQLite half too (:func:`jsonbench.orchestration.plan.resolve`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from jsonbench.cell import Cell
from jsonbench.dataset.measurement import MetricKind
from jsonbench.errors import BenchmarkError
from jsonbench.sqlfiles import compose, load_sql
from jsonbench.suites.base import LOAD, MEASURE, CellCost, KindTable, Suite, WorkloadContext, check_kinds
from jsonbench.suites.documents.plan import DocumentsPlan, KeyPath
from jsonbench.suites.documents.read import document_texts
from jsonbench.suites.pgcost import postgres_cost

if TYPE_CHECKING:
    from jsonbench.engines.postgres_session import PostgresSession

NAME = "documents"
SOURCE, JSON_T, JSONB_T, TWIN_T = "doc_source", "doc_json", "doc_jsonb", "doc_twin"
TYPES = ("json", "jsonb")
COMPRESSIONS = ("pglz", "lz4")
#: PostgreSQL's TOAST_TUPLE_THRESHOLD on 8 kB pages: a row larger than this is compressed, then moved out of line.
TOAST_THRESHOLD = 2032
#: The update designs, in the order each repetition runs them.
DESIGNS = ("jsonb", "column", "twin")
#: The twin's types by their pg_type names (what add_column.sql binds as an identifier).
PG_TYPES = {"boolean": "bool", "bigint": "int8", "numeric": "numeric", "date": "date", "timestamptz": "timestamptz", "text": "text"}
LZ4_REASON = "{base}: PostgreSQL was built without --with-lz4, so COMPRESSION lz4 is refused"
NESTED_REASON = (
    "{key} has no typed column in the twin (a nested key, or a key whose values no one column type holds): it stays in the twin's _rest"
)

#: Every metric: workload -> metric -> (unit, kind). Sizes and counts of the same input are facts
#: (ordered loads, fixed fillfactor); WAL volumes are sampled (the server may log other records in the
#: span, as large_document_update says); times, rates and their ratios are timed.
METRICS: dict[str, dict[str, tuple[str, MetricKind]]] = {
    "storage": {
        "input_documents": ("rows", "deterministic"),
        "avg_input_bytes": ("bytes", "deterministic"),
        "avg_datum_bytes": ("bytes", "deterministic"),
        "over_threshold_share": ("ratio", "deterministic"),
        "datum_size_ratio": ("x", "deterministic"),
        "avg_stored_bytes": ("bytes", "deterministic"),
        "compressed_share": ("ratio", "deterministic"),
        "table_bytes": ("bytes", "deterministic"),
        "toast_bytes": ("bytes", "deterministic"),
        "table_size_ratio": ("x", "deterministic"),
    },
    "read": {
        "read_time": ("ms", "timed"),
        "read_speedup": ("x", "timed"),
        "twin_read_speedup": ("x", "timed"),
        "rows_read": ("rows", "deterministic"),
    },
    "update": {
        "tps": ("tps", "timed"),
        "wal_bytes_per_update": ("bytes", "sampled"),
        "hot_share": ("ratio", "deterministic"),
        "heap_growth": ("bytes", "deterministic"),
        "toast_growth": ("bytes", "deterministic"),
        "updates": ("rows", "deterministic"),
        "wal_ratio": ("x", "sampled"),
        "tps_ratio": ("x", "timed"),
    },
}
_KINDS: KindTable = check_kinds(NAME, {w: {m: kind for m, (_, kind) in ms.items()} for w, ms in METRICS.items()})


class SuiteDataError(BenchmarkError):
    """Two designs of the same documents disagree: a comparison of different data is no measurement."""


def variant(design: str, key: str) -> str:
    """``<design>:<key>``: design first, so a key with dots or colons in it never makes the variant ambiguous."""
    return f"{design}:{key}"


def updated_ids(rows: int, count: int) -> list[int]:
    """The fixed rows a run updates: ``count`` ids evenly spread over ``1..rows`` (each at most once), in that order."""
    n = max(1, min(count, rows))
    return [1 + (i * rows) // n for i in range(n)]


def plan_of(ctx: WorkloadContext[Any]) -> DocumentsPlan:
    return DocumentsPlan.from_params(ctx.scale_params)


class Documents(Suite["PostgresSession"]):
    name: ClassVar[str] = NAME
    workloads: ClassVar[tuple[str, ...]] = tuple(METRICS)
    headline: ClassVar[tuple[str, ...]] = ("table_size_ratio", "over_threshold_share", "read_speedup", "wal_ratio", "tps_ratio")
    #: Split across engine starts (``starts``): the timed reads and the update runs.
    repetition_params: ClassVar[tuple[str, ...]] = ("read_runs", "update_repetitions")

    def expected_metrics(self) -> list[tuple[str, str]]:
        return [(w, m) for w, ms in METRICS.items() for m in ms]

    def metric_kinds(self) -> KindTable:
        return _KINDS

    def load(self, ctx: WorkloadContext[PostgresSession]) -> None:
        """The documents' text into the source table, then the json, jsonb and twin tables, in row order."""
        s, plan = ctx.session, plan_of(ctx)
        with ctx.window(LOAD):
            s.run_file(NAME, "create_source", table=SOURCE)
            sent = s.copy_rows(compose(load_sql(NAME, "copy_source").strip(), table=SOURCE), document_texts(plan))
            if sent != plan.loaded:
                raise SuiteDataError(f"{plan.source}: {sent} documents loaded, {plan.loaded} planned")
            s.run_file(NAME, "vacuum", table=SOURCE)
            for typ, table in (("json", JSON_T), ("jsonb", JSONB_T)):
                s.run_file(NAME, "create_doc", table=table, type=typ, method="pglz")
                s.run_file(NAME, "load_doc", table=table, type=typ, source=SOURCE)
                s.run_file(NAME, "vacuum", table=table)
            s.run_file(NAME, "create_twin", table=TWIN_T)
            for col in plan.twin:
                s.run_file(NAME, "add_column", table=TWIN_T, column=col.key, type=PG_TYPES[col.type])
            s.run_file(NAME, "load_twin", {"keys": [c.key for c in plan.twin]}, table=TWIN_T, source=JSONB_T)
            s.run_file(NAME, "vacuum", table=TWIN_T)
        for table in (JSON_T, JSONB_T, TWIN_T):
            count = int(s.query_file(NAME, "count_rows", table=table)[0][0])
            if count != plan.loaded:
                raise SuiteDataError(f"{table} holds {count} rows, {plan.loaded} documents were loaded")

    def run(self, workload: str, ctx: WorkloadContext[PostgresSession]) -> None:
        {"storage": _storage, "read": _read, "update": _update}[workload](ctx)

    def estimate(self, cell: Cell) -> CellCost:
        """From the input's bytes and the documents loaded (the plan put both in the scale's parameters).

        Data: the source text, json, jsonb and the twin (about 4x the loaded text, plus TOAST and page
        overhead), an lz4 pair at most at once, and one design's update copy. Time: a guess, not yet fitted to a
        recorded run (the suite has none): loads at 20 MB/s of text, reads at 50 MB/s per scan, and
        each update transaction 3 ms (an fsync), times the repetitions.
        """
        p = cell.scale_params
        loaded = int(p.get("documents_loaded", 0) or 0)
        share = loaded / max(int(p.get("input_documents", 1) or 1), 1)
        text = float(p.get("input_bytes", 0) or 0) * share
        reps = cell.repetitions
        read_keys = len(p.get("read_keys") or [1])
        update_keys = len(p.get("update_keys") or [1])
        updates = min(int(p.get("update_count", 100)), max(loaded, 1))
        update_reps = min(reps, int(p.get("update_repetitions", reps)))
        data = 6 * text + loaded * 200
        seconds = (
            5 * text / 20e6
            + read_keys * 3 * (1 + int(p.get("read_runs", 5))) * text / 50e6
            + update_keys * update_reps * len(DESIGNS) * (updates * 3e-3 + 1.5 * text / 20e6 + 0.5)
            + 3.0
        )
        return postgres_cost(
            cell,
            load_bytes=5 * text,
            data_peak_bytes=data,
            wal_bytes=5 * text,
            clients=1,
            duration_s=seconds,
            source="estimate from the input's size (not fitted to a recorded run)",
        )


# -- storage ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stored:
    avg_stored_bytes: float
    compressed_share: float
    table_bytes: int
    toast_bytes: int


def _stored(s: PostgresSession, table: str) -> Stored:
    avg, compressed = s.query_file(NAME, "stored_stats", table=table)[0]
    sizes = s.relation_sizes(table)
    return Stored(float(avg), float(compressed), sizes.total, sizes.toast)


def _record_stored(ctx: WorkloadContext[PostgresSession], var: str, st: Stored) -> None:
    ctx.record("avg_stored_bytes", "bytes", st.avg_stored_bytes, variant=var)
    ctx.record("compressed_share", "ratio", st.compressed_share, variant=var)
    ctx.record("table_bytes", "bytes", float(st.table_bytes), variant=var)
    ctx.record("toast_bytes", "bytes", float(st.toast_bytes), variant=var)


def _storage(ctx: WorkloadContext[PostgresSession]) -> None:
    s, plan = ctx.session, plan_of(ctx)
    extra = {"threshold_bytes": TOAST_THRESHOLD}
    avg_input, datum_json, datum_jsonb, over_json, over_jsonb, count = s.query_file(
        NAME, "source_stats", {"threshold": TOAST_THRESHOLD}, source=SOURCE
    )[0]
    ctx.record("input_documents", "rows", float(count), variant="input", extra={"input_documents": plan.fingerprint.documents})
    ctx.record("avg_input_bytes", "bytes", float(avg_input), variant="input")
    ctx.record("avg_datum_bytes", "bytes", float(datum_json), variant="json")
    ctx.record("avg_datum_bytes", "bytes", float(datum_jsonb), variant="jsonb")
    ctx.record("over_threshold_share", "ratio", float(over_json), variant="json", extra=extra)
    ctx.record("over_threshold_share", "ratio", float(over_jsonb), variant="jsonb", extra=extra)
    ctx.record("datum_size_ratio", "x", float(datum_jsonb) / float(datum_json), variant="jsonb_vs_json")

    pglz = {"json": _stored(s, JSON_T), "jsonb": _stored(s, JSONB_T)}
    for typ in TYPES:
        _record_stored(ctx, f"{typ}.pglz", pglz[typ])
    ctx.record("table_size_ratio", "x", pglz["jsonb"].table_bytes / pglz["json"].table_bytes, variant="jsonb_vs_json.pglz")
    twin = s.relation_sizes(TWIN_T)
    ctx.record("table_bytes", "bytes", float(twin.total), variant="twin")
    ctx.record("toast_bytes", "bytes", float(twin.toast), variant="twin")
    ctx.record("table_size_ratio", "x", twin.total / pglz["jsonb"].table_bytes, variant="twin_vs_jsonb.pglz")

    lz4_missing = ctx.require("lz4")
    if lz4_missing:
        reason = LZ4_REASON.format(base=lz4_missing)
        for typ in TYPES:
            ctx.not_applicable(
                [("avg_stored_bytes", "bytes"), ("compressed_share", "ratio"), ("table_bytes", "bytes"), ("toast_bytes", "bytes")],
                reason,
                variant=f"{typ}.lz4",
            )
        ctx.not_applicable([("table_size_ratio", "x")], reason, variant="jsonb_vs_json.lz4")
        return
    lz4: dict[str, Stored] = {}
    for typ in TYPES:
        table = f"doc_{typ}_lz4"
        s.run_file(NAME, "create_doc", table=table, type=typ, method="lz4")
        ctx.timed(partial(s.run_file, NAME, "load_doc", table=table, type=typ, source=SOURCE), LOAD)
        s.run_file(NAME, "vacuum", table=table)
        lz4[typ] = _stored(s, table)
        s.run_file(NAME, "drop", table=table)
        _record_stored(ctx, f"{typ}.lz4", lz4[typ])
    ctx.record("table_size_ratio", "x", lz4["jsonb"].table_bytes / lz4["json"].table_bytes, variant="jsonb_vs_json.lz4")


# -- read -------------------------------------------------------------------------------------------


def _read(ctx: WorkloadContext[PostgresSession]) -> None:
    s, plan = ctx.session, plan_of(ctx)
    runs = int(ctx.scale_params.get("read_runs", 5))
    for key in plan.read_keys:
        path = list(KeyPath.parse(key, "read_keys").parts)
        col = plan.twin_column(key)
        queries: dict[str, tuple[Any, Any, dict[str, Any] | None]] = {
            typ: (
                compose(load_sql(NAME, "read_doc"), table=table),
                compose(load_sql(NAME, "read_doc_timed"), table=table),
                {"path": path},
            )
            for typ, table in (("json", JSON_T), ("jsonb", JSONB_T))
        }
        if col is not None:
            queries["twin"] = (
                compose(load_sql(NAME, "read_column"), table=TWIN_T, column=col.key),
                compose(load_sql(NAME, "read_column_timed"), table=TWIN_T, column=col.key),
                None,
            )
        # The warm-up (the seed's one run before the timed ones) gives the result the designs must agree on.
        results = {d: tuple(s.execute(q, p)[0]) for d, (q, _, p) in queries.items()}
        counts = {d: int(r[0] or 0) for d, r in results.items()}
        if len(set(counts.values())) != 1:
            raise SuiteDataError(f"reading {key!r}: the designs count different documents with it: {counts}")
        times: dict[str, list[float]] = {d: [] for d in queries}
        for _ in range(runs):  # interleaved: a busy spell of the machine hits every design alike
            for d, (_, timed, p) in queries.items():
                got, _ = ctx.measure(partial(s.scalar, timed, p), retry_disturbed=True)
                times[d].append(float(got[0]["Execution Time"]))
        extra = {"key": key, "warmups": 1, "rows": plan.loaded}
        for d, ms in times.items():
            ctx.record("read_time", "ms", ms, variant=variant(d, key), extra=extra)
        ctx.record("rows_read", "rows", float(counts["jsonb"]), variant=variant("jsonb", key), extra={"key": key})
        ctx.record(
            "read_speedup", "x", [j / b for j, b in zip(times["json"], times["jsonb"], strict=True)], variant=variant("jsonb_vs_json", key)
        )
        if col is None:
            ctx.not_applicable([("twin_read_speedup", "x")], NESTED_REASON.format(key=key), variant=variant("twin_vs_jsonb", key))
        else:
            ctx.record(
                "twin_read_speedup",
                "x",
                [b / t for b, t in zip(times["jsonb"], times["twin"], strict=True)],
                variant=variant("twin_vs_jsonb", key),
            )


# -- update -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Design:
    """One update design of one key: the table its copies are made from, and the update statement with its parameters."""

    table: str
    statement: Any
    params: dict[str, Any]


def _designs(ctx: WorkloadContext[PostgresSession], plan: DocumentsPlan, key: str, value: str) -> dict[str, Design]:
    """The three designs of ``key``: jsonb (the document), column (seed 004: the key beside the document), twin (seed 000)."""
    s = ctx.session
    path = list(KeyPath.parse(key, "update_keys").parts)
    col = plan.twin_column(key)
    # Seed 004's design for this key: built once per key (a read-only base; each run updates a fresh copy).
    base_column = "doc_column_base"
    s.run_file(NAME, "create_column", table=base_column)
    s.run_file(NAME, "add_column", table=base_column, column="_key", type=PG_TYPES[col.type] if col else "jsonb")
    ctx.timed(partial(s.run_file, NAME, "load_column", {"path": path}, table=base_column, source=JSONB_T), LOAD)
    s.run_file(NAME, "vacuum", table=base_column)
    upd = load_sql(NAME, "update_doc").strip()
    by_column = load_sql(NAME, "update_column").strip()
    copy = "doc_update"
    twin = (
        Design(TWIN_T, compose(by_column, table=copy, column=col.key), {"row": json.dumps({col.key: json.loads(value)})})
        if col is not None
        else Design(TWIN_T, compose(upd, table=copy, doc="_rest"), {"path": path, "value": value})
    )
    return {
        "jsonb": Design(JSONB_T, compose(upd, table=copy, doc="doc"), {"path": path, "value": value}),
        "column": Design(base_column, compose(by_column, table=copy, column="_key"), {"row": json.dumps({"_key": json.loads(value)})}),
        "twin": twin,
    }


@dataclass
class UpdateSamples:
    tps: list[float]
    wal: list[float]
    hot: list[float]
    heap: list[float]
    toast: list[float]
    updates: list[float]
    disturbed: list[bool]


def _one_run(ctx: WorkloadContext[PostgresSession], design: str, d: Design, ids: list[int], out: UpdateSamples) -> None:
    """A fresh copy, CHECKPOINT, the fixed count of updates in one measure window (destructive: never retried), then its facts."""
    s = ctx.session
    copy = "doc_update"
    ctx.timed(partial(s.run_file, NAME, "copy_for_update", table=d.table, copy=copy), LOAD)
    if design == "jsonb":
        s.run_file(NAME, "rename_id", table=copy)
    s.flush_stats()
    before_stats = s.table_stats(copy)
    before = s.relation_sizes(copy)
    s.checkpoint()  # the run's WAL alone, with the full-page images a first touch after a checkpoint costs
    start = s.insert_lsn()

    def go() -> None:
        for row_id in ids:
            s.execute(d.statement, {**d.params, "id": row_id})

    _, win = ctx.measure(go, phase=MEASURE)
    wal = s.wal_bytes_between(start, s.insert_lsn())
    after_stats = s.table_stats(copy, expect_updates=before_stats.n_tup_upd + len(ids))
    after = s.relation_sizes(copy)
    upd = after_stats.n_tup_upd - before_stats.n_tup_upd
    hot = after_stats.n_tup_hot_upd - before_stats.n_tup_hot_upd
    out.tps.append(len(ids) / win.seconds if win.seconds > 0 else float("nan"))
    out.wal.append(wal / len(ids))
    out.hot.append(hot / upd if upd else 0.0)
    out.heap.append(float(after.heap - before.heap))
    out.toast.append(float(after.toast - before.toast))
    out.updates.append(float(upd))
    out.disturbed.append(win.disturbed)
    s.run_file(NAME, "drop", table=copy)


def _update(ctx: WorkloadContext[PostgresSession]) -> None:
    s, plan = ctx.session, plan_of(ctx)
    ids = updated_ids(plan.loaded, int(ctx.scale_params.get("update_count", 100)))
    reps = min(ctx.repetitions, int(ctx.scale_params.get("update_repetitions", ctx.repetitions)))
    for uk in plan.update_keys:
        designs = _designs(ctx, plan, uk.path, uk.value)
        got = {name: UpdateSamples([], [], [], [], [], [], []) for name in designs}
        try:
            for _ in range(reps):
                for name, d in designs.items():
                    _one_run(ctx, name, d, ids, got[name])
        finally:
            s.run_file(NAME, "drop", table="doc_column_base")
        extra = {"key": uk.path, "value": uk.value, "updates_per_run": len(ids), "rows": plan.loaded, "synchronous_commit": "on"}
        for name, g in got.items():
            var = variant(name, uk.path)
            ctx.record("tps", "tps", g.tps, variant=var, extra={**extra, "disturbed": g.disturbed})
            ctx.record("wal_bytes_per_update", "bytes", g.wal, variant=var, extra=extra)
            ctx.record("hot_share", "ratio", g.hot, variant=var)
            ctx.record("heap_growth", "bytes", g.heap, variant=var)
            ctx.record("toast_growth", "bytes", g.toast, variant=var)
            ctx.record("updates", "rows", g.updates, variant=var)
        for other in ("column", "twin"):
            ctx.record(
                "wal_ratio",
                "x",
                [j / o for j, o in zip(got["jsonb"].wal, got[other].wal, strict=True)],
                variant=variant(f"jsonb_vs_{other}", uk.path),
            )
            ctx.record(
                "tps_ratio",
                "x",
                [o / j for o, j in zip(got[other].tps, got["jsonb"].tps, strict=True)],
                variant=variant(f"{other}_vs_jsonb", uk.path),
            )
