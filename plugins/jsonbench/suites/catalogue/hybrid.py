"""Workload ``hybrid``: the seed's hybrid table (stock in a column outside the document, fillfactor 90).

The seed's layout: filtered, sorted and updated fields in columns, the rest in ``attributes jsonb``,
tags as a native array, fillfactor 90 so stock updates find room for HOT on the same page; loaded
from the same source as the two designs. An update fills the pages' free space, so every
repetition updates **a freshly loaded table** (``load_time`` per repetition): stock update with
synchronous commit off in a measure window (destructive: marked, never retried), tps, WAL per
update and HOT share.
"""

from __future__ import annotations

from jsonbench.dataset.measurement import MetricKind
from jsonbench.suites.base import LOAD
from jsonbench.suites.catalogue.helpers import (
    CLIENT_KINDS,
    NAME,
    RUN_KINDS,
    UPDATE_KINDS,
    Ctx,
    PgbenchSamples,
    record_clients,
    run_length,
    update_run,
)

#: ``heap_bytes`` is the freshly loaded table's, before its update run: a fact.
METRICS: dict[str, MetricKind] = {
    "load_time": "timed",
    **RUN_KINDS,
    **{m: UPDATE_KINDS[m] for m in ("wal_bytes_per_update", "hot_share", "n_tup_upd", "n_tup_hot_upd")},
    "heap_bytes": "deterministic",
    **CLIENT_KINDS,
}
TABLE = "products_hybrid"


def fresh_table(ctx: Ctx) -> float:
    """Create and load the hybrid table (a ``load`` window); returns its load time (ms)."""
    return ctx.timed(lambda: ctx.session.run_file(NAME, "create_hybrid", {"products": int(ctx.scale_params["products"])}), LOAD)


def run(ctx: Ctx) -> None:
    s = ctx.session
    clients = record_clients(ctx)
    length = run_length(ctx, "update")
    got = PgbenchSamples()
    loads: list[float] = []
    heap: list[float] = []
    try:
        for _ in range(int(ctx.scale_params["pgbench_repetitions"])):
            loads.append(fresh_table(ctx))
            heap.append(float(s.relation_sizes(TABLE).heap))
            upd = update_run(
                ctx,
                "upd_hybrid",
                TABLE,
                clients,
                length,
                {"products": int(ctx.scale_params["products"])},
                "-c synchronous_commit=off",
                got.last_tps(),
                fpi=False,
            )
            upd.add_to(got, fpi=False)
    finally:
        s.run_file(NAME, "drop_hybrid")
    ctx.record("load_time", "ms", loads)
    ctx.record("heap_bytes", "bytes", heap)
    got.record(ctx, "default")
