"""Workload ``scan``: the seed's full-table aggregation, with 2 parallel workers and with none.

Median of ``scan_runs`` runs in cache (after the reads' prewarm and one warm-up run), each run its
own measure window, taken once more when that window was disturbed (a read changes nothing).
Recorded per variant (``<design>_workers_<n>``): ``scan_time``, ``workers_planned`` (EXPLAIN),
``workers_launched`` (EXPLAIN ANALYZE, right after the timed runs, with the server's worker limits
in ``extra``), ``full_scan_plan`` (the plan reads the whole table: no index-ordered early stop),
``groups``; and ``time_ratio`` doc / rel per worker count. The seed's trap (``ORDER BY 1 LIMIT 1``
walks ``doc_cat_brand`` and stops after one group) is planned too: ``trap_full_scan_plan`` must be 0,
which shows the full-scan check can tell.

Where this departs from the seed, and why: the parallel variant also sets
``min_parallel_table_scan_size = 0`` for its session. The seed's tables (284 MB and 95 MB at a
million rows) are far above the 8 MB default, so its planner gave both scans 2 workers; the smaller
tables of the ``smoke`` and ``laptop`` profiles are not (at ``laptop`` the relational heap, 19 MB,
got 1 worker and at ``smoke`` neither got any), and the "parallel" figure then compared a serial or
1-worker plan with the serial one. With the threshold at 0 the planner weighs 2 workers at every
scale, as it did at the seed's; ``workers_launched`` records what really ran. On a 2-core machine
the leader and 2 workers share 2 cores, so parallel time can at best halve, and only when no other
process wants a core (the seed had 8 vCPUs); parallel and serial times that come out equal while 2
workers launched mean the cores were busy, which the row's ``host_other_cpu`` shows.
"""

from __future__ import annotations

import os
import statistics
from functools import partial

from jsonbench.dataset.measurement import MetricKind
from jsonbench.sqlfiles import compose, load_sql
from jsonbench.suites.base import MEASURE
from jsonbench.suites.catalogue.helpers import NAME, Ctx, is_full_scan, plan_shape, prewarm, workers_launched, workers_planned

#: ``workers_launched`` is what the server granted out of ``max_worker_processes`` on a server
#: running nothing else: a fact (0 spread over the recorded runs) as long as nothing else holds workers.
METRICS: dict[str, MetricKind] = {
    "scan_time": "timed",
    "workers_planned": "deterministic",
    "workers_launched": "deterministic",
    "full_scan_plan": "deterministic",
    "groups": "deterministic",
    "time_ratio": "timed",
    "trap_full_scan_plan": "deterministic",
}

#: Session settings per worker count: the parallel variant lets the planner weigh 2 workers whatever the table's size.
SETTINGS: dict[int, dict[str, str]] = {
    2: {"max_parallel_workers_per_gather": "2", "min_parallel_table_scan_size": "0"},
    0: {"max_parallel_workers_per_gather": "0"},
}
TABLES: dict[str, str] = {"doc": "products_doc", "rel": "products_rel"}


def run(ctx: Ctx) -> None:
    s = ctx.session
    prewarm(ctx)
    runs = int(ctx.scale_params.get("scan_runs", 5))
    medians: dict[str, float] = {}
    try:
        for workers, settings in SETTINGS.items():
            for name in ("max_parallel_workers_per_gather", "min_parallel_table_scan_size"):
                s.reset(name)
            for name, value in settings.items():
                s.set(name, value)
            limits = dict(
                zip(
                    ("max_parallel_workers_per_gather", "max_parallel_workers", "max_worker_processes", "min_parallel_table_scan_size"),
                    s.query_file(NAME, "parallel_settings")[0],
                    strict=True,
                )
            )
            for design, table in TABLES.items():
                variant = f"{design}_workers_{workers}"
                query = compose(load_sql(NAME, f"scan_{design}"))
                plan = s.explain(query)["Plan"]
                ctx.record("workers_planned", "workers", float(workers_planned(plan)), variant=variant, extra={"plan": plan_shape(plan)})
                ctx.record("full_scan_plan", "bool", 1.0 if is_full_scan(plan, table) else 0.0, variant=variant)
                groups = len(s.execute(query))  # warm-up, and the result's size
                times = [ctx.timed(partial(s.execute, query), MEASURE, retry_disturbed=True) for _ in range(runs)]
                launched = workers_launched(s.explain(query, analyze=True, timing=False)["Plan"])
                ctx.record("workers_launched", "workers", float(launched), variant=variant, extra={**limits, "host_cores": os.cpu_count()})
                ctx.record("scan_time", "ms", times, variant=variant, extra={"retried_windows": ctx.retries})
                ctx.record("groups", "rows", float(groups), variant=variant)
                medians[variant] = statistics.median(times)
            ctx.record(
                "time_ratio",
                "x",
                medians[f"doc_workers_{workers}"] / medians[f"rel_workers_{workers}"],
                variant=f"doc_over_rel_workers_{workers}",
            )
        # The seed's trap: ORDER BY 1 LIMIT 1 may walk an index and stop early; the check above must catch it.
        s.set("max_parallel_workers_per_gather", "2")
        for design, table in TABLES.items():
            plan = s.explain(compose(load_sql(NAME, f"scan_{design}_trap")))["Plan"]
            ctx.record(
                "trap_full_scan_plan", "bool", 1.0 if is_full_scan(plan, table) else 0.0, variant=design, extra={"plan": plan_shape(plan)}
            )
    finally:
        s.reset("max_parallel_workers_per_gather")
        s.reset("min_parallel_table_scan_size")
