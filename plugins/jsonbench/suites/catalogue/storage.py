"""Workload ``storage``: what each design occupies (sizes are counted, not timed).

Heap, TOAST, index and total size per shared table, the seed's "PK + unique only" total
(``base_total_bytes``), every index's size, and the average ``pg_column_size`` of a document, a
whole relational row and a tag row; ratios: heap doc / rel, document / row, and relational design
with its tag table / document design (the seed's "391 MB against 336 MB").
"""

from __future__ import annotations

from jsonbench.dataset.measurement import MetricKind
from jsonbench.suites.base import MEASURE
from jsonbench.suites.catalogue.helpers import NAME, SHARED_TABLES, Ctx

METRICS: dict[str, MetricKind] = {
    m: "deterministic"
    for m in ("heap_bytes", "toast_bytes", "index_bytes", "total_bytes", "base_total_bytes", "avg_value_bytes", "size_ratio")
}


def run(ctx: Ctx) -> None:
    s = ctx.session
    base: dict[str, float] = {}
    heap: dict[str, float] = {}
    with ctx.window(MEASURE):
        for table in SHARED_TABLES:
            h, toast, idx, total, keys, _tuples = s.query_file(NAME, "relation_storage", {"relation": table})[0]
            heap[table], base[table] = float(h), float(h + toast + keys)
            for metric, value in (
                ("heap_bytes", h),
                ("toast_bytes", toast),
                ("index_bytes", idx),
                ("total_bytes", total),
                ("base_total_bytes", base[table]),
            ):
                ctx.record(metric, "bytes", float(value), variant=table)
        for index, size in s.query_file(NAME, "index_sizes"):
            ctx.record("index_bytes", "bytes", float(size), variant=f"index:{index}")
        doc, row, tag = s.query_file(NAME, "avg_sizes")[0]
    ctx.record("avg_value_bytes", "bytes", float(doc), variant="doc_document")
    ctx.record("avg_value_bytes", "bytes", float(row), variant="rel_row")
    ctx.record("avg_value_bytes", "bytes", float(tag), variant="tag_row")
    ctx.record("size_ratio", "x", heap["products_doc"] / heap["products_rel"], variant="heap_doc_over_rel")
    ctx.record("size_ratio", "x", float(doc) / float(row), variant="value_doc_over_row")
    ctx.record(
        "size_ratio", "x", (base["products_rel"] + base["product_tags"]) / base["products_doc"], variant="base_total_rel_with_tags_over_doc"
    )
