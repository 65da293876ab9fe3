"""Workload ``reads``: the seed's nine pgbench read scripts, in cache.

Every shared relation (tables, TOAST, indexes) is prewarmed with pg_prewarm first, as the seed did
before its read tests. Then ``pgbench_repetitions`` rounds of the nine scripts, interleaved so that
a drift of the machine over time hits every script alike; each run is its own measure window, and a
run whose window was disturbed is run once more (a read changes nothing), so its figures are a
quiet run's or are marked. Recorded per script: tps, average latency and failures from pgbench's
own summary, p50/p95/p99 from its sampled per-transaction log; and the design ratios the seed's
verdicts state (tps of the faster over the slower script).
"""

from __future__ import annotations

from functools import partial

from jsonbench.dataset.measurement import MetricKind
from jsonbench.suites.catalogue.helpers import (
    CLIENT_KINDS,
    RUN_KINDS,
    Ctx,
    PgbenchSamples,
    prewarm,
    ratios,
    record_clients,
    run_length,
    run_pgbench,
)

METRICS: dict[str, MetricKind] = {**RUN_KINDS, "tps_ratio": "timed", **CLIENT_KINDS}

#: The seed's nine read scripts, in the order it ran them.
SCRIPTS: tuple[str, ...] = ("cb_doc_gin", "cb_doc_btree", "cb_rel", "price_doc", "price_rel", "full_doc", "full_rel", "tag_doc", "tag_rel")

#: Design comparisons as the seed's verdicts state them: variant -> (faster script, slower script);
#: the ratio is tps(first) / tps(second).
RATIOS: dict[str, tuple[str, str]] = {
    "cb_rel_over_doc_btree": ("cb_rel", "cb_doc_btree"),
    "cb_doc_btree_over_doc_gin": ("cb_doc_btree", "cb_doc_gin"),
    "price_rel_over_doc": ("price_rel", "price_doc"),
    "full_doc_over_rel": ("full_doc", "full_rel"),
    "tag_doc_over_rel": ("tag_doc", "tag_rel"),
}


def run(ctx: Ctx) -> None:
    prewarm(ctx)
    clients = record_clients(ctx)
    length = run_length(ctx, "pgbench")
    defines = {"products": int(ctx.scale_params["products"])}
    samples = {script: PgbenchSamples() for script in SCRIPTS}
    for _ in range(int(ctx.scale_params["pgbench_repetitions"])):
        for script in SCRIPTS:
            got = samples[script]
            res, _ = ctx.measure(
                partial(run_pgbench, ctx, script, clients, length, defines=defines, expected_tps=got.last_tps()),
                retry_disturbed=True,
            )
            got.add(res)
    for script in SCRIPTS:
        samples[script].record(ctx, script, extra={"retried_windows": ctx.retries})
    for variant, (a, b) in RATIOS.items():
        ctx.record("tps_ratio", "x", ratios(samples[a].values["tps"], samples[b].values["tps"]), variant=variant)
