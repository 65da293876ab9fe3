"""Suite "sqlite_jsonb" (seed 003): JSON text vs JSONB in SQLite, for flat objects of 10, 100 and 1,000 keys.

One workload per document size (``keys_10``, ``keys_100``, ``keys_1000``). Each opens its own
session (an in-memory database lives only as long as its worker) and loads its own data: about
``keys_per_table`` keys per table (2,000,000 at ``full``, as the seed), two thirds integers and
one third 8-letter strings, generated deterministically in SQL, stored once as text and once as
JSONB (``jsonb()`` of the same text). Load times are the ``load`` window; everything timed below
is a ``measure`` window, and every time is taken inside the SQLite build's own Python.

Per repetition (``repetitions`` of the scale), with the best of ``best_of`` runs (5, as the seed)
as that repetition's sample, so a Measurement keeps every repetition and its spread. Statements
that are compared (text vs JSONB, first vs last key) run in interleaved rounds, so a busy spell of
a shared machine hits both sides of a ratio alike:

* ``extract_{first,middle,last}_ns_per_row`` (variants ``text``, ``jsonb``): ``json_extract`` of one
  key summed over every row, and ``extract_*_speedup`` (variant ``jsonb_vs_text``, text time over
  JSONB time, per repetition: the seed's "ratio (3 runs)" column);
* ``last_vs_first`` (variants ``text``, ``jsonb``): how much reading the last key costs over the first
  (the seed: about 3x for JSONB at 1,000 keys, about 1 for text);
* ``set_{first,last}_ns_per_row``: ``json_set`` on text vs ``jsonb_set`` on JSONB of the first or last
  key, as an expression over every row (the functions' own cost, as the seed compared them), and
  ``set_{first,last}_speedup``;
* ``update_ns_per_row``: the same change of the first key as an ``UPDATE`` of every row (what storing
  it costs too), each run rolled back after its clock stops, and ``update_speedup``;
* ``to_text_ns_per_row`` (variant ``jsonb``: ``json()`` of JSONB), ``to_jsonb_ns_per_row`` (variant
  ``text``: ``jsonb()`` of text), and ``output_vs_input`` (json() time over jsonb() time);
* ``scan_ns_per_row``: the same scan with no JSON function, the floor under all of the above;
* ``doc_bytes`` per document, ``file_pages`` and ``file_bytes`` of a file-backed copy of each table,
  ``size_ratio`` (JSONB bytes over text bytes), ``load_s``, ``rows``;
* with ``file_backed`` in the scale, the three extracts again on the file-backed copies
  (variants ``text_file``, ``jsonb_file``), since users store files, not memory.

Every timed group is one measure window; since its statements only read, or are rolled back, a
group whose window was disturbed is timed once more and the disturbed window set aside. Nothing is
destructive across repetitions (updates are rolled back), so the tables are loaded once per
workload. The documents are generated in SQL inside each worker: an in-memory database cannot be
shared between versions (each version is its own apsw in its own process), and generating 2
million keys takes a few seconds.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from jsonbench.cell import Cell
from jsonbench.errors import BenchmarkError
from jsonbench.suites.base import LOAD, CellCost, KindTable, Suite, WorkloadContext, check_kinds

if TYPE_CHECKING:
    from jsonbench.dataset.measurement import Aggregate, MetricKind
    from jsonbench.engines.sqlite_apsw import SqliteSession

NAME = "sqlite_jsonb"
KEYS: dict[str, int] = {"keys_10": 10, "keys_100": 100, "keys_1000": 1000}
FORMS = ("text", "jsonb")
POSITIONS = ("first", "middle", "last")
TABLES = {"text": "docs_text", "jsonb": "docs_jsonb"}
#: The value json_set/jsonb_set write (an integer, like the keys they replace).
SET_VALUE = 424242

#: Every metric every workload records: metric -> (unit, kind). Times per row and their ratios are
#: timed; the sizes and counts of deterministic documents are facts. Unit "x" is "times" (a speed-up
#: or cost factor, any positive value); the project's unit "ratio" means a share in [0, 1] and does
#: not fit these.
METRIC_TABLE: dict[str, tuple[str, MetricKind]] = {
    **{f"extract_{p}_ns_per_row": ("ns", "timed") for p in POSITIONS},
    **{f"extract_{p}_speedup": ("x", "timed") for p in POSITIONS},
    "last_vs_first": ("x", "timed"),
    "set_first_ns_per_row": ("ns", "timed"),
    "set_last_ns_per_row": ("ns", "timed"),
    "set_first_speedup": ("x", "timed"),
    "set_last_speedup": ("x", "timed"),
    "update_ns_per_row": ("ns", "timed"),
    "update_speedup": ("x", "timed"),
    "to_text_ns_per_row": ("ns", "timed"),
    "to_jsonb_ns_per_row": ("ns", "timed"),
    "output_vs_input": ("x", "timed"),
    "scan_ns_per_row": ("ns", "timed"),
    "doc_bytes": ("bytes", "deterministic"),
    "file_pages": ("pages", "deterministic"),
    "file_bytes": ("bytes", "deterministic"),
    "size_ratio": ("x", "deterministic"),
    "load_s": ("s", "timed"),
    "rows": ("rows", "deterministic"),
}
#: ``(metric, unit)`` pairs, read from :data:`METRIC_TABLE`.
METRICS: tuple[tuple[str, str], ...] = tuple((m, unit) for m, (unit, _) in METRIC_TABLE.items())
_KINDS: KindTable = check_kinds(NAME, {w: {m: kind for m, (_, kind) in METRIC_TABLE.items()} for w in KEYS})


class SuiteDataError(BenchmarkError):
    """The two forms of the same documents disagree: a measurement of wrong data is no measurement."""


def key_index(position: str, keys: int) -> int:
    """Index of the first, middle or last key of a ``keys``-key document."""
    return {"first": 0, "middle": keys // 2, "last": keys - 1}[position]


def key_path(position: str, keys: int) -> str:
    return f"$.key_{key_index(position, keys)}"


def rows_for(keys: int, scale: dict[str, Any]) -> int:
    """Rows of a table of ``keys``-key documents: ``keys_per_table`` keys in all (at least one row)."""
    return max(int(scale["keys_per_table"]) // keys, 1)


class SqliteJsonb(Suite["SqliteSession"]):
    name: ClassVar[str] = NAME
    workloads: ClassVar[tuple[str, ...]] = tuple(KEYS)
    headline: ClassVar[tuple[str, ...]] = (
        "extract_first_ns_per_row",
        "extract_last_ns_per_row",
        "extract_first_speedup",
        "set_first_speedup",
        "output_vs_input",
        "doc_bytes",
    )

    def load(self, ctx: WorkloadContext[SqliteSession]) -> None:
        """Nothing is shared: an in-memory database does not outlive its session, so each workload loads its own."""

    def expected_metrics(self) -> list[tuple[str, str]]:
        return [(w, m) for w in self.workloads for m, _ in METRICS]

    def metric_kinds(self) -> KindTable:
        return _KINDS

    def estimate(self, cell: Cell) -> CellCost:
        """Three workloads, each about ``keys_per_table`` keys per table, in memory and (with
        ``file_backed``) in one file per table.

        About 19 bytes per key as text and 15 as JSONB (the seed: 183 and 141 bytes for 10 keys).
        Time per key (generation and copies) and per key and statement, in the old model's
        proportion (2.5 us : 20 ns), scaled to the recorded laptop run
        ``manual__2026-12-01T06:39:56.932407+00:00`` on the 2-core machine (SQLite 3.46.1, 1,000,000
        keys, best of 5, 5 repetitions: 60.9 s of staged task time), plus about 0.3 s per workload
        (the smoke runs of the same day: 1.8 s a cell). ``full`` doubles the keys: a linear extrapolation.
        """
        keys = float(cell.scale_params["keys_per_table"])
        best_of = int(cell.scale_params.get("best_of", 5))
        file_backed = bool(cell.scale_params.get("file_backed", False))
        data = keys * (19 + 15)
        statements = 16 + (6 if file_backed else 0)  # per repetition: extracts, scan, conversions, setters, updates
        seconds = 3 * (keys * 3.7e-6 + cell.repetitions * statements * best_of * keys * 29.5e-9 + 0.3)
        worker = 40 * 1024 * 1024  # the worker's Python and apsw
        return CellCost(
            load_bytes=int(3 * data),
            disk_peak_bytes=int(data if file_backed else 0) + 1024 * 1024,
            memory_peak_bytes=int(2 * data) + worker,
            duration_s=seconds,
            source="estimate: recorded laptop run, extrapolated",
        )

    def run(self, workload: str, ctx: WorkloadContext[SqliteSession]) -> None:
        reason = ctx.require("jsonb")
        if reason:
            for variant in (*FORMS, "jsonb_vs_text"):
                ctx.not_applicable(list(METRICS), reason, variant=variant)
            return
        w = _Run(ctx, workload)
        w.load()
        schemas = w.file_copies() if w.file_backed else None
        for _ in range(ctx.repetitions):
            w.measure_round(schemas)
        if schemas is not None:
            w.drop_file_copies(schemas)
        w.record()


class _Run:
    """One workload's tables, samples and measuring steps (one document size)."""

    def __init__(self, ctx: WorkloadContext[SqliteSession], workload: str) -> None:
        self.ctx = ctx
        self.s = ctx.session
        self.workload = workload
        self.keys = KEYS[workload]
        self.rows = rows_for(self.keys, ctx.scale_params)
        self.best_of = int(ctx.scale_params.get("best_of", 5))
        self.file_backed = bool(ctx.scale_params.get("file_backed", False))
        self.extra: dict[str, Any] = {"keys": self.keys, "rows": self.rows, "best_of": self.best_of}
        self.samples: dict[tuple[str, str], list[float]] = {}

    def load(self) -> None:
        """Text generated in SQL, JSONB parsed from it (timed inside the worker); sizes and row counts."""
        s, ctx, extra, rows = self.s, self.ctx, self.extra, self.rows
        s.run_file(NAME, "create_text", table=TABLES["text"])
        s.run_file(NAME, "create_jsonb", table=TABLES["jsonb"])
        with ctx.window(LOAD):
            load_text, _ = s.time_file(NAME, "load_text", {"rows": rows, "keys": self.keys}, repeat=1, table=TABLES["text"])
            load_jsonb, _ = s.time_file(NAME, "load_jsonb", repeat=1, table=TABLES["jsonb"], source=TABLES["text"])
        ctx.record("load_s", "s", load_text, variant="text", extra=extra)
        ctx.record("load_s", "s", load_jsonb, variant="jsonb", extra=extra)
        sizes: dict[str, float] = {}
        for form in FORMS:
            avg, count = s.query_file(NAME, "doc_bytes", table=TABLES[form])[0]
            if count != rows:
                raise SuiteDataError(f"{self.workload}: {TABLES[form]} holds {count} rows, expected {rows}")
            sizes[form] = float(avg)
            ctx.record("doc_bytes", "bytes", sizes[form], variant=form, extra=extra)
            ctx.record("rows", "rows", float(count), variant=form, extra=extra)
        ctx.record("size_ratio", "x", sizes["jsonb"] / sizes["text"], variant="jsonb_vs_text", extra=extra)

    def file_copies(self) -> dict[str, str]:
        """A file-backed copy of each table, one table per file so its page count is the table's; returns the schemas."""
        s, ctx = self.s, self.ctx
        schemas = {form: f"disk_{form}" for form in FORMS}
        for form in FORMS:
            s.run_file(NAME, "attach_file", {"path": s.file_path(self._file(form))}, schema=schemas[form])
            s.run_file(NAME, f"create_{form}", table=(schemas[form], TABLES[form]))
            ctx.timed(partial(s.run_file, NAME, "copy_table", target=(schemas[form], TABLES[form]), source=("main", TABLES[form])), LOAD)
            pages, page_size = s.query_file(NAME, "page_count", {"schema": schemas[form]})[0]
            ctx.record("file_pages", "pages", float(pages), variant=form, extra={**self.extra, "page_size": page_size})
            ctx.record("file_bytes", "bytes", float(pages * page_size), variant=form, extra={**self.extra, "page_size": page_size})
        return schemas

    def drop_file_copies(self, schemas: dict[str, str]) -> None:
        for form in FORMS:  # the copies are 30-40 MB each at full scale: do not keep them until teardown
            self.s.run_file(NAME, "detach_file", schema=schemas[form])
            self.s.drop_file(self._file(form))

    def _file(self, form: str) -> str:
        return f"{self.workload}_{form}.sqlite3"

    def add(self, metric: str, variant: str, value: float) -> None:
        self.samples.setdefault((metric, variant), []).append(value)

    def best_ns(
        self, group: Mapping[Any, tuple[str, dict[str, Any] | None, Any]], rollback: bool = False
    ) -> tuple[dict[Any, float], dict[Any, list[tuple[Any, ...]]]]:
        """Best-of-N ns/row of each statement of a group, timed in interleaved rounds inside the worker.

        ``group`` maps a label to (SQL file, parameters, table); the statements of one group are the
        ones compared with each other, so they share the machine's busy and quiet moments alike.
        """
        labels = list(group)
        stmts = [(self.s.sql(NAME, name, table=table), params) for name, params, table in group.values()]
        # Read-only, or rolled back: the group can be timed again when its window was disturbed.
        (secs, results), _ = self.ctx.measure(lambda: self.s.time_many(stmts, repeat=self.best_of, rollback=rollback), retry_disturbed=True)
        return {lb: min(x) / self.rows * 1e9 for lb, x in zip(labels, secs, strict=True)}, dict(zip(labels, results, strict=True))

    def check_sums(self, results: dict[Any, list[tuple[Any, ...]]], what: str) -> None:
        got = set(tuple(r) for r in results.values())
        if len(got) != 1 or next(iter(got))[0][-1] != self.rows:
            raise SuiteDataError(f"{self.workload}: {what} disagree between text and JSONB (or miss rows): {results}")

    def measure_round(self, schemas: dict[str, str] | None) -> None:
        """One repetition of every timed group."""
        self.extracts({form: TABLES[form] for form in FORMS}, "")
        scan, _ = self.best_ns({form: ("scan", None, TABLES[form]) for form in FORMS})
        for form in FORMS:
            self.add("scan_ns_per_row", form, scan[form])
        conv, _ = self.best_ns({"to_jsonb": ("to_jsonb", None, TABLES["text"]), "to_text": ("to_text", None, TABLES["jsonb"])})
        self.add("to_jsonb_ns_per_row", "text", conv["to_jsonb"])
        self.add("to_text_ns_per_row", "jsonb", conv["to_text"])
        self.add("output_vs_input", "jsonb_vs_text", conv["to_text"] / conv["to_jsonb"])
        self.setters()
        upd_ns, _ = self.best_ns(
            {form: (f"update_{form}", {"path": key_path("first", self.keys), "value": SET_VALUE}, TABLES[form]) for form in FORMS},
            rollback=True,
        )
        for form in FORMS:
            self.add("update_ns_per_row", form, upd_ns[form])
        self.add("update_speedup", "jsonb_vs_text", upd_ns["text"] / upd_ns["jsonb"])
        if schemas is not None:
            self.extracts({form: (schemas[form], TABLES[form]) for form in FORMS}, "_file")

    def extracts(self, tables: dict[str, Any], suffix: str) -> None:
        """json_extract of the first, middle and last key on both forms (suffix ``_file``: the file-backed copies)."""
        keys = self.keys
        ns, results = self.best_ns(
            {(pos, form): ("extract", {"path": key_path(pos, keys)}, tables[form]) for pos in POSITIONS for form in FORMS}
        )
        for pos in POSITIONS:
            where = " on the file-backed copies" if suffix else ""
            self.check_sums({form: results[(pos, form)] for form in FORMS}, f"json_extract({key_path(pos, keys)}) sums{where}")
            for form in FORMS:
                self.add(f"extract_{pos}_ns_per_row", f"{form}{suffix}", ns[(pos, form)])
            if not suffix:
                self.add(f"extract_{pos}_speedup", "jsonb_vs_text", ns[(pos, "text")] / ns[(pos, "jsonb")])
        if not suffix:
            for form in FORMS:
                self.add("last_vs_first", form, ns[("last", form)] / ns[("first", form)])

    def setters(self) -> None:
        """json_set on text vs jsonb_set on JSONB, of the first and the last key."""
        group = {
            (pos, form): (f"set_{form}", {"path": key_path(pos, self.keys), "value": SET_VALUE}, TABLES[form])
            for pos in ("first", "last")
            for form in FORMS
        }
        set_ns, results = self.best_ns(group)
        if any(result[0][-1] != self.rows for result in results.values()):  # outputs differ in size by form; counts may not
            raise SuiteDataError(f"{self.workload}: json_set/jsonb_set did not visit every row: {results}")
        for pos in ("first", "last"):
            for form in FORMS:
                self.add(f"set_{pos}_ns_per_row", form, set_ns[(pos, form)])
            self.add(f"set_{pos}_speedup", "jsonb_vs_text", set_ns[(pos, "text")] / set_ns[(pos, "jsonb")])

    def record(self) -> None:
        units = dict(METRICS)
        for (metric, variant), values in self.samples.items():
            # Timings are best-of-N per repetition and reported as the best repetition (the seed's
            # "best of 5"); ratios are per repetition and reported as their median. Spread is kept either way.
            aggregate: Aggregate = "min" if units[metric] == "ns" else "median"
            self.ctx.record(metric, units[metric], values, variant=variant, aggregate=aggregate, extra=self.extra)
