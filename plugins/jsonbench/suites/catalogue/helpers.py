"""What the catalogue's workloads share, public because others use it too.

* **pgbench runs and their recording**: :func:`run_pgbench` (one script of
  ``include/sql/catalogue/pgbench/`` with the session's pgbench, its log sampled, progress in the
  task log), :func:`record_clients`, :func:`run_length`, :class:`PgbenchSamples` (one list per
  metric, recorded per variant), and :func:`update_run`, the seed's measuring procedure around an
  update script (CHECKPOINT, WAL insert position before and after, HOT counters, full-page-image
  share);
* **plans**: :func:`fixed_query` (a pgbench script as one SQL statement with fixed parameters),
  :func:`plan_core`, :func:`plan_shape`, :func:`is_full_scan`, :func:`workers_planned`,
  :func:`workers_launched`, :func:`error_factor`;
* **warm-up**: :func:`prewarm` (pg_prewarm of tables with their TOAST and indexes, as the seed did
  before its read tests);
* small arithmetic: :func:`ratios`, :func:`safe_ratio`.

``jsonbench_dev.pgbench_overhead`` and ``jsonbench_dev.handcheck`` call these (and the workloads' own
public functions), so that what they compare against a hand run is what the matrix runs.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from jsonbench import pgbench
from jsonbench.dataset.measurement import MetricKind
from jsonbench.sqlfiles import sql_path
from jsonbench.suites.base import MEASURE, WorkloadContext

if TYPE_CHECKING:
    from jsonbench.engines.postgres_session import PostgresSession

log = logging.getLogger(__name__)

#: What every catalogue workload is handed: a workload context on a PostgreSQL session (imported by
#: each workload module with the helpers it uses).
Ctx: TypeAlias = WorkloadContext["PostgresSession"]

NAME = "catalogue"

#: The shared tables: loaded once per cell, left by every workload as it found them.
SHARED_TABLES: tuple[str, ...] = ("products_doc", "products_rel", "product_tags")

#: Plan nodes that wrap the node doing the work (the one whose rows the seed quotes).
_WRAPPERS = {"Aggregate", "Limit", "Gather", "Gather Merge", "Sort", "Incremental Sort", "Result", "Materialize"}
_VAR_RE = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")

#: Units of the per-run pgbench metrics and of the update measurements.
UNITS: dict[str, str] = {
    "tps": "tps",
    "latency_avg": "ms",
    "latency_p50": "ms",
    "latency_p95": "ms",
    "latency_p99": "ms",
    "failures": "transactions",
    "transactions": "transactions",
    "wal_bytes_per_update": "bytes",
    "wal_record_bytes_per_update": "bytes",
    "fpi_share": "ratio",
    "hot_share": "ratio",
    "n_tup_upd": "rows",
    "n_tup_hot_upd": "rows",
}
#: What one pgbench run contributes to :class:`PgbenchSamples`, with each metric's kind: rates and
#: latencies are timed; ``transactions`` is a rate times the run's length (``-T``; at ``-t`` the fixed
#: count); ``failures`` is how many of a timed run's transactions failed (sampled: not a fact of the data).
RUN_KINDS: dict[str, MetricKind] = {
    "tps": "timed",
    "latency_avg": "timed",
    "latency_p50": "timed",
    "latency_p95": "timed",
    "latency_p99": "timed",
    "failures": "sampled",
    "transactions": "timed",
}
RUN_METRICS: tuple[str, ...] = tuple(RUN_KINDS)
#: The seed's 4 clients / 4 threads scaled to this machine (:func:`record_clients`): facts of the run.
CLIENT_KINDS: dict[str, MetricKind] = {"clients": "deterministic", "threads": "deterministic"}
#: pgbench ``--random-seed`` of the fixed-count update runs (``updates``, ``fat_update``): the same rows on
#: every host and every night.
FIXED_RANDOM_SEED = 1000
#: Clients of the fixed-count update runs: one, whatever the machine's :func:`record_clients`. With two, how their
#: updates interleave decides which find room for HOT and when a page is pruned, so the column side's WAL per update
#: moved 3 % between runs of a slow host (and 1.6 % at smoke); with one it repeats to 0.1 % at every scale and host
#: speed measured (``docs/noise-levels.md``). The runs' tps is one client's, so they are series of their own.
FIXED_CLIENTS = 1
#: The variant suffix of the fixed-count runs (``doc_fixed_1client``, ``doc_over_rel_fixed_1client``): a name of their
#: own, so that no history of the earlier two-client ``<design>_fixed`` runs judges them.
FIXED = "fixed_1client"
#: What an update run measures besides its timings: drawn from how a fixed-duration run happened to
#: go (how many updates ran, how many found room for HOT, how much WAL and how many full-page images).
UPDATE_KINDS: dict[str, MetricKind] = {
    "wal_bytes_per_update": "sampled",
    "fpi_share": "sampled",
    "hot_share": "sampled",
    "n_tup_upd": "sampled",
    "n_tup_hot_upd": "sampled",
}


# -- arithmetic ---------------------------------------------------------------------------------


def safe_ratio(a: float, b: float) -> float:
    return a / b if b else math.nan


def ratios(a: list[float], b: list[float]) -> list[float]:
    """Per-repetition ratios a[i] / b[i] (paired: measured in the same repetition)."""
    return [safe_ratio(x, y) for x, y in zip(a, b, strict=True)]


def error_factor(estimated: float, actual: float) -> float:
    """How far off an estimate is, as a factor >= 1 in either direction (1 = exact)."""
    est, act = max(estimated, 1.0), max(actual, 1.0)
    return max(est / act, act / est)


# -- plans --------------------------------------------------------------------------------------


def fixed_query(script: str, params: Mapping[str, Any]) -> str:
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


def script_variables(script: str) -> list[str]:
    """The ``:variables`` a pgbench script uses, sorted."""
    return sorted(set(_VAR_RE.findall(script)))


def plan_core(node: dict[str, Any]) -> dict[str, Any]:
    """The node doing the work under wrapper nodes (Aggregate, Limit, Gather, Sort...)."""
    while node.get("Node Type") in _WRAPPERS and len(node.get("Plans", [])) == 1:
        node = node["Plans"][0]
    return node


def plan_shape(node: dict[str, Any]) -> str:
    """A one-line plan: ``Aggregate > Bitmap Heap Scan(products_doc) > Bitmap Index Scan(doc_gin_ops)``."""
    label = str(node.get("Node Type", "?"))
    target = node.get("Index Name") or node.get("Relation Name")
    if target:
        label += f"({target})"
    kids = [plan_shape(k) for k in node.get("Plans", [])]
    if not kids:
        return label
    return f"{label} > {kids[0]}" if len(kids) == 1 else f"{label} > [{' ; '.join(kids)}]"


def walk(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every node of a plan, depth first."""
    yield node
    for kid in node.get("Plans", []):
        yield from walk(kid)


