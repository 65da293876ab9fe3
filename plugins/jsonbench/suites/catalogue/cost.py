"""What a catalogue cell costs, from its scale parameters (``Catalogue.estimate``).

Sizes per product and per 8 kB document come from the seed's own figures (1,000,000 products:
336 + 147 + 244 MB of tables with their keys, 190 MB of secondary indexes; 100,000 fat documents:
781 MB of TOAST per design). Times per product are calibrated from this project's runs on the
2-core reference machine (see :data:`SECONDS_PER_PRODUCT`); pgbench runs last what the profile says.
A recorded run of the same cell replaces the duration and the peaks (:mod:`jsonbench.costs`).
"""

from __future__ import annotations

from jsonbench.cell import Cell
from jsonbench.suites.base import CellCost
from jsonbench.suites.pgcost import postgres_cost, run_seconds

#: Bytes one product takes in the shared tables with every index (the seed: about 915 MB per million).
SHARED_BYTES_PER_PRODUCT = 960
#: Bytes one product takes in the update copies (both designs at once) or the hybrid table, at most.
COPY_BYTES_PER_PRODUCT = 620
#: Bytes of the source table while the load runs.
SOURCE_BYTES_PER_PRODUCT = 220
#: Bytes one 8 kB document takes: pristine doc and rel originals, one working copy, and its growth.
FAT_BYTES_PER_DOC = 3 * 8400 + 4000
#: WAL written per product loaded (the load, the copies) and per fat document (load, copies).
WAL_BYTES_PER_PRODUCT = 3000
WAL_BYTES_PER_FAT_DOC = 40000

#: Seconds per product of each step that scales with the table, calibrated on the 2-core reference
#: machine from the recorded laptop run of 2026-11-30 (200,000 products, PostgreSQL 17: load 26.7 s,
#: indexes 40.7 s for 3 rounds, update copies about 6.5 s, hybrid load about 8 s, scan 3.8 s,
#: json_table 6.6 s) and the smoke runs (50-60 s a cell). The machine was shared and busy: upper-ish figures.
SECONDS_PER_PRODUCT: dict[str, float] = {
    "load": 130e-6,  # source, both designs, tags, foreign key, indexes, VACUUM ANALYZE, checks
    "index_round": 65e-6,  # the seven index twins, built once each
    "buffers_and_planner": 10e-6,
    "scan": 20e-6,  # four variants, warm-up and runs, EXPLAIN ANALYZE
    "update_copy": 35e-6,  # one update copy (doc and rel on average) with its indexes, and its stock sums
    "hybrid_load": 40e-6,
    "json_table": 30e-6,
    "prewarm": 3e-6,
}
#: Seconds per 8 kB document: generation of the originals (md5 digests, TOAST), and one working copy.
SECONDS_PER_FAT_DOC = {"load": 1.5e-3, "copy": 0.3e-3}
#: Fixed seconds per pgbench run (connections, CHECKPOINT, statistics flush, parsing).
PER_RUN_S = 0.5


def estimate(cell: Cell) -> CellCost:
    p = cell.scale_params
    products = float(p["products"])
    fat = float(p["fat_docs"])
    reps = int(p.get("pgbench_repetitions", 1))
    read_s = run_seconds(p, "pgbench") + PER_RUN_S
    update_s = run_seconds(p, "update") + PER_RUN_S
    k = SECONDS_PER_PRODUCT
    prewarm = k["prewarm"] * products
    seconds = (
        k["load"] * products
        + int(p.get("index_builds", cell.repetitions)) * k["index_round"] * products
        + prewarm
        + reps * 9 * read_s  # reads
        + prewarm
        + k["buffers_and_planner"] * products  # buffers and planner
        + prewarm
        + k["scan"] * products * int(p.get("scan_runs", 5)) / 5
        + reps * 4 * (k["update_copy"] * products + update_s)  # updates: 4 runs per repetition, each on a fresh copy
        + SECONDS_PER_FAT_DOC["load"] * fat
        + reps * 2 * (SECONDS_PER_FAT_DOC["copy"] * fat + 2 * update_s)  # fat_update: copy, update, read
        + prewarm
        + k["json_table"] * products
        + reps * (k["hybrid_load"] * products + update_s)
    )
    shared = SHARED_BYTES_PER_PRODUCT * products
    peak = shared + max(COPY_BYTES_PER_PRODUCT * products, FAT_BYTES_PER_DOC * fat, SOURCE_BYTES_PER_PRODUCT * products)
    wal = max(WAL_BYTES_PER_PRODUCT * products, WAL_BYTES_PER_FAT_DOC * fat)
    clients = min(int(p.get("clients", 4)), 4)
    from jsonbench import pgbench

    return postgres_cost(
        cell, load_bytes=shared, data_peak_bytes=peak, wal_bytes=wal, clients=pgbench.machine_clients(clients), duration_s=seconds
    )
