"""Suite "catalogue" (seed 000): one jsonb document per product vs typed columns plus a tag table.

The setup task (:meth:`Catalogue.load`) checks pgbench, then loads both designs from one
deterministic source (``catalogue_source()``: the seed's hashint4 scattering, tag arrays
de-duplicated), timing each table's load, the foreign key added after the bulk load and the
secondary indexes; it records those under the workload ``load``. Then one task per workload:

* ``storage``: heap, TOAST, index and total size per relation, the seed's "PK + unique only"
  total, per-index sizes, average ``pg_column_size`` of a document, a row and a tag row.
* ``indexes``: GIN ``jsonb_path_ops`` vs ``jsonb_ops`` and the B-tree expression indexes vs their
  column twins: build time and size (build, measure, drop).
* ``reads``: the seed's nine pgbench scripts (``include/sql/catalogue/pgbench/``), relations
  prewarmed: tps, average latency, p50/p95/p99 from pgbench's per-transaction log, failures.
* ``buffers``: EXPLAIN (ANALYZE, BUFFERS) of each read script with one fixed parameter set.
* ``scan``: the full aggregation, 2 parallel workers and none, median of ``scan_runs`` in cache,
  with the plan checked for an index-ordered early stop.
* ``updates``: small-row stock update of both designs with synchronous_commit off and on, on a
  fresh private copy of each table (same indexes) per repetition: tps, WAL per update after a
  CHECKPOINT, full-page-image share (pg_walinspect), HOT share.
* ``fat_update``: the 8 kB documents: tps, latency, WAL per update, TOAST growth, read of stock.
* ``planner``: estimated vs actual rows of the seed's five predicates, before and after
  ``CREATE STATISTICS`` on the expression.
* ``json_table``: the seed's JSON_TABLE query vs the same columns via ``->>`` (PostgreSQL 17+).
* ``hybrid``: the seed's hybrid table (fillfactor 90, stock outside the document): HOT share.

Workloads of one cell run one at a time on one server in an order the scheduler picks, so each
leaves the shared tables (``products_doc``, ``products_rel``, ``product_tags``) as it found them:
updates run on private copies, the fat and hybrid tables are created and dropped by their own
workloads, index twins and expression statistics are dropped again.

pgbench runs with the seed's 4 clients and 4 threads scaled to this machine (``min(4, cores)``),
recorded as the ``clients`` and ``threads`` metrics of each pgbench workload.

Where this differs from the seed, and why:

* Tags are de-duplicated once, in the source, so both designs get the same sorted array; the
  seed de-duplicated inside the document insert, so its jsonb load time included that work.
* WAL is the difference of ``pg_current_wal_insert_lsn()`` around the run: with
  synchronous_commit off the write position (``pg_current_wal_lsn()``, the seed's) can lag behind a
  short run and count nothing.
* The update copies and the fat and hybrid tables have autovacuum off, so no background vacuum
  adds WAL, frees space for HOT or reclaims TOAST during a measured run.
* The planner workload turns parallel query off, so estimates are whole-table (the seed multiplied
  a per-worker estimate by 2.4).
"""

from __future__ import annotations

import math
import re
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from jsonbench import pgbench
from jsonbench.sqlfiles import compose, load_sql, sql_path
from jsonbench.suites.base import Suite, WorkloadContext

NAME = "catalogue"

#: The seed's nine read scripts, in the order it ran them.
READ_SCRIPTS: tuple[str, ...] = ("cb_doc_gin", "cb_doc_btree", "cb_rel", "price_doc", "price_rel", "full_doc", "full_rel", "tag_doc", "tag_rel")

#: Design comparisons of the reads, as the seed's verdicts state them (the winner's factor):
#: variant -> (faster script, slower script); the ratio is tps(first) / tps(second).
READ_RATIOS: dict[str, tuple[str, str]] = {
    "cb_rel_over_doc_btree": ("cb_rel", "cb_doc_btree"),
    "cb_doc_btree_over_doc_gin": ("cb_doc_btree", "cb_doc_gin"),
    "price_rel_over_doc": ("price_rel", "price_doc"),
    "full_doc_over_rel": ("full_doc", "full_rel"),
    "tag_doc_over_rel": ("tag_doc", "tag_rel"),
}

#: One fixed parameter set for EXPLAIN: the seed's category 7, brand 120 and tag 33, id 42, and a
#: price band starting at 500.00.
FIXED_PARAMS: dict[str, int] = {"c": 7, "b": 120, "t": 33, "i": 42, "p": 50000}