def is_full_scan(plan: dict[str, Any], table: str) -> bool:
    """True when the plan reads all of ``table`` with a sequential scan and has no Limit to stop early."""
    nodes = list(walk(plan))
    if any(n.get("Node Type") == "Limit" for n in nodes):
        return False
    return any(n.get("Node Type") == "Seq Scan" and n.get("Relation Name") == table for n in nodes)


def workers_planned(plan: dict[str, Any]) -> int:
    """Parallel workers the plan asked for (the largest Gather's ``Workers Planned``)."""
    return max((int(n.get("Workers Planned", 0)) for n in walk(plan)), default=0)


def workers_launched(plan: dict[str, Any]) -> int:
    """Parallel workers that really ran (``Workers Launched`` of an EXPLAIN ANALYZE plan)."""
    return max((int(n.get("Workers Launched", 0)) for n in walk(plan)), default=0)


# -- warm-up ------------------------------------------------------------------------------------


def prewarm(ctx: Ctx, tables: tuple[str, ...] = SHARED_TABLES) -> None:
    """Load ``tables`` with their TOAST tables and every index into shared buffers (pg_prewarm, as the seed), and each
    one's visibility map.

    The visibility map too, so that a start after a restart holds what the first start held after its VACUUM: an index-only
    scan reads the map (``buffers``' ``full_rel`` plan, ``product_tags_pkey``), and pg_prewarm loads the main fork only.
    Without it, with two engine starts a cell (the default at laptop), ``full_rel`` read 7 + 1 of its 8
    buffers in a restarted start and 8 + 0 in a first one (buffers_hit 7.0 and 7.5 a night where every one-start
    night read 8), and drift confirmed the split's move. Without pg_prewarm, one sequential pass
    over each table warms its heap at least.
    """
    s = ctx.session
    if not s.capabilities.get("pg_prewarm", False):
        for table in tables:
            s.query_file(NAME, "warm_table", table=table)
        return
    for (relation,) in s.query_file(NAME, "prewarm_list", {"tables": list(tables)}):
        s.prewarm(relation)
        s.prewarm(relation, "vm")


