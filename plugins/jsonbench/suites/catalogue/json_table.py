"""Workload ``json_table``: the seed's JSON_TABLE query vs the same columns through ``->>`` (PostgreSQL 17+).

After the reads' prewarm: the point query by id (``point_loops`` ids per repetition, client round
trip included) and the same over every document (``scan_runs`` runs), both with JSON_TABLE and with
``->>`` and casts; the two must return the same values (``results_match``). Every timed block is a
measure window, taken once more when disturbed (reads change nothing). ``time_ratio`` variant
``scan_json_table_over_arrow``: the seed says JSON_TABLE "does not make the scan faster"; a ratio
above 1 says it makes it slower. On a build without JSON_TABLE every metric is not applicable, with
the reason.
"""

from __future__ import annotations

import statistics
from functools import partial
from typing import TYPE_CHECKING, Any

from jsonbench.dataset.measurement import MetricKind
from jsonbench.sqlfiles import compose, load_sql
from jsonbench.suites.base import MEASURE
from jsonbench.suites.catalogue.helpers import NAME, Ctx, prewarm

if TYPE_CHECKING:
    from psycopg.sql import Composed

METRICS: dict[str, MetricKind] = {"point_latency": "timed", "scan_time": "timed", "results_match": "deterministic", "time_ratio": "timed"}
FORMS: tuple[str, ...] = ("json_table", "arrow")


def run(ctx: Ctx) -> None:
    reason = ctx.require("json_table")
    if reason:
        why = f"{reason} (JSON_TABLE is PostgreSQL 17+; the ->> twin is measured only next to it)"
        ctx.not_applicable([("point_latency", "ms"), ("scan_time", "ms"), ("results_match", "bool")], why, variant="json_table")
        ctx.not_applicable([("point_latency", "ms"), ("scan_time", "ms")], why, variant="arrow")
        ctx.not_applicable([("time_ratio", "x")], why, variant="scan_json_table_over_arrow")
        return
    s = ctx.session
    prewarm(ctx)
    point = {v: compose(load_sql(NAME, f"json_table/point_{v}")) for v in FORMS}
    scan = {v: compose(load_sql(NAME, f"json_table/scan_{v}")) for v in FORMS}
    loops = int(ctx.scale_params.get("point_loops", 200))
    n = int(ctx.scale_params["products"])
    ids = [1 + (i * 7919) % n for i in range(loops)]
    same_point = s.execute(point["json_table"], {"id": 42}) == s.execute(point["arrow"], {"id": 42})
    same_scan = s.execute(scan["json_table"]) == s.execute(scan["arrow"])  # also the warm-up
    runs = int(ctx.scale_params.get("scan_runs", 5))
    medians = {}
    for form in FORMS:

        def point_reads(query: Composed = point[form]) -> list[list[tuple[Any, ...]]]:
            return [s.execute(query, {"id": i}) for i in ids]

        lat = [ctx.timed(point_reads, MEASURE, retry_disturbed=True) / loops for _ in range(ctx.repetitions)]
        times = [ctx.timed(partial(s.execute, scan[form]), MEASURE, retry_disturbed=True) for _ in range(runs)]
        ctx.record("point_latency", "ms", lat, variant=form, extra={"loops": loops, "note": "client round trip included"})
        ctx.record("scan_time", "ms", times, variant=form, extra={"retried_windows": ctx.retries})
        medians[form] = statistics.median(times)
    ctx.record("results_match", "bool", 1.0 if same_point and same_scan else 0.0, variant="json_table")
    ctx.record("time_ratio", "x", medians["json_table"] / medians["arrow"], variant="scan_json_table_over_arrow")
