"""The catalogue's setup step: both designs loaded from one deterministic source (recorded as workload ``load``).

The seed's order, and nothing in the way of the bulk load: the source materialised once (the
seed's temporary table), then each table by ``INSERT ... SELECT`` in id order, the foreign key of
``product_tags`` added after the bulk load (the seed measured 3 min 51 s with it in place), the
secondary indexes built after the load, and one ``VACUUM ANALYZE`` per table. Each step is its own
``load`` window and its time a ``load_time`` / ``foreign_key_time`` / ``index_time`` /
``vacuum_analyze_time`` sample (``load_time`` variant ``source`` is the generation alone).
``jsonbench-dev load-handcheck`` runs the same SQL files by hand with psql on the same
server and prints pipeline time / hand time.

**Generated data is not shared between versions.** The source is generated inside each server by
``catalogue_source()`` (the seed's hashint4 scattering, in SQL): it takes a small share of the
load (``load_time`` variant ``source`` against the rest), a file shared between cells would have
to outlive the cell that made it (every cell removes all it created), and loading it back would
still parse the same rows. Each version generates its own, from the same deterministic function.

Then two checks of what was loaded: row counts per table and ``design_mismatches`` (products whose
document and row disagree, tags included): 0 when both designs hold the same values.
"""

from __future__ import annotations

from functools import partial

from jsonbench import pgbench
from jsonbench.dataset.measurement import MetricKind
from jsonbench.suites.base import LOAD
from jsonbench.suites.catalogue.helpers import NAME, Ctx

#: The workload name the setup step's measurements are recorded under.
WORKLOAD = "load"
METRICS: dict[str, MetricKind] = {
    "load_time": "timed",
    "foreign_key_time": "timed",
    "index_time": "timed",
    "vacuum_analyze_time": "timed",
    "rows": "deterministic",
    "design_mismatches": "deterministic",
}

#: The load's SQL files in order, with the metric and variant each one's time is recorded as.
STEPS: tuple[tuple[str, str, str], ...] = (
    ("load_source", "load_time", "source"),
    ("load_doc", "load_time", "doc"),
    ("load_rel", "load_time", "rel"),
    ("load_tags", "load_time", "tags"),
    ("add_foreign_key", "foreign_key_time", "tags"),
    ("index_doc", "index_time", "doc"),
    ("index_rel", "index_time", "rel"),
    ("vacuum_analyze", "vacuum_analyze_time", "default"),
)
#: Run before the timed steps (a function and empty tables).
PREPARE: tuple[str, ...] = ("source_function", "create_tables")


def run(ctx: Ctx) -> None:
    s = ctx.session
    # Again here, with the session's own pgbench: no data is loaded for a cell that cannot measure.
    major, minor = pgbench.check_version(s.pgbench, s.pgbench_env)
    params = {"products": int(ctx.scale_params["products"])}
    for name in PREPARE:
        s.run_file(NAME, name)
    note = {"pgbench_version": f"{major}.{minor}"}
    for name, metric, variant in STEPS:
        ms = ctx.timed(partial(s.run_file, NAME, name, params), LOAD)
        ctx.record(metric, "ms", ms, variant=variant, workload=WORKLOAD, extra=note if metric == "load_time" else None)
    docs, rels, tags = s.query_file(NAME, "row_counts")[0]
    for variant, count in (("doc", docs), ("rel", rels), ("tags", tags)):
        ctx.record("rows", "rows", float(count), variant=variant, workload=WORKLOAD)
    ctx.record("design_mismatches", "rows", float(s.query_file(NAME, "design_mismatches")[0][0]), workload=WORKLOAD)