#: Index builds of the ``indexes`` workload: variant -> SQL file (``{index}`` is the twin's name).
INDEX_BUILDS: dict[str, str] = {
    "gin_path_ops": "build_gin_path_ops",
    "gin_jsonb_ops": "build_gin_jsonb_ops",
    "cat_brand_doc": "build_cat_brand_doc",
    "cat_brand_rel": "build_cat_brand_rel",
    "price_doc": "build_price_doc",
    "price_rel": "build_price_rel",
    "tags_tag": "build_tags_tag",
}
INDEX_RATIOS: dict[str, tuple[str, str]] = {
    "gin_jsonb_ops_over_path_ops": ("gin_jsonb_ops", "gin_path_ops"),
    "cat_brand_doc_over_rel": ("cat_brand_doc", "cat_brand_rel"),
    "price_doc_over_rel": ("price_doc", "price_rel"),
}

PLANNER_PREDICATES: tuple[str, ...] = ("color_doc_expr", "color_doc_containment", "color_rel", "stock_doc_expr", "stock_rel")

#: Shared tables: every workload leaves them as it found them.
SHARED_TABLES: tuple[str, ...] = ("products_doc", "products_rel", "product_tags")

#: Plan nodes that wrap the node doing the work (the one whose rows the seed quotes).
_WRAPPERS = {"Aggregate", "Limit", "Gather", "Gather Merge", "Sort", "Incremental Sort", "Result", "Materialize"}
_VAR_RE = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")

#: ``(workload, metric)`` pairs a complete run holds (ok or not applicable).
METRICS: dict[str, tuple[str, ...]] = {
    "load": ("load_time", "foreign_key_time", "index_time", "vacuum_analyze_time", "rows", "design_mismatches"),
    "storage": ("heap_bytes", "toast_bytes", "index_bytes", "total_bytes", "base_total_bytes", "avg_value_bytes", "size_ratio"),
    "indexes": ("build_time", "index_bytes", "size_ratio", "build_time_ratio"),
    "reads": ("tps", "latency_avg", "latency_p50", "latency_p95", "latency_p99", "failures", "transactions", "tps_ratio", "clients", "threads"),
    "buffers": ("buffers_hit", "buffers_read", "buffers_total", "rows", "execution_time", "buffers_ratio"),
    "scan": ("scan_time", "workers_planned", "full_scan_plan", "groups", "time_ratio", "trap_full_scan_plan"),
    "updates": ("tps", "latency_avg", "transactions", "failures", "wal_bytes_per_update", "fpi_share", "hot_share", "n_tup_upd", "n_tup_hot_upd", "tps_ratio", "wal_ratio", "clients", "threads"),
    "fat_update": ("load_time", "heap_bytes_before", "toast_bytes_before", "avg_value_bytes", "tps", "latency_avg", "latency_p95", "transactions", "wal_bytes_per_update", "toast_growth", "read_tps", "read_latency_avg", "tps_ratio", "wal_ratio", "clients", "threads"),
    "planner": ("estimated_rows_before", "estimated_rows_after", "actual_rows", "error_factor_before", "error_factor_after", "estimate_ratio_before", "estimate_ratio_after"),
    "json_table": ("point_latency", "scan_time", "results_match", "time_ratio"),
    "hybrid": ("load_time", "tps", "latency_avg", "transactions", "wal_bytes_per_update", "hot_share", "n_tup_upd", "n_tup_hot_upd", "heap_bytes", "clients", "threads"),
}


