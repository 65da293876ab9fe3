"""Workload ``updates``: the seed's small-row stock update, document vs column, synchronous commit on and off.

Every run gets **its own fresh copy** of the table it updates (``products_doc_upd`` /
``products_rel_upd``: the shared table's rows and indexes, no dead tuples, autovacuum off, made by
``copy_<design>_for_update.sql``), so no run measures on what an earlier run updated: per
repetition, per design, ``synchronous_commit = on`` first (the seed's first run, and the run its
HOT counts, 21,643 and 21,268 updates in 20 s, and its WAL per update come from) then ``off`` (its
CPU-bound headline, 1.52x), each on a new copy. Each run: CHECKPOINT, the script in a measure
window (an update is destructive, so a disturbed window is marked, never retried), then tps and
latency, WAL per update (insert LSN difference), full-page-image share (pg_walinspect), HOT
share and counts. Variants ``<design>_sync_<on|off>``; ``tps_ratio`` rel / doc and ``wal_ratio``
doc / rel per sync setting. The checks read the ``_sync_on`` variants for HOT and WAL, the seed's.

That each run starts un-updated is recorded, not assumed: ``n_tup_upd`` carries in ``extra`` the
copy's stock sum minus the shared table's before the run (``start_stock_offset``, 0 on a fresh
copy) and how much the run added to it (``stock_added``: every committed update adds exactly 1, so
it equals ``transactions``).

**Where this departs from the seed: WAL, full-page images and HOT from a fixed count of updates.**
The seed's counts come from its 20 s run: WAL per update right after a CHECKPOINT is the full-page
images of every page first touched, divided by the updates the host managed, plus the record. A
slower host makes fewer updates per page, so more of each update is full-page image, and the two
designs run at different rates: on this machine type the fixed-time ratio moved from 2.2 to 4.5
with the host. So each repetition also runs variants ``<design>_fixed_1client``: a fresh copy,
CHECKPOINT, then the same number of updates on both sides (``synchronous_commit = on``, pgbench
``-t`` with a fixed ``--random-seed`` and **one client**, so every host updates the same rows in the same
order), the seed's own count scaled to the table: :data:`SEED_UPDATES` per :data:`SEED_PRODUCTS` rows (21,400 of 1,000,000,
the mean of its 21,643 and 21,268), so the share of pages first touched, and so of full-page
images, is the seed's at every scale. It records WAL, full-page-image share and HOT as above, and
``wal_record_bytes_per_update``: WAL per update once the full-page images are paid for (the bytes
that are not full-page images). ``wal_ratio`` of ``doc_over_rel_fixed_1client`` is what the WAL finding
reads; the HOT findings read ``<design>_fixed_1client`` too. The fixed-time runs keep the seed's tps figures
with the machine's clients (:func:`record_clients`).

**Where this departs from the seed: one client in the fixed-count runs** (:data:`FIXED_CLIENTS`; the seed ran 4).
With two, which updates find room for HOT and when a page is pruned follow how the clients' updates interleave, so the
column side's ``wal_record_bytes_per_update`` (its WAL besides the full-page images) moved up to 3.4 % between nights of
one host (PostgreSQL 17 and 18: 328.3-339.6 bytes); with one, every host applies the same updates in the same order.
The runs' tps is one client's: a series of its own name.

**WAL of the updates alone** (:func:`~jsonbench.suites.catalogue.helpers.wal_of_updates`): the insert position's move
counts every process's WAL, and one repetition of 17's one-client run in one recorded night read 4.7 % more
record bytes than every other run of every host, with the same updates and HOT counts: another process's WAL (about 35
full-page images) in its range. Where pg_walinspect can read the range back, what touched no block of the updated table
(its indexes, its TOAST), other than its transactions' commits, is taken out of WAL per update and of the image share.
The seed read the whole range; on a quiet server the two agree to a record or two.
"""

from __future__ import annotations

import math
from typing import Any

from jsonbench.dataset.measurement import MetricKind
from jsonbench.suites.base import LOAD
from jsonbench.suites.catalogue.helpers import (
    CLIENT_KINDS,
    FIXED,
    FIXED_CLIENTS,
    FIXED_RANDOM_SEED,
    NAME,
    RUN_KINDS,
    RUN_METRICS,
    UPDATE_KINDS,
    Ctx,
    PgbenchSamples,
    UpdateRun,
    ratios,
    record_clients,
    run_length,
    update_run,
    walinspect_reason,
)

METRICS: dict[str, MetricKind] = {
    **RUN_KINDS,
    **UPDATE_KINDS,
    "wal_record_bytes_per_update": "sampled",
    "tps_ratio": "timed",
    "wal_ratio": "sampled",
    **CLIENT_KINDS,
}
UPDATE_METRICS: tuple[str, ...] = (*RUN_METRICS, "wal_bytes_per_update", "fpi_share", "hot_share", "n_tup_upd", "n_tup_hot_upd")

DESIGNS: tuple[str, ...] = ("doc", "rel")
#: The seed's order: synchronous commit on, then off.
SYNCS: tuple[str, ...] = ("on", "off")
#: The seed's synchronous-commit run: about 21,400 updates after its CHECKPOINT (21,643 doc, 21,268
#: rel in 20 s) over 1,000,000 rows. The fixed-count runs make as many per row of the table.
SEED_UPDATES = 21_400
SEED_PRODUCTS = 1_000_000


