"""Suite "json vs jsonb" (seed 001): read speed and on-disk size of the same documents as json and jsonb.

Six document shapes, generated deterministically in SQL (``include/sql/json_vs_jsonb/setup.sql``)
and fitted to seed 001's published statistics (``docs/seed-001-documents.md``; measured again by
``./bin/jsonbench-dev fit-documents``): small (a customer record of 203.4 bytes compact),
small with long keys (422.4), medium (an order of 12 items, 1,527 bytes compact: compact json stays
under the ~2 kB TOAST threshold, its 2,060-byte jsonb form crosses it), large (an order of 210
items, 20.5 kB), flat (780 random strings of 16-17 characters, 21,130 bytes) and an array of 3,500
integers (20,681 bytes). Each is written compact and pretty-printed (two-space indent); the same
text is loaded into a json table and a jsonb table.

One workload per shape. For each layout (compact, pretty) it records, with variants named
``<layout>``, ``<layout>.<type>`` and ``<layout>.<type>.<compression>``:

* ``avg_input_bytes`` (layout): average length of the input text;
* ``avg_datum_bytes`` (layout.type): average ``pg_column_size`` of the value before TOAST
  compression, the seed's "before compression" figures (54,701.6 bytes for the jsonb array);
* ``avg_stored_bytes``, ``compressed_share``, ``table_bytes`` (heap + TOAST + indexes after
  VACUUM), ``toast_bytes`` (layout.type.pglz and layout.type.lz4): what is on disk. lz4 rows are
  ``not_applicable`` on a build without lz4, with the reason;
* ``read_time`` (layout.type): ``sum(length(doc->>'first'))`` over the whole table, no index, one
  warm-up then the median of ``read_runs`` (5 as in the seed), each the server's execution time
  (``EXPLAIN (ANALYZE, TIMING OFF)``: no client round trip, no per-row clock reads). The scale's ``read_order``
  is the seed's by default (``sequential``: one table's runs, then the other's). With ``interleaved``, json's and
  jsonb's tables are both loaded and warmed up and their timed reads alternate (json, jsonb; jsonb, json; ...), a
  departure from the seed so that the read speed-up compares two reads of the same minutes (RMIT).
  Not the default: its recorded runs were not alternated with runs in the seed's order (``docs/noise-levels.md``). The integer
  array has no key ``first``: the seed ran one query over every shape, so it runs unchanged and
  measures what it costs to find out (json parses every document, jsonb detoasts it and looks at
  its header). The small shape with long keys keeps ``first`` under its short name for the same
  reason;
* ``load_time`` (``INSERT ... SELECT`` of the generated text, cast to the type), ``update_time``
  (one key of every document: ``first``, or element 0 of the array; json has no setter, so its
  documents go through jsonb and back, as an application's SQL would have to) and, for jsonb,
  ``gin_build_time`` (default ``jsonb_ops``; json has no GIN operator class and records it as not
  applicable), each on freshly loaded data per repetition: ``load_repetitions`` repetitions when
  the scale gives it, else the run's repetitions (``laptop``: 5). At ``full`` it is 1: the seed
  timed these three as medians of three but published none of them and no finding reads them,
  while at 1,000,000 small documents each repetition reloads, re-indexes and rewrites every table
  (three repetitions were 80 % of the suite's time, 29 min against 13 min for one: see
  ``docs/full-scale.md``). Reads and sizes, which the seed's figures rest on, are not affected;
* ratios measured within the run, which the reproduction checks read: ``read_speedup``
  (json / jsonb read time), ``datum_size_ratio`` (jsonb / json before compression),
  ``table_size_ratio_pglz`` and ``table_size_ratio_lz4`` (jsonb / json table size).

json and jsonb must give the same read result; a difference means the tables do not hold the same
documents, and the workload fails instead of recording a comparison of different data.

Repetitions and windows: every repetition loads its table afresh (the update rewrites every row),
so no repetition measures on what an earlier one changed. Each read run and each GIN build is its
own measure window, taken once more when that window was disturbed (a read changes nothing, an
index is dropped and built again); the update is destructive and never retried, its rows are
marked. The warm-up is the seed's: one run of the read before the timed ones (the seed's "median
of five runs after one warm-up").

Generated data is not shared between versions: each shape is generated in each server by a
deterministic SQL function (``setup.sql``), in a small share of the time its loads, reads and
updates take, and a file shared between cells would have to outlive the cell that made it.

The seed reports 11 size cases: these 12 minus pretty small-with-long-keys (its long-key row is
taken to be compact). Its findings and bands are in ``include/expectations/json_vs_jsonb.*.json``.

Embedded servers start with address space randomisation off, where the seed's ran with the kernel's
default (it halves the variance between engine starts and changes no query;
:data:`jsonbench.engines.postgres_embedded.ASLR_ENV`).

With ``starts`` at 2 or 3 (2 by default at laptop and full: the scale profile's), each workload runs once per engine start with its
repetitions and ``read_runs`` split, where the seed ran each once. What only repeats a fact or rebuilds the same input is
done once: the source table is generated in the first start and kept across the restarts (the data directory stays; it
is dropped after the last start), and the sizes (the source's datums, the pglz tables', the lz4 tables, loaded for
their sizes alone) are measured in the first start. Every start loads, vacuums, warms up, reads and writes its own
tables, so each start's timings stand on their own.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from jsonbench.cell import DESIGN_PARAMS, READ_ORDER_KEY, Cell
from jsonbench.dataset.measurement import MetricKind
from jsonbench.sqlfiles import compose, load_sql
from jsonbench.suites.base import LOAD, MEASURE, CellCost, KindTable, Suite, WorkloadContext, check_kinds
from jsonbench.suites.pgcost import postgres_cost

if TYPE_CHECKING:
    from jsonbench.engines.postgres_session import PostgresSession

NAME = "json_vs_jsonb"
LAYOUTS = ("compact", "pretty")
TYPES = ("json", "jsonb")
COMPRESSIONS = ("pglz", "lz4")


@dataclass(frozen=True)
class Shape:
    """One document shape: its generator function, its row-count parameter and how it is updated."""

    generator: str
    rows_param: str
    update: str  # SQL file that changes one key (or element) of every document


SHAPES: dict[str, Shape] = {
    "small": Shape("jvj_doc_small", "small_rows", "update_first"),
    "small_long_keys": Shape("jvj_doc_small_long_keys", "small_rows", "update_first"),
    "medium": Shape("jvj_doc_medium", "medium_rows", "update_first"),
    "large": Shape("jvj_doc_large", "large_rows", "update_first"),
    "flat": Shape("jvj_doc_flat", "large_rows", "update_first"),
    "array": Shape("jvj_doc_array", "large_rows", "update_element"),
}


@dataclass(frozen=True)
class Metric:
    """One metric every shape records: its unit, its kind, and which variants carry it.

    ``level``: ``layout`` (variant ``<layout>``), ``type`` (``<layout>.<type>``) or ``storage``
    (``<layout>.<type>.<compression>``).
    """

    unit: str
    kind: MetricKind
    level: str


#: Every metric of every workload (shape), in one table: sizes of deterministic documents are facts,
#: times and ratios of times are timed. Ratios of json to jsonb are unbounded factors ("x"); "ratio"
#: is kept for shares in [0, 1].
METRICS: dict[str, Metric] = {
    "avg_input_bytes": Metric("bytes", "deterministic", "layout"),
    "datum_size_ratio": Metric("x", "deterministic", "layout"),
    "read_speedup": Metric("x", "timed", "layout"),
    "table_size_ratio_pglz": Metric("x", "deterministic", "layout"),
    "table_size_ratio_lz4": Metric("x", "deterministic", "layout"),
    "avg_datum_bytes": Metric("bytes", "deterministic", "type"),
    "read_time": Metric("ms", "timed", "type"),
    "load_time": Metric("ms", "timed", "type"),
    "update_time": Metric("ms", "timed", "type"),
    "gin_build_time": Metric("ms", "timed", "type"),
    "avg_stored_bytes": Metric("bytes", "deterministic", "storage"),
    "compressed_share": Metric("ratio", "deterministic", "storage"),
    "table_bytes": Metric("bytes", "deterministic", "storage"),
    "toast_bytes": Metric("bytes", "deterministic", "storage"),
}


def _level(level: str) -> tuple[tuple[str, str], ...]:
    return tuple((m, spec.unit) for m, spec in METRICS.items() if spec.level == level)


#: ``(metric, unit)`` per variant level, read from :data:`METRICS`.
LAYOUT_METRICS = _level("layout")
TYPE_METRICS = _level("type")
STORAGE_METRICS = _level("storage")
ALL_METRICS = tuple(METRICS)
_KINDS: KindTable = check_kinds(NAME, {w: {m: spec.kind for m, spec in METRICS.items()} for w in SHAPES})

#: Seconds per row and repetition of each shape's four tables (load, GIN build, update): the recorded
#: laptop run's samples summed (PostgreSQL 17: small 16.5 s, small_long_keys 18.4 s, medium 25.9 s,
#: large 8.6 s, flat 11.5 s, array 25.5 s over 5 repetitions) / 5 / rows.
SECONDS_PER_REPETITION: dict[str, float] = {
    "small": 82.6e-6,
    "small_long_keys": 91.9e-6,
    "medium": 647e-6,
    "large": 8.56e-3,
    "flat": 11.5e-3,
    "array": 25.5e-3,
}
#: Seconds per row paid once per workload (source generation, sizes, VACUUM, warm-up and the reads):
#: the rest of each workload's recorded time, less :data:`WORKLOAD_FIXED_S`, / rows.
SECONDS_ONCE: dict[str, float] = {
    "small": 57.5e-6,
    "small_long_keys": 102.5e-6,
    "medium": 476e-6,
    "large": 6.05e-3,
    "flat": 8.45e-3,
    "array": 10.65e-3,
}
#: Seconds per workload that do not grow with the rows (connections, statements, drops): the smoke floor.
WORKLOAD_FIXED_S = 0.6

#: The orders the two types' timed reads can be taken in (the scale parameter ``read_order``, a design parameter:
#: :data:`jsonbench.cell.DESIGN_PARAMS`).
READ_ORDERS = ("interleaved", "sequential")

LZ4_REASON = "{base}: PostgreSQL was built without --with-lz4, so COMPRESSION lz4 is refused"
JSON_GIN_REASON = "json has no GIN operator class; only jsonb can be GIN-indexed"


@dataclass
class Storage:
    """What one loaded and vacuumed table occupies."""

    avg_stored_bytes: float
    compressed_share: float
    table_bytes: int
    toast_bytes: int


class JsonVsJsonb(Suite["PostgresSession"]):
    name: ClassVar[str] = NAME
    workloads: ClassVar[tuple[str, ...]] = tuple(SHAPES)
    headline: ClassVar[tuple[str, ...]] = ("read_speedup", "table_size_ratio_pglz", "table_size_ratio_lz4", "avg_datum_bytes")
    #: Split across engine starts (``starts``): the timed reads, and the loads (each followed by its index build and update).
    repetition_params: ClassVar[tuple[str, ...]] = ("read_runs", "load_repetitions")

    def preflight(self, cell: Cell) -> None:
        """A ``read_order`` the suite does not know fails the run here, naming the field, before any engine starts."""
        read_order(cell.scale_params, f"matrix.scales.{cell.scale}.{NAME}.{READ_ORDER_KEY}")

    def load(self, ctx: WorkloadContext[PostgresSession]) -> None:
        with ctx.window("load"):
            ctx.session.run_file(NAME, "setup")

    def expected_metrics(self) -> list[tuple[str, str]]:
        return [(w, m) for w in self.workloads for m in ALL_METRICS]

    def metric_kinds(self) -> KindTable:
        return _KINDS

    def run(self, workload: str, ctx: WorkloadContext[PostgresSession]) -> None:
        shape = SHAPES[workload]
        s = ctx.session
        rows = int(ctx.scale_params[shape.rows_param])
        read_runs = int(ctx.scale_params.get("read_runs", 5))
        order = read_order(ctx.scale_params)
        source = f"jvj_{workload}_source"
        lz4_missing = ctx.require("lz4")

        # One source for every start of the cell: a later start finds it where the first left it (a restart keeps the
        # data directory), and makes it again only if it is gone.
        if ctx.start == 0 or not s.relation_exists(source):
            ctx.timed(lambda: s.run_file(NAME, "source", {"rows": rows}, source=source, generator=shape.generator), LOAD)
        sizes = ctx.start == 0  # facts: a later start would measure the same bytes again

        for layout in LAYOUTS:
            if sizes:
                avg_input, datum_json, datum_jsonb = s.query_file(NAME, "source_stats", layout=layout, source=source)[0]
                ctx.record("avg_input_bytes", "bytes", float(avg_input), variant=layout)
                ctx.record("avg_datum_bytes", "bytes", float(datum_json), variant=f"{layout}.json")
                ctx.record("avg_datum_bytes", "bytes", float(datum_jsonb), variant=f"{layout}.jsonb")
                ctx.record("datum_size_ratio", "x", float(datum_jsonb) / float(datum_json), variant=layout)

            tables = {typ: f"jvj_{workload}_{layout}_{typ}" for typ in TYPES}
            first_load: dict[str, float] = {}
            pglz: dict[str, Storage | None] = {}
            results: dict[str, Any] = {}
            reads: dict[str, list[float]] = {}
            if order == "interleaved":
                # Both tables loaded and warmed up first, then their reads in alternating rounds (:meth:`_reads`).
                for typ in TYPES:
                    first_load[typ], pglz[typ] = self._load_table(ctx, tables[typ], typ, layout, source, sizes=sizes)
                for typ in TYPES:
                    results[typ] = self._warm_up(ctx, tables[typ])
                reads = self._reads(ctx, tables, read_runs, order)
                for typ in TYPES:
                    self._time_writes(ctx, workload, shape, layout, typ, source, first_load[typ])
            else:
                # The seed's order: each table loaded, read and then written to, one after the other.
                for typ in TYPES:
                    first_load[typ], pglz[typ] = self._load_table(ctx, tables[typ], typ, layout, source, sizes=sizes)
                    results[typ] = self._warm_up(ctx, tables[typ])
                    reads[typ] = self._reads(ctx, {typ: tables[typ]}, read_runs, order)[typ]
                    self._time_writes(ctx, workload, shape, layout, typ, source, first_load[typ])
            if results["json"] != results["jsonb"]:
                raise RuntimeError(
                    f"{workload}/{layout}: json and jsonb tables disagree on the read ({results['json']!r} vs "
                    f"{results['jsonb']!r}); they do not hold the same documents"
                )
            for typ in TYPES:
                ctx.record("read_time", "ms", reads[typ], variant=f"{layout}.{typ}", extra={"warmups": 1, "rows": _rows(ctx, shape)})
                if (st := pglz[typ]) is not None:
                    self._record_storage(ctx, f"{layout}.{typ}.pglz", st)
            ctx.record(
                "read_speedup",
                "x",
                statistics.median(reads["json"]) / statistics.median(reads["jsonb"]),
                variant=layout,
                extra={
                    "json_ms": statistics.median(reads["json"]),
                    "jsonb_ms": statistics.median(reads["jsonb"]),
                    # each round's json / jsonb (pairs when interleaved)
                    "round_ratios": [j / b for j, b in zip(reads["json"], reads["jsonb"], strict=True)],
                },
            )
            if (pj := pglz["json"]) is not None and (pb := pglz["jsonb"]) is not None:
                ctx.record("table_size_ratio_pglz", "x", pb.table_bytes / pj.table_bytes, variant=layout)

            if lz4_missing:
                reason = LZ4_REASON.format(base=lz4_missing)
                for typ in TYPES:
                    ctx.not_applicable(list(STORAGE_METRICS), reason, variant=f"{layout}.{typ}.lz4")
                ctx.not_applicable([("table_size_ratio_lz4", "x")], reason, variant=layout)
            elif sizes:  # sizes only: a later engine start of the cell would load them again for the same facts
                lz4 = {typ: self._storage_only(ctx, workload, layout, typ, source) for typ in TYPES}
                ctx.record("table_size_ratio_lz4", "x", lz4["jsonb"].table_bytes / lz4["json"].table_bytes, variant=layout)

        if ctx.last_start:
            s.run_file(NAME, "drop", table=source)

    def estimate(self, cell: Cell) -> CellCost:
        """Six shapes, each loaded as a source and then as json and jsonb tables, one at a time.

        Bytes per document from the seed's compact and pretty sizes (jsonb's larger datums). Seconds
        per document of each shape, from the recorded laptop run ``manual__2026-12-01T06:39:56.932407+00:00``
        on the 2-core machine (PostgreSQL 17, 40,000 / 8,000 / 200 rows, 5 repetitions: 125 s of
        staged task time; 16 and 18: 125 s and 127 s): per repetition, the sum of the four tables'
        ``load_time``, ``gin_build_time`` and ``update_time`` samples (:data:`SECONDS_PER_REPETITION`);
        once per workload, the rest of its time (source generation, sizes, VACUUM, warm-up and reads:
        :data:`SECONDS_ONCE`), less :data:`WORKLOAD_FIXED_S` (the smoke runs' floor). At ``full`` a
        linear extrapolation in rows; a GIN build is n log n, so the real figure can be somewhat higher.
        """
        p = cell.scale_params
        small, medium, large = float(p["small_rows"]), float(p["medium_rows"]), float(p["large_rows"])
        # Source (compact + pretty text) plus one layout's json and jsonb tables (loaded together for the interleaved
        # reads): the largest of the shapes' workloads at once.
        peak = max(2 * small * 700 + small * 500, medium * (9_000 + 2_100), large * (150_000 + 25_000))
        written = 2 * small * 1_500 + medium * 12_000 + 3 * large * 80_000  # per repetition, the loads of every table
        reps = load_repetitions(p, cell.repetitions)
        seconds = sum(
            WORKLOAD_FIXED_S + float(p[shape.rows_param]) * (SECONDS_ONCE[name] + reps * SECONDS_PER_REPETITION[name])
            for name, shape in SHAPES.items()
        )
        return postgres_cost(
            cell,
            load_bytes=reps * written,
            data_peak_bytes=peak,
            wal_bytes=reps * written,
            clients=1,
            duration_s=seconds,
            source="estimate: recorded laptop run, extrapolated",
        )

    # -- one table ------------------------------------------------------------------------

    def _load_table(
        self, ctx: WorkloadContext[PostgresSession], table: str, typ: str, layout: str, source: str, *, sizes: bool = True
    ) -> tuple[float, Storage | None]:
        """Create and load one (layout, type) table with pglz, vacuum it and, with ``sizes``, size it; returns its load
        time and sizes.

        The table stays for the reads and the first repetition's index build and update (:meth:`_time_writes`). Every
        start vacuums its tables, so every start's reads find the visibility map and hint bits set alike.
        """
        s = ctx.session
        s.run_file(NAME, "create_doc", table=table, type=typ, method="pglz")
        ms = ctx.timed(lambda: s.run_file(NAME, "load_doc", table=table, type=typ, layout=layout, source=source), LOAD)
        s.run_file(NAME, "vacuum", table=table)
        return ms, self._storage(ctx, table) if sizes else None

    @staticmethod
    def _warm_up(ctx: WorkloadContext[PostgresSession], table: str) -> Any:
        """The seed's one untimed read before the timed ones: it brings the table into shared buffers, and its result is
        what json and jsonb must agree on."""
        return ctx.session.scalar(compose(load_sql(NAME, "read_first"), table=table))

    @staticmethod
    def _reads(ctx: WorkloadContext[PostgresSession], tables: dict[str, str], read_runs: int, order: str) -> dict[str, list[float]]:
        """``read_runs`` timed reads of each table: the server's execution time of each, each its own measure window,
        taken once more when disturbed (a read changes nothing).

        ``interleaved``: ``read_runs`` rounds of one read of each table, the first of each round alternating (json,
        jsonb; then jsonb, json; ...): randomized multiple interleaved trials (Abedi and Brecht, ICPE 2017), the order
        counterbalanced instead of drawn. A host that drifts over the minutes of a cell moves both types alike, and each
        round is a pair. ``sequential``: the seed's order, one table's runs and then the other's.
        """
        s = ctx.session
        timed = {typ: compose(load_sql(NAME, "read_first_timed"), table=t) for typ, t in tables.items()}
        reads: dict[str, list[float]] = {typ: [] for typ in tables}
        types = list(tables)
        if order == "interleaved":
            sequence = [typ for r in range(read_runs) for typ in (types if r % 2 == 0 else types[::-1])]
        else:
            sequence = [typ for typ in types for _ in range(read_runs)]
        for typ in sequence:
            plan, _ = ctx.measure(partial(s.scalar, timed[typ]), retry_disturbed=True)
            reads[typ].append(float(plan[0]["Execution Time"]))
        return reads

    def _time_writes(
        self, ctx: WorkloadContext[PostgresSession], workload: str, shape: Shape, layout: str, typ: str, source: str, first_load: float
    ) -> None:
        """Index (jsonb) and update the loaded table, then each further repetition on a freshly loaded one; records
        ``load_time``, ``update_time`` and ``gin_build_time`` and drops the table."""
        s = ctx.session
        table = f"jvj_{workload}_{layout}_{typ}"
        variant = f"{layout}.{typ}"
        loads: list[float] = [first_load]
        updates: list[float] = []
        gin: list[float] = []
        for rep in range(load_repetitions(ctx.scale_params, ctx.repetitions)):
            if rep > 0:
                # Fresh data every repetition: the update rewrites every row, and the index build
                # should always see the table as loaded.
                s.run_file(NAME, "create_doc", table=table, type=typ, method="pglz")
                loads.append(ctx.timed(lambda: s.run_file(NAME, "load_doc", table=table, type=typ, layout=layout, source=source), LOAD))
            if typ == "jsonb":
                index = f"{table}_gin"
                # A build can be dropped and built again: retried once when its window was disturbed.
                gin.append(
                    ctx.timed(
                        partial(s.query_file, NAME, "gin_index", table=table, index=index),
                        MEASURE,
                        retry_disturbed=True,
                        prepare=partial(s.run_file, NAME, "drop_index", index=index),
                    )
                )
                s.run_file(NAME, "drop_index", index=index)
            # The update rewrites every document: destructive, never retried (its row is marked instead).
            updates.append(ctx.timed(lambda: s.query_file(NAME, shape.update, table=table, type=typ), MEASURE))
        s.run_file(NAME, "drop", table=table)
        ctx.record("load_time", "ms", loads, variant=variant)
        ctx.record("update_time", "ms", updates, variant=variant)
        if typ == "jsonb":
            ctx.record("gin_build_time", "ms", gin, variant=variant, extra={"opclass": "jsonb_ops"})
        else:
            ctx.not_applicable([("gin_build_time", "ms")], JSON_GIN_REASON, variant=variant)

    def _storage_only(self, ctx: WorkloadContext[PostgresSession], workload: str, layout: str, typ: str, source: str) -> Storage:
        """Load one (layout, type) table with lz4 and record only its sizes."""
        s = ctx.session
        table = f"jvj_{workload}_{layout}_{typ}_lz4"
        s.run_file(NAME, "create_doc", table=table, type=typ, method="lz4")
        ctx.timed(lambda: s.run_file(NAME, "load_doc", table=table, type=typ, layout=layout, source=source), LOAD)
        s.run_file(NAME, "vacuum", table=table)
        storage = self._storage(ctx, table)
        s.run_file(NAME, "drop", table=table)
        self._record_storage(ctx, f"{layout}.{typ}.lz4", storage)
        return storage

    @staticmethod
    def _storage(ctx: WorkloadContext[PostgresSession], table: str) -> Storage:
        s = ctx.session
        avg_stored, compressed = s.query_file(NAME, "stored_stats", table=table)[0]
        sizes = s.relation_sizes(table)
        return Storage(float(avg_stored), float(compressed), sizes.total, sizes.toast)

    @staticmethod
    def _record_storage(ctx: WorkloadContext[PostgresSession], variant: str, st: Storage) -> None:
        ctx.record("avg_stored_bytes", "bytes", st.avg_stored_bytes, variant=variant)
        ctx.record("compressed_share", "ratio", st.compressed_share, variant=variant)
        ctx.record("table_bytes", "bytes", float(st.table_bytes), variant=variant)
        ctx.record("toast_bytes", "bytes", float(st.toast_bytes), variant=variant)


def read_order(scale: dict[str, Any], field: str = READ_ORDER_KEY) -> str:
    """The scale's ``read_order`` (:data:`READ_ORDERS`; ``sequential``, the seed's, when unsaid); another value is a
    :class:`~jsonbench.errors.ConfigError` naming ``field``."""
    from jsonbench.errors import ConfigError

    order = str(scale.get(READ_ORDER_KEY) or DESIGN_PARAMS[READ_ORDER_KEY])
    if order not in READ_ORDERS:
        raise ConfigError(field, f"{order!r} is not a read order; one of {', '.join(READ_ORDERS)}")
    return order


def load_repetitions(scale: dict[str, Any], run_repetitions: int) -> int:
    """How many times each table is loaded, GIN-indexed and updated: the scale's ``load_repetitions``
    (the seed's "median of three" for load, index and update timings) or the run's repetitions."""
    return int(scale.get("load_repetitions") or run_repetitions)


def _rows(ctx: WorkloadContext[PostgresSession], shape: Shape) -> int:
    return int(ctx.scale_params[shape.rows_param])