class Catalogue(Suite):
    name: ClassVar[str] = NAME
    workloads: ClassVar[tuple[str, ...]] = ("storage", "indexes", "reads", "buffers", "scan", "updates", "fat_update", "planner", "json_table", "hybrid")
    headline: ClassVar[tuple[str, ...]] = ("tps_ratio", "wal_ratio", "time_ratio", "buffers_ratio", "size_ratio", "hot_share", "error_factor_before", "design_mismatches")

    # -- contract -----------------------------------------------------------------------------

    def preflight(self, cell: dict[str, Any]) -> None:
        """A missing or too old pgbench fails the run here, before any engine starts."""
        pgbench.check_version(pgbench.command_for_cell(cell))

    def expected_metrics(self, scale: dict[str, Any]) -> list[tuple[str, str]]:
        return [(w, m) for w, metrics in METRICS.items() for m in metrics]

    def load(self, ctx: WorkloadContext) -> None:
        s = ctx.session
        # Again here, with the session's own pgbench: no data is loaded for a cell that cannot measure.
        major, minor = pgbench.check_version(s.pgbench, s.pgbench_env)
        n = int(ctx.scale["products"])
        s.run_file(NAME, "source_function")
        s.run_file(NAME, "create_tables")
        note = {"pgbench_version": f"{major}.{minor}"}
        with ctx.window("load"):
            s.run_file(NAME, "load_source", {"products": n})
            for design, name in (("doc", "load_doc"), ("rel", "load_rel"), ("tags", "load_tags")):
                ctx.record("load_time", "ms", _timed(lambda name=name: s.run_file(NAME, name, {"products": n})), variant=design, workload="load", extra=note)
            ctx.record("foreign_key_time", "ms", _timed(lambda: s.run_file(NAME, "add_foreign_key")), variant="tags", workload="load")
            ctx.record("index_time", "ms", _timed(lambda: s.run_file(NAME, "index_doc")), variant="doc", workload="load")
            ctx.record("index_time", "ms", _timed(lambda: s.run_file(NAME, "index_rel")), variant="rel", workload="load")
            ctx.record("vacuum_analyze_time", "ms", _timed(lambda: s.run_file(NAME, "vacuum_analyze")), workload="load")
        docs, rels, tags = s.query_file(NAME, "row_counts")[0]
        for variant, count in (("doc", docs), ("rel", rels), ("tags", tags)):
            ctx.record("rows", "rows", float(count), variant=variant, workload="load")
        ctx.record("design_mismatches", "rows", float(s.query_file(NAME, "design_mismatches")[0][0]), workload="load")

    def run(self, workload: str, ctx: WorkloadContext) -> None:
        getattr(self, f"_run_{workload}")(ctx)

    # -- storage and indexes ------------------------------------------------------------------

    def _run_storage(self, ctx: WorkloadContext) -> None:
        s = ctx.session
        with ctx.window("measure"):
            base: dict[str, float] = {}
            heap: dict[str, float] = {}
            for table in SHARED_TABLES:
                h, toast, idx, total, keys, _tuples = s.query_file(NAME, "relation_storage", {"relation": table})[0]
                heap[table], base[table] = float(h), float(h + toast + keys)
                for metric, value in (("heap_bytes", h), ("toast_bytes", toast), ("index_bytes", idx), ("total_bytes", total), ("base_total_bytes", base[table])):
                    ctx.record(metric, "bytes", float(value), variant=table)
            for index, size in s.query_file(NAME, "index_sizes"):
                ctx.record("index_bytes", "bytes", float(size), variant=f"index:{index}")
            doc, row, tag = s.query_file(NAME, "avg_sizes")[0]
        ctx.record("avg_value_bytes", "bytes", float(doc), variant="doc_document")
        ctx.record("avg_value_bytes", "bytes", float(row), variant="rel_row")
        ctx.record("avg_value_bytes", "bytes", float(tag), variant="tag_row")
        ctx.record("size_ratio", "x", heap["products_doc"] / heap["products_rel"], variant="heap_doc_over_rel")
        ctx.record("size_ratio", "x", float(doc) / float(row), variant="value_doc_over_row")
        ctx.record("size_ratio", "x", (base["products_rel"] + base["product_tags"]) / base["products_doc"], variant="base_total_rel_with_tags_over_doc")

    def _run_indexes(self, ctx: WorkloadContext) -> None:
        s = ctx.session
        times: dict[str, list[float]] = {v: [] for v in INDEX_BUILDS}
        sizes: dict[str, list[float]] = {v: [] for v in INDEX_BUILDS}
        for _ in range(int(ctx.scale.get("index_builds", ctx.repetitions))):
            for variant, sql_name in INDEX_BUILDS.items():
                index = f"catalogue_twin_{variant}"
                s.run_file(NAME, "drop_index", index=index)
                try:
                    with ctx.window("measure"):
                        times[variant].append(_timed(lambda sql_name=sql_name, index=index: s.run_file(NAME, sql_name, index=index)))
                    sizes[variant].append(float(s.query_file(NAME, "index_size", {"index": index})[0][0]))
                finally:
                    s.run_file(NAME, "drop_index", index=index)
        for variant in INDEX_BUILDS:
            ctx.record("build_time", "ms", times[variant], variant=variant)
            ctx.record("index_bytes", "bytes", sizes[variant], variant=variant)
        for variant, (a, b) in INDEX_RATIOS.items():
            ctx.record("size_ratio", "x", _ratios(sizes[a], sizes[b]), variant=variant)
            ctx.record("build_time_ratio", "x", _ratios(times[a], times[b]), variant=variant)

    # -- reads and their plans ----------------------------------------------------------------

    def _prewarm(self, ctx: WorkloadContext) -> None:
        """Load the shared tables, their TOAST and indexes into shared buffers (pg_prewarm, as the seed)."""
        if not ctx.session.capabilities.get("pg_prewarm", False):
            # A build without pg_prewarm: one pass over each table warms its heap at least.
            for table in SHARED_TABLES:
                ctx.session.query_file(NAME, "warm_table", table=table)
            return
        for (relation,) in ctx.session.query_file(NAME, "prewarm_list"):
            ctx.session.prewarm(relation)

    def _run_reads(self, ctx: WorkloadContext) -> None:
        self._prewarm(ctx)
        clients = _record_clients(ctx)
        length = _run_length(ctx, "pgbench")
        defines = {"products": int(ctx.scale["products"])}
        samples: dict[str, dict[str, list[float]]] = {s: {m: [] for m in ("tps", "latency_avg", "latency_p50", "latency_p95", "latency_p99", "failures", "transactions")} for s in READ_SCRIPTS}
        for _ in range(int(ctx.scale["pgbench_repetitions"])):
            for script in READ_SCRIPTS:  # interleaved, so drift over time hits every script alike
                with ctx.window("measure"):
                    res = _pgbench(ctx, script, clients, length, defines=defines)
                _add_result(samples[script], res)
        for script in READ_SCRIPTS:
            _record_result(ctx, script, samples[script])
        for variant, (a, b) in READ_RATIOS.items():
            ctx.record("tps_ratio", "x", _ratios(samples[a]["tps"], samples[b]["tps"]), variant=variant)

    def _run_buffers(self, ctx: WorkloadContext) -> None:
        s = ctx.session
        self._prewarm(ctx)
        params = {**FIXED_PARAMS, "products": int(ctx.scale["products"])}
        totals: dict[str, float] = {}
        for script in READ_SCRIPTS:
            text = sql_path(NAME, f"pgbench/{script}").read_text(encoding="utf-8")
            query = fixed_query(text, params)
            with ctx.window("measure"):
                plan = s.explain_analyze(query)
            top = plan["Plan"]
            core = plan_core(top)
            hit, read = int(top.get("Shared Hit Blocks", 0)), int(top.get("Shared Read Blocks", 0))
            totals[script] = float(hit + read)
            extra = {"plan": plan_shape(top), "params": {k: params[k] for k in sorted(set(_VAR_RE.findall(text)))}}
            ctx.record("buffers_hit", "buffers", float(hit), variant=script, extra=extra)
            ctx.record("buffers_read", "buffers", float(read), variant=script)
            ctx.record("buffers_total", "buffers", float(hit + read), variant=script)
            ctx.record("rows", "rows", float(core.get("Actual Rows", 0)) * float(core.get("Actual Loops", 1) or 1), variant=script, extra={"node": core.get("Node Type")})
            ctx.record("execution_time", "ms", float(plan["Execution Time"]), variant=script)
        ctx.record("buffers_ratio", "x", _safe_ratio(totals["tag_rel"], totals["tag_doc"]), variant="tag_rel_over_doc")
        ctx.record("buffers_ratio", "x", _safe_ratio(totals["cb_doc_gin"], totals["cb_doc_btree"]), variant="cb_doc_gin_over_doc_btree")

    # -- analytical scan ----------------------------------------------------------------------

    def _run_scan(self, ctx: WorkloadContext) -> None:
        s = ctx.session
        self._prewarm(ctx)
        runs = int(ctx.scale.get("scan_runs", 5))
        medians: dict[str, float] = {}
        try:
            for workers in (2, 0):
                s.set("max_parallel_workers_per_gather", str(workers))
                for design in ("doc", "rel"):
                    variant = f"{design}_workers_{workers}"
                    query = compose(load_sql(NAME, f"scan_{design}"))
                    plan = s.execute(compose("EXPLAIN (FORMAT JSON) ") + query)[0][0][0]["Plan"]
                    ctx.record("workers_planned", "workers", float(_max_workers(plan)), variant=variant, extra={"plan": plan_shape(plan)})
                    ctx.record("full_scan_plan", "bool", 1.0 if is_full_scan(plan, _table(design)) else 0.0, variant=variant)
                    groups = len(s.execute(query))  # warm-up, and the result's size
                    times = []
                    with ctx.window("measure"):
                        for _ in range(runs):
                            times.append(_timed(lambda query=query: s.execute(query)))
                    ctx.record("scan_time", "ms", times, variant=variant)
                    ctx.record("groups", "rows", float(groups), variant=variant)
                    medians[variant] = statistics.median(times)
                ctx.record("time_ratio", "x", medians[f"doc_workers_{workers}"] / medians[f"rel_workers_{workers}"], variant=f"doc_over_rel_workers_{workers}")
            # The seed's trap: ORDER BY 1 LIMIT 1 may walk an index and stop early; the check above must catch it.
            s.set("max_parallel_workers_per_gather", "2")
            for design in ("doc", "rel"):
                plan = s.execute(compose("EXPLAIN (FORMAT JSON) ") + compose(load_sql(NAME, f"scan_{design}_trap")))[0][0][0]["Plan"]
                ctx.record("trap_full_scan_plan", "bool", 1.0 if is_full_scan(plan, _table(design)) else 0.0, variant=design, extra={"plan": plan_shape(plan)})
        finally:
            s.execute("RESET max_parallel_workers_per_gather")

    # -- writes -------------------------------------------------------------------------------

    def _update_run(self, ctx: WorkloadContext, script: str, table: str, clients: int, length: dict[str, float], defines: dict[str, int], options: str | None) -> tuple[pgbench.PgbenchResult, dict[str, float]]:
        """CHECKPOINT, run an update script, then WAL per update, FPI share and HOT counts of ``table``."""
        s = ctx.session
        before = s.table_stats(table)
        s.checkpoint()  # WAL of the run alone, with the full-page images a first touch after a checkpoint costs
        # The insert position, not pg_current_wal_lsn() (the write position): with synchronous_commit
        # off the last records may not be written yet when pgbench returns, and a short run would count 0.
        start = str(s.scalar("SELECT pg_current_wal_insert_lsn()"))
        with ctx.window("measure"):
            res = _pgbench(ctx, script, clients, length, defines=defines, options=options)
        end = str(s.scalar("SELECT pg_current_wal_insert_lsn()"))
        wal = float(s.scalar("SELECT pg_wal_lsn_diff(%s::pg_lsn, %s::pg_lsn)", (end, start)))
        after = s.table_stats(table, expect_updates=before.n_tup_upd + res.processed)
        upd = after.n_tup_upd - before.n_tup_upd
        hot = after.n_tup_hot_upd - before.n_tup_hot_upd
        out = {
            "wal_bytes": wal,
            "wal_bytes_per_update": wal / res.processed if res.processed else math.nan,
            "n_tup_upd": float(upd),
            "n_tup_hot_upd": float(hot),
            "hot_share": hot / upd if upd else math.nan,
            "fpi_share": self._fpi_share(ctx, start, end),
        }
        return res, out

    def _fpi_share(self, ctx: WorkloadContext, start: str, end: str) -> float:
        """Share of full-page images in a WAL range; NaN when pg_walinspect is not usable here."""
        if not ctx.session.capabilities.get("pg_walinspect", False):
            return math.nan
        try:
            ctx.session.execute("CREATE EXTENSION IF NOT EXISTS pg_walinspect")
            # pg_walinspect reads flushed WAL only; the WAL writer flushes asynchronous commits within wal_writer_delay.
            deadline = time.monotonic() + 10
            while ctx.session.scalar("SELECT pg_current_wal_flush_lsn() < %s::pg_lsn", (end,)) and time.monotonic() < deadline:
                time.sleep(0.05)
            fpi, combined = ctx.session.query_file(NAME, "wal_fpi", {"start": start, "end": end})[0]
        except Exception:  # no privilege to create or read it: recorded as not applicable
            return math.nan
        return fpi / combined if combined else math.nan

    def _run_updates(self, ctx: WorkloadContext) -> None:
        s = ctx.session
        clients = _record_clients(ctx)
        length = _run_length(ctx, "update")
        defines = {"products": int(ctx.scale["products"])}
        keys = ("tps", "latency_avg", "latency_p50", "latency_p95", "latency_p99", "failures", "transactions", "wal_bytes_per_update", "fpi_share", "hot_share", "n_tup_upd", "n_tup_hot_upd")
        samples: dict[str, dict[str, list[float]]] = {}
        try:
            for _ in range(int(ctx.scale["pgbench_repetitions"])):
                for design in ("doc", "rel"):
                    # A fresh copy per repetition: same indexes, no dead tuples, the free space of the original.
                    # The CPU-bound run (synchronous_commit off, the seed's headline) goes first on it;
                    # the commit-flush-bound control (on) follows on the same copy.
                    s.run_file(NAME, f"copy_{design}_for_update")
                    for sync in ("off", "on"):
                        variant = f"{design}_sync_{sync}"
                        res, wal = self._update_run(ctx, f"upd_{design}", f"products_{design}_upd", clients, length, defines, f"-c synchronous_commit={sync}")
                        got = samples.setdefault(variant, {k: [] for k in keys})
                        _add_result(got, res)
                        for k, v in wal.items():
                            if k in got:
                                got[k].append(v)
        finally:
            s.run_file(NAME, "drop_update_copies")
        walinspect_reason = None if all(not math.isnan(v) for d in samples.values() for v in d["fpi_share"]) else _walinspect_reason(ctx)
        for variant, got in samples.items():
            fpi = got.pop("fpi_share")
            _record_result(ctx, variant, got)
            if walinspect_reason:
                ctx.not_applicable([("fpi_share", "ratio")], walinspect_reason, variant=variant)
            else:
                ctx.record("fpi_share", "ratio", fpi, variant=variant)
        for sync in ("off", "on"):
            ctx.record("tps_ratio", "x", _ratios(samples[f"rel_sync_{sync}"]["tps"], samples[f"doc_sync_{sync}"]["tps"]), variant=f"rel_over_doc_sync_{sync}")
            ctx.record("wal_ratio", "x", _ratios(samples[f"doc_sync_{sync}"]["wal_bytes_per_update"], samples[f"rel_sync_{sync}"]["wal_bytes_per_update"]), variant=f"doc_over_rel_sync_{sync}")

    def _run_fat_update(self, ctx: WorkloadContext) -> None:
        s = ctx.session
        clients = _record_clients(ctx)
        rows = int(ctx.scale["fat_docs"])
        length = _run_length(ctx, "update")
        defines = {"rows": rows}
        s.run_file(NAME, "create_fat")
        try:
            with ctx.window("load"):
                ctx.record("load_time", "ms", _timed(lambda: s.run_file(NAME, "load_fat_doc", {"rows": rows})), variant="doc")
                ctx.record("load_time", "ms", _timed(lambda: s.run_file(NAME, "load_fat_rel")), variant="rel")
                s.run_file(NAME, "vacuum_analyze_fat")
            doc_size, rel_size = s.query_file(NAME, "avg_fat_sizes")[0]
            ctx.record("avg_value_bytes", "bytes", float(doc_size), variant="doc")
            ctx.record("avg_value_bytes", "bytes", float(rel_size), variant="rel")
            for design in ("doc", "rel"):
                sizes = s.relation_sizes(f"fat_{design}")
                ctx.record("heap_bytes_before", "bytes", float(sizes.heap), variant=design)
                ctx.record("toast_bytes_before", "bytes", float(sizes.toast), variant=design)
            keys = ("tps", "latency_avg", "latency_p50", "latency_p95", "latency_p99", "failures", "transactions", "wal_bytes_per_update", "toast_growth", "read_tps", "read_latency_avg")
            samples = {d: {k: [] for k in keys} for d in ("doc", "rel")}
            for _ in range(int(ctx.scale["pgbench_repetitions"])):
                for design in ("doc", "rel"):
                    table = f"fat_{design}"
                    before = s.relation_sizes(table)
                    res, wal = self._update_run(ctx, f"upd_fat_{design}", table, clients, length, defines, "-c synchronous_commit=off")
                    after = s.relation_sizes(table)
                    got = samples[design]
                    _add_result(got, res)
                    got["wal_bytes_per_update"].append(wal["wal_bytes_per_update"])
                    got["toast_growth"].append(float(after.toast - before.toast))
                    with ctx.window("measure"):
                        read = _pgbench(ctx, f"read_fat_{design}", clients, length, defines=defines)
                    got["read_tps"].append(read.tps)
                    got["read_latency_avg"].append(read.latency_avg_ms)
            for design, got in samples.items():
                ctx.record("toast_growth", "bytes", got.pop("toast_growth"), variant=design)
                ctx.record("read_tps", "tps", got.pop("read_tps"), variant=design)
                ctx.record("read_latency_avg", "ms", got.pop("read_latency_avg"), variant=design)
                _record_result(ctx, design, got)
            ctx.record("tps_ratio", "x", _ratios(samples["rel"]["tps"], samples["doc"]["tps"]), variant="rel_over_doc")
            ctx.record("wal_ratio", "x", _ratios(samples["doc"]["wal_bytes_per_update"], samples["rel"]["wal_bytes_per_update"]), variant="doc_over_rel")
        finally:
            s.run_file(NAME, "drop_fat")

    def _run_hybrid(self, ctx: WorkloadContext) -> None:
        s = ctx.session
        clients = _record_clients(ctx)
        n = int(ctx.scale["products"])
        length = _run_length(ctx, "update")
        try:
            with ctx.window("load"):
                ctx.record("load_time", "ms", _timed(lambda: s.run_file(NAME, "create_hybrid", {"products": n})))
            ctx.record("heap_bytes", "bytes", float(s.relation_sizes("products_hybrid").heap))
            got: dict[str, list[float]] = {k: [] for k in ("tps", "latency_avg", "latency_p50", "latency_p95", "latency_p99", "failures", "transactions", "wal_bytes_per_update", "hot_share", "n_tup_upd", "n_tup_hot_upd")}
            for _ in range(int(ctx.scale["pgbench_repetitions"])):
                res, wal = self._update_run(ctx, "upd_hybrid", "products_hybrid", clients, length, {"products": n}, "-c synchronous_commit=off")
                _add_result(got, res)
                for k in ("wal_bytes_per_update", "hot_share", "n_tup_upd", "n_tup_hot_upd"):
                    got[k].append(wal[k])
            _record_result(ctx, "default", got)
        finally:
            s.run_file(NAME, "drop_hybrid")

    # -- planner and JSON_TABLE ---------------------------------------------------------------

    def _estimates(self, ctx: WorkloadContext) -> dict[str, tuple[float, float]]:
        out = {}
        for predicate in PLANNER_PREDICATES:
            plan = ctx.session.explain_analyze(compose(load_sql(NAME, f"planner/{predicate}")))
            core = plan_core(plan["Plan"])
            loops = float(core.get("Actual Loops", 1) or 1)
            out[predicate] = (float(core["Plan Rows"]), float(core["Actual Rows"]) * loops)
        return out

    def _run_planner(self, ctx: WorkloadContext) -> None:
        s = ctx.session
        # No parallel plans: a parallel scan's estimate is per worker, and the seed's figures are whole-table.
        s.set("max_parallel_workers_per_gather", "0")
        try:
            with ctx.window("measure"):
                before = self._estimates(ctx)
                s.run_file(NAME, "planner/create_statistics")
                after = self._estimates(ctx)
        finally:
            s.run_file(NAME, "planner/drop_statistics")
            s.execute("RESET max_parallel_workers_per_gather")
        for predicate in PLANNER_PREDICATES:
            (est0, actual), (est1, _) = before[predicate], after[predicate]
            ctx.record("estimated_rows_before", "rows", est0, variant=predicate)
            ctx.record("estimated_rows_after", "rows", est1, variant=predicate)
            ctx.record("actual_rows", "rows", actual, variant=predicate)
            ctx.record("error_factor_before", "x", error_factor(est0, actual), variant=predicate)
            ctx.record("error_factor_after", "x", error_factor(est1, actual), variant=predicate)
            ctx.record("estimate_ratio_before", "x", _safe_ratio(est0, actual), variant=predicate)
            ctx.record("estimate_ratio_after", "x", _safe_ratio(est1, actual), variant=predicate)

    def _run_json_table(self, ctx: WorkloadContext) -> None:
        reason = ctx.require("json_table")
        if reason:
            why = f"{reason} (JSON_TABLE is PostgreSQL 17+; the ->> twin is measured only next to it)"
            ctx.not_applicable([("point_latency", "ms"), ("scan_time", "ms"), ("results_match", "bool")], why, variant="json_table")
            ctx.not_applicable([("point_latency", "ms"), ("scan_time", "ms")], why, variant="arrow")
            ctx.not_applicable([("time_ratio", "x")], why, variant="scan_json_table_over_arrow")
            return
        s = ctx.session
        self._prewarm(ctx)
        point = {v: compose(load_sql(NAME, f"json_table/point_{v}")) for v in ("json_table", "arrow")}
        scan = {v: compose(load_sql(NAME, f"json_table/scan_{v}")) for v in ("json_table", "arrow")}
        loops = int(ctx.scale.get("point_loops", 200))
        n = int(ctx.scale["products"])
        same_point = s.execute(point["json_table"], {"id": 42}) == s.execute(point["arrow"], {"id": 42})
        same_scan = s.execute(scan["json_table"]) == s.execute(scan["arrow"])  # also the warm-up
        runs = int(ctx.scale.get("scan_runs", 5))
        medians = {}
        for variant in ("json_table", "arrow"):
            lat, times = [], []
            with ctx.window("measure"):
                for _ in range(ctx.repetitions):
                    ids = [1 + (i * 7919) % n for i in range(loops)]
                    lat.append(_timed(lambda variant=variant, ids=ids: [s.execute(point[variant], {"id": i}) for i in ids]) / loops)
                for _ in range(runs):
                    times.append(_timed(lambda variant=variant: s.execute(scan[variant])))
            ctx.record("point_latency", "ms", lat, variant=variant, extra={"loops": loops, "note": "client round trip included"})
            ctx.record("scan_time", "ms", times, variant=variant)
            medians[variant] = statistics.median(times)
        ctx.record("results_match", "bool", 1.0 if same_point and same_scan else 0.0, variant="json_table")
        ctx.record("time_ratio", "x", medians["json_table"] / medians["arrow"], variant="scan_json_table_over_arrow")