def fixed_updates_per_client(products: int, clients: int) -> int:
    """Updates per client of a fixed-count run: the seed's updates per row, times the table's rows."""
    return max(1, round(SEED_UPDATES * products / SEED_PRODUCTS / clients))


def copy_table(design: str) -> str:
    """The private update copy of a design's table (what ``upd_<design>.sql`` updates)."""
    return f"products_{design}_upd"


def fresh_copy(ctx: Ctx, design: str) -> None:
    """A new copy of the design's shared table, with its indexes, un-updated (a ``load`` window)."""
    ctx.timed(lambda: ctx.session.run_file(NAME, f"copy_{design}_for_update"), LOAD)


def stock_sum(ctx: Ctx, design: str, table: str) -> int:
    return int(ctx.session.query_file(NAME, f"stock_sum_{design}", table=table)[0][0])


def measure_run(
    ctx: Ctx,
    design: str,
    sync: str,
    clients: int,
    length: dict[str, float],
    expected_tps: float | None = None,
    reference: int | None = None,
    random_seed: int | None = None,
) -> tuple[UpdateRun, int, int]:
    """One run on a fresh copy: returns the run, the copy's stock offset before it and the stock it added.

    ``reference`` is the shared table's stock sum (computed when not given); ``random_seed`` fixes
    which rows pgbench draws (the fixed-count runs).
    """
    table = copy_table(design)
    fresh_copy(ctx, design)
    start = stock_sum(ctx, design, table)
    offset = start - (stock_sum(ctx, design, f"products_{design}") if reference is None else reference)
    run = update_run(
        ctx,
        f"upd_{design}",
        table,
        clients,
        length,
        {"products": int(ctx.scale_params["products"])},
        f"-c synchronous_commit={sync}",
        expected_tps,
        random_seed=random_seed,
    )
    return run, offset, stock_sum(ctx, design, table) - start


def run(ctx: Ctx) -> None:
    clients = record_clients(ctx)
    length = run_length(ctx, "update")
    fixed = {"transactions": float(fixed_updates_per_client(int(ctx.scale_params["products"]), FIXED_CLIENTS))}
    samples = {f"{d}_sync_{s}": PgbenchSamples() for d in DESIGNS for s in SYNCS}
    samples.update({f"{d}_{FIXED}": PgbenchSamples() for d in DESIGNS})
    starts: dict[str, dict[str, list[Any]]] = {v: {"start_stock_offset": [], "stock_added": [], "disturbed": []} for v in samples}
    reference = {design: stock_sum(ctx, design, f"products_{design}") for design in DESIGNS}

    def one(variant: str, design: str, sync: str, n_clients: int, run_len: dict[str, float], seed: int | None) -> None:
        upd, offset, added = measure_run(ctx, design, sync, n_clients, run_len, samples[variant].last_tps(), reference[design], seed)
        upd.add_to(samples[variant])
        if seed is not None:  # the fixed-count runs
            samples[variant].put("wal_record_bytes_per_update", upd.wal_bytes_per_update * (1.0 - upd.fpi_share))
        starts[variant]["start_stock_offset"].append(offset)
        starts[variant]["stock_added"].append(added)
        starts[variant]["disturbed"].append(upd.disturbed)

    try:
        for _ in range(int(ctx.scale_params["pgbench_repetitions"])):
            for design in DESIGNS:
                for sync in SYNCS:
                    one(f"{design}_sync_{sync}", design, sync, clients, length, None)
                one(f"{design}_{FIXED}", design, "on", FIXED_CLIENTS, fixed, FIXED_RANDOM_SEED)
    finally:
        ctx.session.run_file(NAME, "drop_update_copies")
    fpi_missing = any(math.isnan(v) for got in samples.values() for v in got.values["fpi_share"])
    for variant, got in samples.items():
        fpi = got.values.pop("fpi_share")
        record_bytes = got.values.pop("wal_record_bytes_per_update", None)
        got.record(ctx, variant, metric_extra={"n_tup_upd": starts[variant]})
        if fpi_missing:
            na = [("fpi_share", "ratio")] + ([("wal_record_bytes_per_update", "bytes")] if record_bytes is not None else [])
            ctx.not_applicable(na, walinspect_reason(ctx), variant=variant)
        else:
            ctx.record("fpi_share", "ratio", fpi, variant=variant)
            if record_bytes is not None:
                ctx.record("wal_record_bytes_per_update", "bytes", record_bytes, variant=variant)
    for sync in SYNCS:
        ctx.record(
            "tps_ratio",
            "x",
            ratios(samples[f"rel_sync_{sync}"].values["tps"], samples[f"doc_sync_{sync}"].values["tps"]),
            variant=f"rel_over_doc_sync_{sync}",
        )
        ctx.record(
            "wal_ratio",
            "x",
            ratios(samples[f"doc_sync_{sync}"].values["wal_bytes_per_update"], samples[f"rel_sync_{sync}"].values["wal_bytes_per_update"]),
            variant=f"doc_over_rel_sync_{sync}",
        )
    ctx.record(
        "wal_ratio",
        "x",
        ratios(samples[f"doc_{FIXED}"].values["wal_bytes_per_update"], samples[f"rel_{FIXED}"].values["wal_bytes_per_update"]),
        variant=f"doc_over_rel_{FIXED}",
        extra={"updates_per_client": int(fixed["transactions"]), "clients": FIXED_CLIENTS, "random_seed": FIXED_RANDOM_SEED},
    )