# -- pgbench ------------------------------------------------------------------------------------


def record_clients(ctx: Ctx) -> int:
    """The seed's 4 clients / 4 threads scaled to this machine; recorded as the ``clients``/``threads`` metrics."""
    clients = pgbench.machine_clients(int(ctx.scale_params.get("clients", 4)))
    lengths: dict[str, Any] = {
        k: ctx.scale_params[k]
        for k in ("pgbench_seconds", "pgbench_transactions", "update_seconds", "update_transactions", "pgbench_repetitions")
        if k in ctx.scale_params
    }
    ctx.record("clients", "clients", float(clients), extra={"seed": int(ctx.scale_params.get("clients", 4)), **lengths})
    ctx.record("threads", "threads", float(clients))
    return clients


def run_length(ctx: Ctx, kind: str) -> dict[str, float]:
    """How long each pgbench run of ``kind`` (``pgbench`` for reads, ``update``) lasts at this scale.

    ``<kind>_transactions`` (per client, pgbench ``-t``) when the profile gives it, which keeps
    smoke runs far below pgbench's one-second minimum for ``-T``; else ``<kind>_seconds``.
    """
    if ctx.scale_params.get(f"{kind}_transactions"):
        return {"transactions": int(ctx.scale_params[f"{kind}_transactions"])}
    return {"seconds": float(ctx.scale_params[f"{kind}_seconds"])}


def run_pgbench(
    ctx: Ctx,
    script: str,
    clients: int,
    length: Mapping[str, float],
    *,
    defines: Mapping[str, Any],
    options: str | None = None,
    expected_tps: float | None = None,
    random_seed: int | None = None,
) -> pgbench.PgbenchResult:
    """Run ``include/sql/catalogue/pgbench/<script>.sql`` with the session's pgbench (no window: callers time it).

    The seed's command line (``-n -c N -j N``) plus a sampled per-transaction log for percentiles
    and ``-P`` progress into the task log (see :mod:`jsonbench.pgbench`); ``expected_tps`` (an
    earlier run of the same script) sizes the log's sample.
    """
    s = ctx.session
    if not s.pgbench:
        raise pgbench.PgbenchUnavailable("this engine's sessions have no pgbench")
    return pgbench.run(
        s.pgbench,
        s.pgbench_env,
        sql_path(NAME, f"pgbench/{script}"),
        clients=clients,
        threads=clients,
        defines=defines,
        options=options,
        expected_tps=expected_tps,
        seconds=length.get("seconds"),
        transactions=_int_or_none(length.get("transactions")),
        random_seed=random_seed,
    )


def _int_or_none(value: float | None) -> int | None:
    return None if value is None else int(value)