# -- helpers ------------------------------------------------------------------------------------


def _timed(fn: Callable[[], Any]) -> float:
    """Milliseconds one call of ``fn`` takes."""
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000.0


def _table(design: str) -> str:
    return "products_doc" if design == "doc" else "products_rel"


def _safe_ratio(a: float, b: float) -> float:
    return a / b if b else math.nan


def _ratios(a: list[float], b: list[float]) -> list[float]:
    """Per-repetition ratios a[i] / b[i] (paired: measured in the same repetition)."""
    return [_safe_ratio(x, y) for x, y in zip(a, b, strict=True)]


def error_factor(estimated: float, actual: float) -> float:
    """How far off an estimate is, as a factor >= 1 in either direction (1 = exact)."""
    est, act = max(estimated, 1.0), max(actual, 1.0)
    return max(est / act, act / est)


def fixed_query(script: str, params: dict[str, Any]) -> str:
    """The SQL of a pgbench script with its ``:variables`` replaced by fixed values.

    Drops meta-commands (``\\set``) and comment lines; leaves ``::casts`` alone.
    """
    lines = [ln for ln in script.splitlines() if not ln.lstrip().startswith(("\\", "--"))]
    text = "\n".join(lines).strip().rstrip(";")

    def sub(m: re.Match[str]) -> str:
        if m.group(1) not in params:
            raise KeyError(f"pgbench variable :{m.group(1)} has no fixed value")
        return str(params[m.group(1)])

    return _VAR_RE.sub(sub, text)


