"""Suite "catalogue" (seed 000): one jsonb document per product vs typed columns plus a tag table.

One module per workload, each with its own docstring saying what it measures and where it departs
from the seed: :mod:`.load` (the setup step, recorded as workload ``load``), :mod:`.storage`,
:mod:`.indexes`, :mod:`.reads`, :mod:`.buffers`, :mod:`.scan`, :mod:`.updates`, :mod:`.fat_update`,
:mod:`.planner`, :mod:`.json_table`, :mod:`.hybrid`; what they share is public in :mod:`.helpers`
(pgbench runs and their recording, plans, prewarm). The workload list is :data:`WORKLOADS`, the one
table of name -> (function, metrics with their kinds); the suite's ``workloads``,
``expected_metrics`` and ``metric_kind`` are read from it. All SQL is in ``include/sql/catalogue/``.

Workloads of one cell run one at a time on one server in an order the scheduler picks, so each
leaves the shared tables (``products_doc``, ``products_rel``, ``product_tags``) as it found them:
updates run on private copies, the fat and hybrid tables are created and dropped by their own
workloads, index twins and expression statistics are dropped again.

How the numbers are made defensible:

* **Fresh state for every repetition of a destructive workload**: each ``updates`` run (sync on
  and off alike) on its own new copy, each ``fat_update`` repetition on a new copy of the pristine
  8 kB documents, each ``hybrid`` repetition on a newly loaded table.
* **The seed's warm-up**: the seed prewarmed every relation with pg_prewarm before its read tests;
  ``reads``, ``buffers``, ``scan`` and ``json_table`` prewarm the shared relations (tables, TOAST,
  indexes) first, and ``fat_update`` prewarms its copy before the read of one stock value.
  Updates start, as the seed's did, right after the table was written and a CHECKPOINT.
* **An invisible harness**: pgbench's per-transaction log is sampled (about 10,000 transactions a
  run) and only its percentiles come from it; ``jsonbench-dev pgbench-overhead`` compares
  pipeline and hand runs of the same scripts on one server. Progress goes to the task log (``-P``).
* **Quiet windows**: every timed block is a measure window. Reads, plans, scans, index builds and
  JSON_TABLE timings are taken once more when their window was disturbed (they change nothing);
  update runs are destructive and are never retried, their rows are marked.

pgbench runs with the seed's 4 clients and 4 threads scaled to this machine (``min(4, cores)``),
recorded as the ``clients`` and ``threads`` metrics of each pgbench workload. Each run lasts the
seed's 20 s at ``full``; every script and update run is repeated ``pgbench_repetitions`` times (2
at ``laptop`` and ``full``: the seed ran each once; the second repetition gives the within-run spread
and a second paired ratio, a third would add 7.7 min at ``full`` for no seed figure, see
``docs/full-scale.md``).

Where this differs from the seed, and why (the workloads' docstrings say more):

* Tags are de-duplicated once, in the source, so both designs get the same sorted array; the
  seed de-duplicated inside the document insert, so its jsonb load time included that work.
* WAL is the difference of the WAL insert position around the run: with synchronous_commit off the
  write position (``pg_current_wal_lsn()``, the seed's) can lag behind a short run and count nothing.
* The update copies and the fat and hybrid tables have autovacuum off, so no background vacuum
  adds WAL, frees space for HOT or reclaims TOAST during a measured run.
* The planner workload turns parallel query off, so estimates are whole-table (the seed multiplied
  a per-worker estimate by 2.4).
* The scan's parallel variant lets the planner weigh 2 workers at every scale
  (``min_parallel_table_scan_size = 0``), and records how many launched.
* Generated data is not shared between versions (see :mod:`.load`): each server generates the
  same deterministic rows in SQL.
* Embedded servers start with address space randomisation off (it halves the variance
  between engine starts; :data:`jsonbench.engines.postgres_embedded.ASLR_ENV`); the seed's server ran
  with the kernel's default.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from jsonbench import pgbench
from jsonbench.cell import Cell
from jsonbench.dataset.measurement import MetricKind
from jsonbench.suites.base import CellCost, KindTable, Suite, WorkloadContext, check_kinds
from jsonbench.suites.catalogue import buffers, fat_update, hybrid, indexes, json_table, load, planner, reads, scan, storage, updates
from jsonbench.suites.catalogue.helpers import NAME

if TYPE_CHECKING:
    from jsonbench.engines.postgres_session import PostgresSession

__all__ = ["NAME", "WORKLOADS", "Catalogue", "Workload"]


@dataclass(frozen=True)
class Workload:
    """One workload: the function that measures it and the metrics a complete run of it records, each with its kind."""

    run: Callable[[WorkloadContext[PostgresSession]], None]
    metrics: dict[str, MetricKind]


#: The catalogue's workloads, in the order the DAG lists their tasks: the one place they are declared.
WORKLOADS: dict[str, Workload] = {
    "storage": Workload(storage.run, storage.METRICS),
    "indexes": Workload(indexes.run, indexes.METRICS),
    "reads": Workload(reads.run, reads.METRICS),
    "buffers": Workload(buffers.run, buffers.METRICS),
    "scan": Workload(scan.run, scan.METRICS),
    "updates": Workload(updates.run, updates.METRICS),
    "fat_update": Workload(fat_update.run, fat_update.METRICS),
    "planner": Workload(planner.run, planner.METRICS),
    "json_table": Workload(json_table.run, json_table.METRICS),
    "hybrid": Workload(hybrid.run, hybrid.METRICS),
}
#: The setup step's measurements (recorded under workload ``load``).
LOAD = Workload(load.run, load.METRICS)
_KINDS: KindTable = check_kinds(NAME, {load.WORKLOAD: dict(LOAD.metrics)} | {w: dict(spec.metrics) for w, spec in WORKLOADS.items()})


class Catalogue(Suite["PostgresSession"]):
    name: ClassVar[str] = NAME
    workloads: ClassVar[tuple[str, ...]] = tuple(WORKLOADS)
    headline: ClassVar[tuple[str, ...]] = (
        "tps_ratio",
        "wal_ratio",
        "time_ratio",
        "buffers_ratio",
        "size_ratio",
        "hot_share",
        "error_factor_before",
        "design_mismatches",
    )
    #: Split across engine starts (``starts``): the pgbench runs of every script and update, the index builds, the scans.
    repetition_params: ClassVar[tuple[str, ...]] = ("pgbench_repetitions", "index_builds", "scan_runs")

    def preflight(self, cell: Cell) -> None:
        """A missing or too old pgbench fails the run here, before any engine starts."""
        pgbench.check_version(pgbench.command_for_cell(cell))

    def expected_metrics(self) -> list[tuple[str, str]]:
        return [(load.WORKLOAD, m) for m in LOAD.metrics] + [(w, m) for w, spec in WORKLOADS.items() for m in spec.metrics]

    def metric_kinds(self) -> KindTable:
        return _KINDS

    def load(self, ctx: WorkloadContext[PostgresSession]) -> None:
        LOAD.run(ctx)

    def run(self, workload: str, ctx: WorkloadContext[PostgresSession]) -> None:
        WORKLOADS[workload].run(ctx)

    def estimate(self, cell: Cell) -> CellCost:
        from jsonbench.suites.catalogue.cost import estimate

        return estimate(cell)
