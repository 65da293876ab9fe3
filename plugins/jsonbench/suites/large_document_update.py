"""Suite "large-document update" (seed 004): the price of changing one key inside a big jsonb document.

Five tables, fillfactor 70, the same deterministic documents (``rows`` at the run's scale, 5,000
in the seed): a small or big (TOASTed, about 11 kB) document, with the ``status`` flag either in
its own column or inside the document, plus the big in-document table with an expression index on
the flag. Each workload updates half of one table the seed's way and records, per repetition on
freshly loaded data:

* ``update_time`` (the ``Execution Time`` of ``EXPLAIN (ANALYZE, BUFFERS)``, as the seed read it)
  and ``update_wall_time`` (client-side, including the commit),
* ``wal_bytes``: the LSN difference across the update, taken right after a CHECKPOINT,
* ``n_tup_upd``, ``n_tup_hot_upd``, ``n_dead_tup`` after ANALYZE (the seed's order), read only once
  the statistics are flushed, and ``hot_share``,
* heap, TOAST and index sizes before and after, ``toast_growth``, and ``avg_payload_bytes``,
* ``load_time`` of the table's data (the data load the overhead benchmark compares against).

Every repetition is destructive and starts fresh: the table is dropped, created and loaded again
(the seed's procedure, run once per repetition), so no repetition updates rows an earlier one
updated. The seed took no warm-up before its update (it ran right after its ``VACUUM ANALYZE``);
neither does this. Each update is one measure window (the ``EXPLAIN (ANALYZE, BUFFERS)`` of the
update, as the seed timed it); a disturbed window is not retried (the update cannot be repeated on
the same data) and its rows are marked.

The data (5,000 rows at every scale but ``smoke``) is generated in each server in well under a
second per table: nothing to share between versions.

Embedded servers start with address space randomisation off, where the seed's ran with the kernel's
default (it halves the variance between engine starts and changes no query;
:data:`jsonbench.engines.postgres_embedded.ASLR_ENV`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from jsonbench.cell import Cell
from jsonbench.dataset.measurement import MetricKind
from jsonbench.sqlfiles import compose, load_sql
from jsonbench.suites.base import LOAD, CellCost, KindTable, Suite, WorkloadContext, check_kinds
from jsonbench.suites.pgcost import postgres_cost

if TYPE_CHECKING:
    from jsonbench.engines.postgres_session import PostgresSession

NAME = "large_document_update"


@dataclass(frozen=True)
class Table:
    """One of the seed's five tables."""

    size: str  # small | big
    status_in: str  # column | jsonb
    expression_index: bool = False

    @property
    def layout(self) -> str:
        return f"{self.status_in}_status"


TABLES: dict[str, Table] = {
    "rel_small": Table("small", "column"),
    "json_small": Table("small", "jsonb"),
    "rel_big": Table("big", "column"),
    "json_big": Table("big", "jsonb"),
    "json_big_idx": Table("big", "jsonb", expression_index=True),
}

#: Every metric a workload records: metric -> (unit, kind). The update is one statement on fresh
#: data, so its counts and sizes are facts. ``wal_bytes`` is not: the WAL position difference also
#: holds whatever else the server logged in that span (it moved by up to 4 % between the recorded
#: smoke runs, 0.2 % at laptop). ``n_dead_tup`` is what ANALYZE counted in its sample of
#: 300 x ``default_statistics_target`` blocks: every block of a table this size (5,000 rows at every
#: scale but ``smoke``, a few hundred heap blocks), so it is the exact count, a fact.
METRICS: dict[str, tuple[str, MetricKind]] = {
    "update_time": ("ms", "timed"),
    "update_wall_time": ("ms", "timed"),
    "wal_bytes": ("bytes", "sampled"),
    "n_tup_upd": ("rows", "deterministic"),
    "n_tup_hot_upd": ("rows", "deterministic"),
    "n_dead_tup": ("rows", "deterministic"),
    "hot_share": ("ratio", "deterministic"),
    "heap_bytes_before": ("bytes", "deterministic"),
    "heap_bytes_after": ("bytes", "deterministic"),
    "toast_bytes_before": ("bytes", "deterministic"),
    "toast_bytes_after": ("bytes", "deterministic"),
    "index_bytes_before": ("bytes", "deterministic"),
    "index_bytes_after": ("bytes", "deterministic"),
    "toast_growth": ("bytes", "deterministic"),
    "avg_payload_bytes": ("bytes", "deterministic"),
    "load_time": ("ms", "timed"),
    "rows_updated": ("rows", "deterministic"),
}

_KINDS: KindTable = check_kinds(NAME, {w: {m: kind for m, (_, kind) in METRICS.items()} for w in TABLES})


#: Seconds per row and repetition, and per cell, of the cost estimate (see ``LargeDocumentUpdate.estimate``).
SECONDS_PER_ROW_AND_REPETITION = 1.92e-3
FIXED_S = 0.5