@dataclass
class PgbenchSamples:
    """Per-repetition samples of one variant's pgbench metrics (and of any extra metric in :data:`UNITS`)."""

    metrics: tuple[str, ...] = RUN_METRICS
    values: dict[str, list[float]] = field(default_factory=dict)
    #: Sampling rate of each run's transaction log (kept in the record's ``extra``).
    sampling: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        for metric in self.metrics:
            self.values.setdefault(metric, [])

    def add(self, res: pgbench.PgbenchResult) -> None:
        """One run's summary and log percentiles."""
        got = {
            "tps": res.tps,
            "latency_avg": res.latency_avg_ms,
            "latency_p50": res.percentile(50),
            "latency_p95": res.percentile(95),
            "latency_p99": res.percentile(99),
            "failures": float(max(res.failed, res.log_failed)),
            "transactions": float(res.processed),
        }
        for metric in RUN_METRICS:
            if metric in self.values:
                self.values[metric].append(got[metric])
        self.sampling.append(res.sampling_rate)

    def put(self, metric: str, value: float) -> None:
        self.values.setdefault(metric, []).append(float(value))

    def last_tps(self) -> float | None:
        """tps of the latest run (sizes the next run's log sample)."""
        tps = self.values.get("tps") or []
        return tps[-1] if tps else None

    def record(
        self, ctx: Ctx, variant: str, extra: dict[str, Any] | None = None, metric_extra: Mapping[str, dict[str, Any]] | None = None
    ) -> None:
        """Record every metric with samples under ``variant``; ``extra`` goes with ``tps`` (with the log's
        sampling rates), ``metric_extra[metric]`` with that metric."""
        note = {"log_sampling_rate": self.sampling, **(extra or {})} if self.sampling else dict(extra or {})
        for metric, values in self.values.items():
            if values:
                more = {**(note if metric == "tps" else {}), **(metric_extra or {}).get(metric, {})}
                ctx.record(metric, UNITS[metric], values, variant=variant, extra=more or None)


@dataclass(frozen=True)
class UpdateRun:
    """One update script's run on a table, measured the seed's way."""

    result: pgbench.PgbenchResult
    wal_bytes: float
    n_tup_upd: int
    n_tup_hot_upd: int
    fpi_share: float
    #: Whether the measure window was disturbed by other load (the row is marked, never retried).
    disturbed: bool

    @property
    def wal_bytes_per_update(self) -> float:
        return self.wal_bytes / self.result.processed if self.result.processed else math.nan

    @property
    def hot_share(self) -> float:
        return self.n_tup_hot_upd / self.n_tup_upd if self.n_tup_upd else math.nan

    def add_to(self, samples: PgbenchSamples, *, fpi: bool = True, hot: bool = True) -> None:
        """Add this run's pgbench figures, WAL per update and (optionally) HOT counters and FPI share."""
        samples.add(self.result)
        samples.put("wal_bytes_per_update", self.wal_bytes_per_update)
        if hot:
            samples.put("hot_share", self.hot_share)
            samples.put("n_tup_upd", float(self.n_tup_upd))
            samples.put("n_tup_hot_upd", float(self.n_tup_hot_upd))
        if fpi:
            samples.put("fpi_share", self.fpi_share)


