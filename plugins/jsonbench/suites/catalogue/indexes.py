"""Workload ``indexes``: build time and size of each index twin (built, measured, dropped).

GIN ``jsonb_path_ops`` vs the default ``jsonb_ops`` (the seed: 10.2 s vs 25.9 s, 41 vs 49 MB), the
B-tree expression indexes vs their column twins (exactly the same size: an expression index stores
the extracted value), and the tag table's B-tree. ``index_builds`` builds per twin, interleaved.
Each build is its own measure window; a build whose window was disturbed is dropped and built once
more (a build does not change the table), so its time is a quiet one or is marked.
"""

from __future__ import annotations

from functools import partial

from jsonbench.dataset.measurement import MetricKind
from jsonbench.suites.catalogue.helpers import NAME, Ctx, ratios

METRICS: dict[str, MetricKind] = {
    "build_time": "timed",
    "index_bytes": "deterministic",
    "size_ratio": "deterministic",
    "build_time_ratio": "timed",
}

#: Index builds: variant -> SQL file (``{index}`` is the twin's name).
BUILDS: dict[str, str] = {
    "gin_path_ops": "build_gin_path_ops",
    "gin_jsonb_ops": "build_gin_jsonb_ops",
    "cat_brand_doc": "build_cat_brand_doc",
    "cat_brand_rel": "build_cat_brand_rel",
    "price_doc": "build_price_doc",
    "price_rel": "build_price_rel",
    "tags_tag": "build_tags_tag",
}
#: variant -> (numerator, denominator) of the size and build-time ratios.
RATIOS: dict[str, tuple[str, str]] = {
    "gin_jsonb_ops_over_path_ops": ("gin_jsonb_ops", "gin_path_ops"),
    "cat_brand_doc_over_rel": ("cat_brand_doc", "cat_brand_rel"),
    "price_doc_over_rel": ("price_doc", "price_rel"),
}


def run(ctx: Ctx) -> None:
    s = ctx.session
    times: dict[str, list[float]] = {v: [] for v in BUILDS}
    sizes: dict[str, list[float]] = {v: [] for v in BUILDS}
    for _ in range(int(ctx.scale_params.get("index_builds", ctx.repetitions))):
        for variant, sql_name in BUILDS.items():
            index = f"catalogue_twin_{variant}"
            try:
                _, win = ctx.measure(
                    partial(s.run_file, NAME, sql_name, index=index),
                    retry_disturbed=True,
                    prepare=partial(s.run_file, NAME, "drop_index", index=index),
                )
                times[variant].append(win.seconds * 1000.0)
                sizes[variant].append(float(s.query_file(NAME, "index_size", {"index": index})[0][0]))
            finally:
                s.run_file(NAME, "drop_index", index=index)
    for variant in BUILDS:
        ctx.record("build_time", "ms", times[variant], variant=variant, extra={"retried_windows": ctx.retries})
        ctx.record("index_bytes", "bytes", sizes[variant], variant=variant)
    for variant, (a, b) in RATIOS.items():
        ctx.record("size_ratio", "x", ratios(sizes[a], sizes[b]), variant=variant)
        ctx.record("build_time_ratio", "x", ratios(times[a], times[b]), variant=variant)