def plan_core(node: dict[str, Any]) -> dict[str, Any]:
    """The node doing the work under wrapper nodes (Aggregate, Limit, Gather, Sort...)."""
    while node.get("Node Type") in _WRAPPERS and len(node.get("Plans", [])) == 1:
        node = node["Plans"][0]
    return node


def plan_shape(node: dict[str, Any]) -> str:
    """A one-line plan: ``Aggregate > Bitmap Heap Scan(products_doc) > Bitmap Index Scan(doc_gin_ops)``."""
    label = node.get("Node Type", "?")
    target = node.get("Index Name") or node.get("Relation Name")
    if target:
        label += f"({target})"
    kids = [plan_shape(k) for k in node.get("Plans", [])]
    if not kids:
        return label
    return f"{label} > {kids[0]}" if len(kids) == 1 else f"{label} > [{' ; '.join(kids)}]"


def _walk(node: dict[str, Any]):  # -> Iterator[dict]
    yield node
    for kid in node.get("Plans", []):
        yield from _walk(kid)


def is_full_scan(plan: dict[str, Any], table: str) -> bool:
    """True when the plan reads all of ``table`` with a sequential scan and has no Limit to stop early."""
    nodes = list(_walk(plan))
    if any(n.get("Node Type") == "Limit" for n in nodes):
        return False
    return any(n.get("Node Type") == "Seq Scan" and n.get("Relation Name") == table for n in nodes)


