"""What a catalogue cell costs, from its scale parameters (``Catalogue.estimate``).

Sizes per product and per 8 kB document come from the seed's own figures (1,000,000 products:
336 + 147 + 244 MB of tables with their keys, 190 MB of secondary indexes; 100,000 fat documents:
781 MB of TOAST per design).

**Duration: what the profile fixes plus what scales with the table.** Every pgbench run lasts what
the profile says (``pgbench_seconds`` / ``update_seconds``, the seed's 20 s at ``full``); everything
else (loads, copies, index builds, prewarm, scans, plans) is a cost per product (or per 8 kB
document) and per step, taken from the recorded laptop run ``manual__2026-12-01T06:39:56.932407+00:00``
on the 2-core reference machine, the quiet one of the two recorded laptop runs (PostgreSQL 17,
200,000 products, 20,000 fat documents, 4 s runs, 2 pgbench repetitions, 3 index builds: 221 s of
staged task time; PostgreSQL 16 and 18 took 222 s and 220 s). Each coefficient is that run's
workload time minus its pgbench seconds, divided by what the step touches; at ``laptop`` the
estimate gives the recorded time back (within 2 %). At ``full`` it is a linear extrapolation:
an index build is n log n and a table past ``shared_buffers`` reads from the page cache, so the
real figure can be somewhat higher; a recorded run of the same cell replaces the estimate
(:mod:`jsonbench.orchestration.costs`).
"""

from __future__ import annotations

from typing import Any

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

#: Seconds per product of each step that scales with the table (the recorded laptop run, PostgreSQL
#: 17, 200,000 products; the workload's time in brackets).
SECONDS_PER_PRODUCT: dict[str, float] = {
    "load": 45.6e-6,  # [9.1 s] source, both designs, tags, foreign key, indexes, VACUUM ANALYZE, checks
    "index_round": 22.9e-6,  # [13.7 s for 3 rounds] the seven index twins, built once each, and their sizes
    "prewarm": 2.6e-6,  # [reads: 72.9 s, of which 72 s are its 18 runs] pg_prewarm of the shared relations
    "scan": 11.2e-6,  # [2.2 s] four variants, warm-up and five runs each, EXPLAIN ANALYZE
    "update_copy": 10.1e-6,  # [updates: 48.1 s, of which 32 s are its 8 runs] one fresh update copy, CHECKPOINT, stock sums
    "hybrid_load": 16.1e-6,  # [hybrid: 14.5 s, of which 8 s are its 2 runs] one freshly loaded hybrid table
    "json_table": 13.3e-6,  # [2.7 s] both forms, warm-up and runs (PostgreSQL 16 has no JSON_TABLE: an upper bound there)
    "storage_buffers_planner": 6.0e-6,  # [0.2 + 0.2 + 0.9 s] sizes, EXPLAIN (BUFFERS), planner estimates
}
#: Seconds per 8 kB document [fat_update: 57.7 s, of which 32 s are its 4 update and 4 read runs]:
#: generation and VACUUM ANALYZE of the originals (load_time 5.8 s doc + 3.7 s rel), and one working
#: copy with its sizes and prewarm.
SECONDS_PER_FAT_DOC = {"load": 0.50e-3, "copy": 0.20e-3, "fixed_run": 0.30e-3}
#: Fixed seconds per pgbench run (connections, CHECKPOINT, statistics flush, parsing).
PER_RUN_S = 0.03

#: The nine read scripts, and the update runs per repetition: 2 designs x synchronous commit on and off,
#: each for the run's length, then 2 fixed-count runs (a fresh copy each; the seed's 21,400 updates per
#: million rows, at this machine's synchronous-commit rate about a fifth of a timed run: :data:`FIXED_RUN_SHARE`).
READ_SCRIPTS = 9
UPDATE_RUNS = 4
FIXED_UPDATE_RUNS = 2
FIXED_RUN_SHARE = 0.2
#: fat_update's fixed-count runs per repetition (one per design: the seed's 38,700 doc and 137,640 rel updates
#: per 100,000 documents), each a fresh copy and a run that scales with the documents: :data:`SECONDS_PER_FAT_DOC`
#: ``fixed_run``, fitted on recorded cells (PostgreSQL 17: fat_update took 386 s at full against 267 s without
#: them, 30 s a run; at laptop 68.8 s against 55.6 s, 3.3 s a run, where this gives 6 s).
FAT_FIXED_RUNS = 2


def seconds(p: dict[str, Any], repetitions: int) -> float:
    """The cell's staged task seconds at these scale parameters and run repetitions (see the module docstring)."""
    products = float(p["products"])
    fat = float(p["fat_docs"])
    reps = int(p.get("pgbench_repetitions", 1))
    builds = int(p.get("index_builds", repetitions))  # as the indexes workload reads it
    scan_runs = int(p.get("scan_runs", 5))
    read_s = run_seconds(p, "pgbench") + PER_RUN_S
    update_s = run_seconds(p, "update") + PER_RUN_S
    k = SECONDS_PER_PRODUCT
    return (
        k["load"] * products
        + builds * k["index_round"] * products
        + reps * READ_SCRIPTS * read_s
        + k["prewarm"] * products  # reads
        + k["scan"] * products * scan_runs / 5
        + reps * UPDATE_RUNS * (k["update_copy"] * products + update_s)  # updates: each run on a fresh copy
        + reps * FIXED_UPDATE_RUNS * (k["update_copy"] * products + FIXED_RUN_SHARE * update_s)  # updates' fixed-count runs
        + SECONDS_PER_FAT_DOC["load"] * fat
        + reps * 2 * (SECONDS_PER_FAT_DOC["copy"] * fat + 2 * update_s)  # fat_update: per design a copy, an update and a read run
        + reps * FAT_FIXED_RUNS * SECONDS_PER_FAT_DOC["fixed_run"] * fat  # fat_update's fixed-count runs, each on a fresh copy
        + reps * (k["hybrid_load"] * products + update_s)  # hybrid: each run on a freshly loaded table
        + k["json_table"] * products
        + k["storage_buffers_planner"] * products
    )


def estimate(cell: Cell) -> CellCost:
    p = cell.scale_params
    products = float(p["products"])
    fat = float(p["fat_docs"])
    shared = SHARED_BYTES_PER_PRODUCT * products
    peak = shared + max(COPY_BYTES_PER_PRODUCT * products, FAT_BYTES_PER_DOC * fat, SOURCE_BYTES_PER_PRODUCT * products)
    wal = max(WAL_BYTES_PER_PRODUCT * products, WAL_BYTES_PER_FAT_DOC * fat)
    clients = min(int(p.get("clients", 4)), 4)
    from jsonbench import pgbench

    return postgres_cost(
        cell,
        load_bytes=shared,
        data_peak_bytes=peak,
        wal_bytes=wal,
        clients=pgbench.machine_clients(clients),
        duration_s=seconds(p, cell.repetitions),
        source="estimate: recorded laptop run, extrapolated",
    )