class LargeDocumentUpdate(Suite["PostgresSession"]):
    name: ClassVar[str] = NAME
    workloads: ClassVar[tuple[str, ...]] = tuple(TABLES)
    headline: ClassVar[tuple[str, ...]] = ("update_time", "wal_bytes", "n_tup_hot_upd", "toast_growth", "avg_payload_bytes")

    def load(self, ctx: WorkloadContext[PostgresSession]) -> None:
        with ctx.window("load"):
            ctx.session.run_file(NAME, "setup")

    def expected_metrics(self) -> list[tuple[str, str]]:
        return [(w, m) for w in self.workloads for m in METRICS]

    def metric_kinds(self) -> KindTable:
        return _KINDS

    def run(self, workload: str, ctx: WorkloadContext[PostgresSession]) -> None:
        table = TABLES[workload]
        name = f"docs_{workload}"
        rows = int(ctx.scale_params["rows"])
        half = rows // 2
        s = ctx.session
        samples: dict[str, list[float]] = {m: [] for m in METRICS}
        update = compose(load_sql(NAME, f"update_{table.layout}").strip().rstrip(";"), table=name)
        for _ in range(ctx.repetitions):
            # Fresh data for every repetition (the create file drops the table first): the update must
            # always find 'new' rows and clean pages. The "load" windows are the seed's load script:
            # create, insert, index, VACUUM ANALYZE.
            ctx.timed(lambda: s.run_file(NAME, f"create_{table.layout}", table=name), LOAD)
            samples["load_time"].append(
                ctx.timed(lambda: s.run_file(NAME, f"load_{table.size}_{table.layout}", {"rows": rows}, table=name), LOAD)
            )
            if table.expression_index:
                ctx.timed(lambda: s.run_file(NAME, "index_status", table=name), LOAD)
            ctx.timed(lambda: s.run_file(NAME, "vacuum_analyze", table=name), LOAD)

            # The seed's measuring procedure around the update; the update itself is the measure window
            # (destructive: a disturbed window is marked, never retried).
            s.flush_stats()
            baseline = s.table_stats(name)
            before = s.relation_sizes(name)
            samples["avg_payload_bytes"].append(float(s.query_file(NAME, "avg_payload_size", table=name)[0][0]))
            s.checkpoint()  # WAL of the update alone, with the full-page images a first touch costs
            lsn = s.current_lsn()  # the seed's write position: the update commits synchronously
            plan, win = ctx.measure(lambda: s.explain_analyze(update, {"half": half}))
            wal = s.wal_bytes_since(lsn)
            s.run_file(NAME, "analyze", table=name)
            stats = s.table_stats(name, expect_updates=baseline.n_tup_upd + half)
            after = s.relation_sizes(name)

            upd = stats.n_tup_upd - baseline.n_tup_upd
            hot = stats.n_tup_hot_upd - baseline.n_tup_hot_upd
            samples["update_time"].append(float(plan["Execution Time"]))
            samples["update_wall_time"].append(win.seconds * 1000.0)
            samples["wal_bytes"].append(float(wal))
            samples["n_tup_upd"].append(float(upd))
            samples["n_tup_hot_upd"].append(float(hot))
            samples["n_dead_tup"].append(float(stats.n_dead_tup))
            samples["hot_share"].append(hot / upd if upd else 0.0)
            samples["rows_updated"].append(float(plan["Plan"]["Plans"][0]["Actual Rows"]))  # the scan under ModifyTable
            for key, val in (
                ("heap", (before.heap, after.heap)),
                ("toast", (before.toast, after.toast)),
                ("index", (before.indexes, after.indexes)),
            ):
                samples[f"{key}_bytes_before"].append(float(val[0]))
                samples[f"{key}_bytes_after"].append(float(val[1]))
            samples["toast_growth"].append(float(after.toast - before.toast))
        for metric, (unit, _) in METRICS.items():
            ctx.record(metric, unit, samples[metric])

    def estimate(self, cell: Cell) -> CellCost:
        """Five workloads, each ``repetitions`` loads of ``rows`` documents and one update of half of them.

        Seconds per row and repetition (all five tables: generation, load, update, sizes) and a fixed
        floor per cell, fitted to two recorded runs of the 2-core machine: the laptop run
        ``manual__2026-12-01T06:39:56.932407+00:00`` (PostgreSQL 17, 5,000 rows, 5 repetitions:
        48.5 s of staged task time) and the smoke runs of the same day (500 rows, 2 repetitions:
        2.5 s). ``full`` has the laptop's rows (the seed's 5,000) and 7 repetitions: no extrapolation in rows.
        """
        rows = float(cell.scale_params["rows"])
        reps = cell.repetitions
        seconds = reps * rows * SECONDS_PER_ROW_AND_REPETITION + FIXED_S
        peak = rows * 12_000 + rows * 1_000  # one big table at a time, and its indexes
        loaded = reps * (3 * rows * 12_000 + 2 * rows * 300)
        # Every repetition takes a CHECKPOINT before its update: WAL between two is about one table's load.
        return postgres_cost(
            cell,
            load_bytes=loaded,
            data_peak_bytes=peak,
            wal_bytes=rows * 12_000 * 2,
            clients=1,
            duration_s=seconds,
            source="estimate: recorded laptop run, extrapolated",
        )