def _max_workers(plan: dict[str, Any]) -> int:
    return max((int(n.get("Workers Planned", 0)) for n in _walk(plan)), default=0)


def _walinspect_reason(ctx: WorkloadContext) -> str:
    if not ctx.session.capabilities.get("pg_walinspect", False):
        return "engine build lacks pg_walinspect"
    return "pg_walinspect is installed but not usable by the benchmark role (CREATE EXTENSION or pg_get_wal_stats refused)"


def _record_clients(ctx: WorkloadContext) -> int:
    """The seed's 4 clients / 4 threads scaled to this machine; recorded as metrics."""
    clients = pgbench.machine_clients(int(ctx.scale.get("clients", 4)))
    lengths = {k: ctx.scale[k] for k in ("pgbench_seconds", "pgbench_transactions", "update_seconds", "update_transactions", "pgbench_repetitions") if k in ctx.scale}
    ctx.record("clients", "clients", float(clients), extra={"seed": int(ctx.scale.get("clients", 4)), **lengths})
    ctx.record("threads", "threads", float(clients))
    return clients


def _run_length(ctx: WorkloadContext, kind: str) -> dict[str, float]:
    """How long each pgbench run of ``kind`` (``pgbench`` for reads, ``update``) lasts at this scale.

    ``<kind>_transactions`` (per client, pgbench ``-t``) when the profile gives it, which keeps
    smoke runs far below pgbench's one-second minimum for ``-T``; else ``<kind>_seconds``.
    """
    if ctx.scale.get(f"{kind}_transactions"):
        return {"transactions": int(ctx.scale[f"{kind}_transactions"])}
    return {"seconds": float(ctx.scale[f"{kind}_seconds"])}