def update_run(
    ctx: Ctx,
    script: str,
    table: str,
    clients: int,
    length: Mapping[str, float],
    defines: Mapping[str, Any],
    options: str | None,
    expected_tps: float | None = None,
    run: Callable[[], pgbench.PgbenchResult] | None = None,
    fpi: bool = True,
    random_seed: int | None = None,
) -> UpdateRun:
    """CHECKPOINT, run an update script in a measure window, then WAL per update, FPI share and HOT counts of ``table``.

    WAL is the difference of the insert position around the run (:meth:`PostgresSession.insert_lsn`:
    with synchronous_commit off the write position can lag behind a short run). An update run is
    destructive, so a disturbed window is not retried: the row is marked. ``run`` replaces the
    pipeline's pgbench call (the hand-run comparison passes the seed's own command line). ``fpi``
    False skips the full-page-image share (it reads the run's whole WAL range back).
    """
    s = ctx.session
    before = s.table_stats(table)
    s.checkpoint()  # WAL of the run alone, with the full-page images a first touch after a checkpoint costs
    start = s.insert_lsn()
    go = run or (
        lambda: run_pgbench(
            ctx, script, clients, length, defines=defines, options=options, expected_tps=expected_tps, random_seed=random_seed
        )
    )
    res, win = ctx.measure(go, phase=MEASURE)
    end = s.insert_lsn()
    wal = float(s.wal_bytes_between(start, end))
    after = s.table_stats(table, expect_updates=before.n_tup_upd + res.processed)
    share = math.nan
    if fpi:
        wal, share = wal_of_updates(ctx, table, start, end, wal)
    return UpdateRun(res, wal, after.n_tup_upd - before.n_tup_upd, after.n_tup_hot_upd - before.n_tup_hot_upd, share, win.disturbed)


#: WAL space a byte of records takes: an 8 kB WAL page holds 8,168 bytes of records after its 24-byte header.
WAL_PAGE_SPACE = 8192 / (8192 - 24)


def wal_of_updates(ctx: Ctx, table: str, start: str, end: str, wal: float) -> tuple[float, float]:
    """The run's WAL less what other processes wrote in its range, and the full-page-image share of the rest.

    The insert position's move counts every process's WAL. In one recorded night, one repetition of 17's
    one-client fixed-count run read 343.46 bytes of records per update where every other run of every host read
    327.91-327.93, with the same updates and HOT counts: about 35 full-page images and 66 kB of records more, written
    by another process right after the run's CHECKPOINT (an autovacuum of the catalog writes just that), so a
    near-exact count moved 4.7 % and drift confirmed it twice. So the records of no block of ``table`` (its indexes,
    its TOAST), other than its transactions' commits, are taken out (``wal_foreign.sql``, pg_walinspect's
    ``pg_get_wal_block_info``, PostgreSQL 16+); an honest run loses only a background record or two. Where the
    extension cannot read them, the whole range stands, as before. Returns ``(wal, share)``, NaN share when
    pg_walinspect is not usable here.
    """
    s = ctx.session
    if not s.capabilities.get("pg_walinspect", False):
        return wal, math.nan
    rng = {"start": start, "end": end}
    try:
        s.create_extension("pg_walinspect")
        # pg_walinspect reads flushed WAL only; the WAL writer flushes asynchronous commits within wal_writer_delay.
        s.wait_wal_flushed(end)
        fpi, combined = (float(x) for x in s.query_file(NAME, "wal_fpi", rng)[0])
    except Exception:  # no privilege to create or read it: recorded as not applicable
        return wal, math.nan
    try:
        f_fpi, f_combined, f_space, f_records = s.query_file(NAME, "wal_foreign", {**rng, "table": table})[0]
    except Exception as exc:  # the whole range stands (an extension without pg_get_wal_block_info)
        log.warning("WAL of %s's run not told apart from other processes' (%s): the whole range counts", table, exc)
        return wal, (fpi / combined if combined else math.nan)
    if f_records:
        log.info(
            "WAL of %s's run: %d record(s) of other processes left out (%.0f bytes, %.0f of them images)",
            table,
            f_records,
            f_combined,
            f_fpi,
        )
    fpi, combined = fpi - float(f_fpi), combined - float(f_combined)
    return max(0.0, wal - float(f_space) * WAL_PAGE_SPACE), (fpi / combined if combined > 0 else math.nan)


def walinspect_reason(ctx: Ctx) -> str:
    """Why the full-page-image share could not be measured here."""
    if not ctx.session.capabilities.get("pg_walinspect", False):
        return "engine build lacks pg_walinspect"
    return "pg_walinspect is installed but not usable by the benchmark role (CREATE EXTENSION or pg_get_wal_stats refused)"
