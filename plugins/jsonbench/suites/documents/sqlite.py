"""Suite "documents_sqlite": the user's documents as SQLite text JSON, JSONB and a typed twin (seed 003, and 000's design).

The SQLite half of the documents suite (see :mod:`jsonbench.suites.documents.postgres` for why there are
two; ``--suites documents`` selects both). The setup step writes the first ``max_documents`` documents,
as their exact text, into three file-backed databases in the engine's private folder, one table each
so a file's pages are its table's: ``text`` (the text), ``jsonb`` (``jsonb()`` of it) and ``twin`` (one
column per top-level scalar key, the rest as JSONB). Each workload attaches them (a workload's worker,
and its in-memory database, lives only as long as the workload; the files outlive it until teardown).

* ``storage``: bytes per document as text and as JSONB, each file's bytes, their ratios;
* ``read``: per read key, ``json_extract`` over every row of the text and JSONB tables and the twin's
  column, best of ``best_of`` runs per repetition, the three interleaved inside the SQLite build's own
  Python (seed 003's method); the counts must agree;
* ``update``: per update key, the same fixed rows as on PostgreSQL (``update_count``, evenly spread)
  changed by one ``UPDATE`` with ``json_replace`` on text, ``jsonb_replace`` on JSONB and the twin's
  column, each rolled back after its clock stops (so every run sees the same data), ns per updated row.

Where it departs from seed 003: the documents are the user's, not flat objects of generated keys, and
read from files, not from an in-memory database (users store files); SQLite has no WAL volume, HOT or
TOAST to report, so the update is its time only.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar

from jsonbench.cell import Cell
from jsonbench.dataset.measurement import MetricKind
from jsonbench.errors import BenchmarkError
from jsonbench.suites.base import LOAD, CellCost, KindTable, Suite, WorkloadContext, check_kinds
from jsonbench.suites.documents.plan import DocumentsPlan, KeyPath
from jsonbench.suites.documents.postgres import NESTED_REASON, updated_ids, variant
from jsonbench.suites.documents.read import document_texts

if TYPE_CHECKING:
    from jsonbench.engines.sqlite_apsw import SqliteSession

NAME = "documents_sqlite"
FORMS = ("text", "jsonb", "twin")
#: One file (and schema) per form; the table in each is ``docs``.
FILES = {form: f"documents_{form}.sqlite3" for form in FORMS}
SCHEMAS = {form: f"d_{form}" for form in FORMS}
TABLE = "docs"
#: Documents sent to the worker per statement while loading.
BATCH = 1000

METRICS: dict[str, dict[str, tuple[str, MetricKind]]] = {
    "storage": {
        "input_documents": ("rows", "deterministic"),
        "doc_bytes": ("bytes", "deterministic"),
        "file_bytes": ("bytes", "deterministic"),
        "size_ratio": ("x", "deterministic"),
    },
    "read": {
        "extract_ns_per_row": ("ns", "timed"),
        "read_speedup": ("x", "timed"),
        "twin_read_speedup": ("x", "timed"),
        "rows_read": ("rows", "deterministic"),
    },
    "update": {
        "update_ns_per_row": ("ns", "timed"),
        "update_speedup": ("x", "timed"),
        "twin_update_speedup": ("x", "timed"),
        "updates": ("rows", "deterministic"),
    },
}
_KINDS: KindTable = check_kinds(NAME, {w: {m: kind for m, (_, kind) in ms.items()} for w, ms in METRICS.items()})


class SuiteDataError(BenchmarkError):
    """The forms of the same documents disagree: a comparison of different data is no measurement."""


def _batches(texts: Iterator[tuple[int, str]]) -> Iterator[tuple[int, list[str]]]:
    first = 0
    batch: list[str] = []
    for row, text in texts:
        if not batch:
            first = row - 1
        batch.append(text)
        if len(batch) >= BATCH:
            yield first, batch
            batch = []
    if batch:
        yield first, batch


class DocumentsSqlite(Suite["SqliteSession"]):
    name: ClassVar[str] = NAME
    workloads: ClassVar[tuple[str, ...]] = tuple(METRICS)
    headline: ClassVar[tuple[str, ...]] = ("size_ratio", "read_speedup", "twin_read_speedup", "update_speedup")

    def expected_metrics(self) -> list[tuple[str, str]]:
        return [(w, m) for w, ms in METRICS.items() for m in ms]

    def metric_kinds(self) -> KindTable:
        return _KINDS

    def load(self, ctx: WorkloadContext[SqliteSession]) -> None:
        """Text, JSONB and twin files, in id order; every file vacuumed, so its pages are a fact of the input."""
        if ctx.require("jsonb"):
            return  # each workload records itself as not applicable
        s, plan = ctx.session, DocumentsPlan.from_params(ctx.scale_params)
        with ctx.window(LOAD):
            _attach(s)
            s.run_file(NAME, "create_text", table=(SCHEMAS["text"], TABLE))
            for first, batch in _batches(document_texts(plan)):
                s.run_file(
                    NAME, "insert_text", {"first": first, "docs": json.dumps(batch, ensure_ascii=False)}, table=(SCHEMAS["text"], TABLE)
                )
            s.run_file(NAME, "create_jsonb", table=(SCHEMAS["jsonb"], TABLE))
            s.run_file(NAME, "load_jsonb", table=(SCHEMAS["jsonb"], TABLE), source=(SCHEMAS["text"], TABLE))
            s.run_file(NAME, "create_twin", table=(SCHEMAS["twin"], TABLE))
            s.run_file(NAME, "load_twin", table=(SCHEMAS["twin"], TABLE), source=(SCHEMAS["jsonb"], TABLE))
            for col in plan.twin:
                s.run_file(NAME, "add_column", table=(SCHEMAS["twin"], TABLE), column=col.key)
                s.run_file(NAME, "fill_column", {"path": KeyPath((col.key,)).sqlite()}, table=(SCHEMAS["twin"], TABLE), column=col.key)
            for form in FORMS:
                s.run_file(NAME, "vacuum", schema=SCHEMAS[form])
        for form in FORMS:
            count = int(s.query_file(NAME, "count_rows", table=(SCHEMAS[form], TABLE))[0][0])
            if count != plan.loaded:
                raise SuiteDataError(f"{FILES[form]} holds {count} rows, {plan.loaded} documents were loaded")
        _detach(s)

    def run(self, workload: str, ctx: WorkloadContext[SqliteSession]) -> None:
        reason = ctx.require("jsonb")
        if reason:
            ctx.not_applicable([(m, unit) for m, (unit, _) in METRICS[workload].items()], reason)
            return
        _attach(ctx.session)
        try:
            {"storage": _storage, "read": _read, "update": _update}[workload](ctx)
        finally:
            _detach(ctx.session)

    def estimate(self, cell: Cell) -> CellCost:
        """Three files of about the loaded text each; time: a guess (not fitted to a recorded run) of 30 MB/s to load
        and about 100 ns per row and key per timed statement."""
        p = cell.scale_params
        loaded = int(p.get("documents_loaded", 0) or 0)
        text = float(p.get("input_bytes", 0) or 0) * loaded / max(int(p.get("input_documents", 1) or 1), 1)
        best_of = int(p.get("best_of", 5))
        keys = len(p.get("read_keys") or [1]) + len(p.get("update_keys") or [1])
        seconds = 3 * text / 30e6 + cell.repetitions * best_of * keys * 3 * loaded * 100e-9 + 2.0
        return CellCost(
            load_bytes=int(3 * text),
            disk_peak_bytes=int(3.5 * text) + 1024 * 1024,
            memory_peak_bytes=int(2 * text) + 40 * 1024 * 1024,
            duration_s=seconds,
            source="estimate from the input's size (not fitted to a recorded run)",
        )


def _attach(s: SqliteSession) -> None:
    for form in FORMS:
        s.run_file(NAME, "attach", {"path": s.file_path(FILES[form])}, schema=SCHEMAS[form])


def _detach(s: SqliteSession) -> None:
    for form in FORMS:
        s.run_file(NAME, "detach", schema=SCHEMAS[form])


def _storage(ctx: WorkloadContext[SqliteSession]) -> None:
    s, plan = ctx.session, DocumentsPlan.from_params(ctx.scale_params)
    sizes: dict[str, float] = {}
    for form in ("text", "jsonb"):
        avg, count = s.query_file(NAME, "doc_bytes", table=(SCHEMAS[form], TABLE))[0]
        sizes[form] = float(avg)
        ctx.record("doc_bytes", "bytes", float(avg), variant=form)
        if form == "text":
            ctx.record("input_documents", "rows", float(count), variant="input", extra={"input_documents": plan.fingerprint.documents})
    ctx.record("size_ratio", "x", sizes["jsonb"] / sizes["text"], variant="jsonb_vs_text")
    files: dict[str, float] = {}
    for form in FORMS:
        pages, page_size = s.query_file(NAME, "page_count", {"schema": SCHEMAS[form]})[0]
        files[form] = float(pages * page_size)
        ctx.record("file_bytes", "bytes", files[form], variant=form, extra={"page_size": page_size})
    ctx.record("size_ratio", "x", files["jsonb"] / files["text"], variant="jsonb_vs_text.file")
    ctx.record("size_ratio", "x", files["twin"] / files["jsonb"], variant="twin_vs_jsonb.file")


def _best_ns(
    ctx: WorkloadContext[SqliteSession], group: dict[str, tuple[str, dict[str, Any]]], rows: int, rollback: bool
) -> tuple[dict[str, float], dict[str, Any]]:
    """Best-of-N ns per row of each statement of a group, timed in interleaved rounds inside the worker (retried once when disturbed)."""
    s = ctx.session
    best_of = int(ctx.scale_params.get("best_of", 5))
    labels = list(group)
    stmts = [group[label] for label in labels]
    (secs, results), _ = ctx.measure(lambda: s.time_many(stmts, repeat=best_of, rollback=rollback), retry_disturbed=True)
    return (
        {label: min(x) / max(rows, 1) * 1e9 for label, x in zip(labels, secs, strict=True)},
        dict(zip(labels, results, strict=True)),
    )


def _read(ctx: WorkloadContext[SqliteSession]) -> None:
    s, plan = ctx.session, DocumentsPlan.from_params(ctx.scale_params)
    for key in plan.read_keys:
        path = KeyPath.parse(key, "read_keys").sqlite()
        col = plan.twin_column(key)
        group = {form: (s.sql(NAME, "extract", table=(SCHEMAS[form], TABLE)), {"path": path}) for form in ("text", "jsonb")}
        if col is not None:
            group["twin"] = (s.sql(NAME, "read_column", table=(SCHEMAS["twin"], TABLE), column=col.key), {})
        samples: dict[str, list[float]] = {form: [] for form in group}
        counts: dict[str, int] = {}
        for _ in range(ctx.repetitions):
            ns, results = _best_ns(ctx, group, plan.loaded, rollback=False)
            for form, value in ns.items():
                samples[form].append(value)
            counts = {form: int(r[0][0] or 0) for form, r in results.items()}
            if len(set(counts.values())) != 1:
                raise SuiteDataError(f"reading {key!r}: the forms count different documents with it: {counts}")
        extra = {"key": key, "path": path, "rows": plan.loaded, "best_of": int(ctx.scale_params.get("best_of", 5))}
        for form, values in samples.items():
            ctx.record("extract_ns_per_row", "ns", values, variant=variant(form, key), aggregate="min", extra=extra)
        ctx.record("rows_read", "rows", float(counts["jsonb"]), variant=variant("jsonb", key), extra={"key": key})
        ctx.record(
            "read_speedup",
            "x",
            [t / j for t, j in zip(samples["text"], samples["jsonb"], strict=True)],
            variant=variant("jsonb_vs_text", key),
        )
        if col is None:
            ctx.not_applicable([("twin_read_speedup", "x")], NESTED_REASON.format(key=key), variant=variant("twin_vs_jsonb", key))
        else:
            ctx.record(
                "twin_read_speedup",
                "x",
                [j / t for j, t in zip(samples["jsonb"], samples["twin"], strict=True)],
                variant=variant("twin_vs_jsonb", key),
            )


def _update(ctx: WorkloadContext[SqliteSession]) -> None:
    s, plan = ctx.session, DocumentsPlan.from_params(ctx.scale_params)
    ids = updated_ids(plan.loaded, int(ctx.scale_params.get("update_count", 100)))
    id_list = json.dumps(ids)
    for uk in plan.update_keys:
        path = KeyPath.parse(uk.path, "update_keys").sqlite()
        col = plan.twin_column(uk.path)
        group = {
            "text": (s.sql(NAME, "update_text", table=(SCHEMAS["text"], TABLE)), {"path": path, "value": uk.value, "ids": id_list}),
            "jsonb": (s.sql(NAME, "update_jsonb", table=(SCHEMAS["jsonb"], TABLE)), {"path": path, "value": uk.value, "ids": id_list}),
            "twin": (
                (s.sql(NAME, "update_column", table=(SCHEMAS["twin"], TABLE), column=col.key), {"value": uk.value, "ids": id_list})
                if col is not None
                else (s.sql(NAME, "update_rest", table=(SCHEMAS["twin"], TABLE)), {"path": path, "value": uk.value, "ids": id_list})
            ),
        }
        samples: dict[str, list[float]] = {form: [] for form in group}
        for _ in range(ctx.repetitions):
            ns, _ = _best_ns(ctx, group, len(ids), rollback=True)  # rolled back after each clock stops: the same data every run
            for form, value in ns.items():
                samples[form].append(value)
        extra = {"key": uk.path, "value": uk.value, "updates_per_run": len(ids), "rows": plan.loaded}
        for form, values in samples.items():
            var = variant(form, uk.path)
            ctx.record("update_ns_per_row", "ns", values, variant=var, aggregate="min", extra=extra)
            ctx.record("updates", "rows", float(len(ids)), variant=var)
        ctx.record(
            "update_speedup",
            "x",
            [t / j for t, j in zip(samples["text"], samples["jsonb"], strict=True)],
            variant=variant("jsonb_vs_text", uk.path),
        )
        ctx.record(
            "twin_update_speedup",
            "x",
            [j / t for j, t in zip(samples["jsonb"], samples["twin"], strict=True)],
            variant=variant("twin_vs_jsonb", uk.path),
        )
