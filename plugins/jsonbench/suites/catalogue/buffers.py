"""Workload ``buffers``: EXPLAIN (ANALYZE, BUFFERS) of each read script with one fixed parameter set.

The seed's category 7, brand 120 and tag 33, id 42, and a price band starting at 500.00, after the
same prewarm as the reads. Buffer counts and matching rows are deterministic; ``execution_time`` is
the server's, each plan its own measure window, taken once more when that window was disturbed.

The buffer counts are always those of the plan's first execution in this session, even when its
window was disturbed and the plan taken again: a second execution of the same plan hits fewer
buffers (``full_doc``'s index lookup: 6 the first time, 3 after, on the recorded smoke runs, where
the count flipped between runs exactly as often as the detector called a window busy). Timing
comes from the execution kept (the retried one when there was a retry), as for every other retried
measurement.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from jsonbench.dataset.measurement import MetricKind
from jsonbench.sqlfiles import sql_path
from jsonbench.suites.catalogue.helpers import NAME, Ctx, fixed_query, plan_core, plan_shape, prewarm, safe_ratio, script_variables
from jsonbench.suites.catalogue.reads import SCRIPTS

if TYPE_CHECKING:
    from jsonbench.engines.postgres_session import PostgresSession

#: Buffer counts are those of each plan's first execution in this session (see :func:`run`): the total is a
#: fact; its split between hit and read follows what shared_buffers holds (at ``full`` the tables outgrow it:
#: ``full_rel`` read 7 + 1 and 8 + 0 of its 8 buffers in two runs on one machine), so the split is sampled.
METRICS: dict[str, MetricKind] = {
    "buffers_hit": "sampled",
    "buffers_read": "sampled",
    "buffers_total": "deterministic",
    "rows": "deterministic",
    "execution_time": "timed",
    "buffers_ratio": "deterministic",
}

#: One fixed parameter set for the plans.
FIXED_PARAMS: dict[str, int] = {"c": 7, "b": 120, "t": 33, "i": 42, "p": 50000}


def run(ctx: Ctx) -> None:
    s = ctx.session
    prewarm(ctx)
    params = {**FIXED_PARAMS, "products": int(ctx.scale_params["products"])}
    totals: dict[str, float] = {}
    for script in SCRIPTS:
        text = sql_path(NAME, f"pgbench/{script}").read_text(encoding="utf-8")
        query = fixed_query(text, params)
        plans: list[dict[str, Any]] = []
        plan, _ = ctx.measure(partial(_explain_keeping, s, query, plans), retry_disturbed=True)
        top = plans[0]["Plan"]  # the first execution's buffers, retried or not
        core = plan_core(top)
        hit, read = int(top.get("Shared Hit Blocks", 0)), int(top.get("Shared Read Blocks", 0))
        totals[script] = float(hit + read)
        extra = {"plan": plan_shape(top), "params": {k: params[k] for k in script_variables(text)}}
        ctx.record("buffers_hit", "buffers", float(hit), variant=script, extra=extra)
        ctx.record("buffers_read", "buffers", float(read), variant=script)
        ctx.record("buffers_total", "buffers", float(hit + read), variant=script)
        ctx.record(
            "rows",
            "rows",
            float(core.get("Actual Rows", 0)) * float(core.get("Actual Loops", 1) or 1),
            variant=script,
            extra={"node": core.get("Node Type")},
        )
        ctx.record("execution_time", "ms", float(plan["Execution Time"]), variant=script)
    ctx.record("buffers_ratio", "x", safe_ratio(totals["tag_rel"], totals["tag_doc"]), variant="tag_rel_over_doc")
    ctx.record("buffers_ratio", "x", safe_ratio(totals["cb_doc_gin"], totals["cb_doc_btree"]), variant="cb_doc_gin_over_doc_btree")


def _explain_keeping(s: PostgresSession, query: Any, plans: list[dict[str, Any]]) -> dict[str, Any]:
    """The plan of one execution of ``query``, also appended to ``plans`` (every execution's, in order)."""
    plan = s.explain_analyze(query)
    plans.append(plan)
    return plan
