"""Workload ``planner``: estimated vs actual rows of the seed's five predicates, before and after expression statistics.

``EXPLAIN ANALYZE`` of each predicate (``include/sql/catalogue/planner/``), then ``CREATE
STATISTICS`` on ``data ->> 'color'`` and ``ANALYZE``, then again; the statistics object is dropped
and the table analysed again afterwards, so later workloads find it as loaded. Estimates are
deterministic given the statistics sample, and the sample is random once the table has more rows
than ANALYZE reads: they are ``sampled`` metrics. Nothing here is a timing.

Where this departs from the seed: parallel query is off for the session, so estimates are
whole-table (the seed multiplied a per-worker estimate by 2.4).
"""

from __future__ import annotations

from jsonbench.dataset.measurement import MetricKind
from jsonbench.sqlfiles import compose, load_sql
from jsonbench.suites.base import MEASURE
from jsonbench.suites.catalogue.helpers import NAME, Ctx, error_factor, plan_core, safe_ratio

#: Estimates come from ANALYZE's random sample of 300 x ``default_statistics_target`` rows (30,000):
#: at ``smoke`` (20,000 products) it reads every row and they repeat, at ``laptop`` and above it
#: samples, so they are sampled at every scale. ``actual_rows`` is a count of the data.
METRICS: dict[str, MetricKind] = {
    "estimated_rows_before": "sampled",
    "estimated_rows_after": "sampled",
    "actual_rows": "deterministic",
    "error_factor_before": "sampled",
    "error_factor_after": "sampled",
    "estimate_ratio_before": "sampled",
    "estimate_ratio_after": "sampled",
}
PREDICATES: tuple[str, ...] = ("color_doc_expr", "color_doc_containment", "color_rel", "stock_doc_expr", "stock_rel")


def estimates(ctx: Ctx) -> dict[str, tuple[float, float]]:
    """Per predicate: (estimated rows, actual rows) of the node doing the work."""
    out = {}
    for predicate in PREDICATES:
        plan = ctx.session.explain(compose(load_sql(NAME, f"planner/{predicate}")), analyze=True)
        core = plan_core(plan["Plan"])
        loops = float(core.get("Actual Loops", 1) or 1)
        out[predicate] = (float(core["Plan Rows"]), float(core["Actual Rows"]) * loops)
    return out


def run(ctx: Ctx) -> None:
    s = ctx.session
    s.set("max_parallel_workers_per_gather", "0")
    try:
        with ctx.window(MEASURE):
            before = estimates(ctx)
            s.run_file(NAME, "planner/create_statistics")
            after = estimates(ctx)
    finally:
        s.run_file(NAME, "planner/drop_statistics")
        s.reset("max_parallel_workers_per_gather")
    for predicate in PREDICATES:
        (est0, actual), (est1, _) = before[predicate], after[predicate]
        ctx.record("estimated_rows_before", "rows", est0, variant=predicate)
        ctx.record("estimated_rows_after", "rows", est1, variant=predicate)
        ctx.record("actual_rows", "rows", actual, variant=predicate)
        ctx.record("error_factor_before", "x", error_factor(est0, actual), variant=predicate)
        ctx.record("error_factor_after", "x", error_factor(est1, actual), variant=predicate)
        ctx.record("estimate_ratio_before", "x", safe_ratio(est0, actual), variant=predicate)
        ctx.record("estimate_ratio_after", "x", safe_ratio(est1, actual), variant=predicate)