def _pgbench(ctx: WorkloadContext, script: str, clients: int, length: dict[str, float], *, defines: dict[str, Any], options: str | None = None) -> pgbench.PgbenchResult:
    s = ctx.session
    if not s.pgbench:
        raise pgbench.PgbenchUnavailable("this engine's sessions have no pgbench")
    path: Path = sql_path(NAME, f"pgbench/{script}")
    return pgbench.run(s.pgbench, s.pgbench_env, path, clients=clients, threads=clients, defines=defines, options=options, **length)  # type: ignore[arg-type]


def _add_result(got: dict[str, list[float]], res: pgbench.PgbenchResult) -> None:
    got["tps"].append(res.tps)
    got["latency_avg"].append(res.latency_avg_ms)
    got["latency_p50"].append(res.percentile(50))
    got["latency_p95"].append(res.percentile(95))
    got["latency_p99"].append(res.percentile(99))
    got["failures"].append(float(max(res.failed, res.log_failed)))
    got["transactions"].append(float(res.processed))


_UNITS = {"tps": "tps", "latency_avg": "ms", "latency_p50": "ms", "latency_p95": "ms", "latency_p99": "ms", "failures": "transactions", "transactions": "transactions",
          "wal_bytes_per_update": "bytes", "hot_share": "ratio", "n_tup_upd": "rows", "n_tup_hot_upd": "rows"}


def _record_result(ctx: WorkloadContext, variant: str, got: dict[str, list[float]]) -> None:
    for metric, values in got.items():
        ctx.record(metric, _UNITS[metric], values, variant=variant)
