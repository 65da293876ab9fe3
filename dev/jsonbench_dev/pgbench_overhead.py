"""The harness-overhead benchmark for pgbench: the catalogue's scripts through the pipeline vs by hand.

``jsonbench-dev pgbench-overhead --script cb_rel,upd_fat_doc`` provisions one catalogue
cell through the driver (``tasks.provision``: fresh server, catalogue loaded), then runs each
script alternately

* **through the pipeline**: the catalogue workloads' own public functions, as the matrix runs them
  (inside a sampled measure window; reads through :func:`~jsonbench.suites.catalogue.helpers.run_pgbench`
  with the sampled transaction log and ``-P`` progress; updates through the workloads' own
  ``measure_run`` / ``measure_update``: CHECKPOINT, WAL insert LSN, counters, FPI share), and
* **by hand**: the seed's command line, ``pgbench -n -c N -j N -T S -f script``, with the ``tps``
  line read from its output and nothing else (updates with the same ``PGOPTIONS`` and after the
  same CHECKPOINT the seed took before its WAL measurement),

against the same server with the same clients and duration. An update script runs on fresh state
on both sides, made by the same function the workload uses (a new update copy, a new copy of the
8 kB documents, a newly loaded hybrid table). Rounds alternate which side goes first, so a drift of
the shared machine hits both alike. Prints both tps per round, their medians, the ratio of the
medians and the median of the per-round (paired) ratios, and pgbench's own CPU time per committed
transaction on each side (what logging and progress add to the load generator, in CPU time, which
other load inflates less than it slows tps, though contention for caches and cores raises it too;
embedded and server backends, where pgbench is this process's child). It is a benchmark, not a test:
on a shared 2-core machine run it with many rounds and read the spread.

Not covered: the driver's background sampler of engine memory and disk (every 2 s, one
``smaps_rollup`` read per engine process and a walk of the data folder), which the matrix's tasks
add around a workload.
"""

from __future__ import annotations

import re
import resource
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jsonbench import pgbench
from jsonbench.cell import Cell
from jsonbench.engines.base import engine_for
from jsonbench.engines.postgres_session import PostgresSession
from jsonbench.host.load import WindowSampler
from jsonbench.orchestration import tasks
from jsonbench.sqlfiles import sql_path
from jsonbench.suites.base import WorkloadContext
from jsonbench.suites.catalogue import NAME, fat_update, hybrid, reads, updates
from jsonbench.suites.catalogue.helpers import prewarm, run_pgbench, update_run

_TPS_RE = re.compile(r"^tps = ([\d.]+)", re.M)

Ctx = WorkloadContext[PostgresSession]


@dataclass(frozen=True)
class Script:
    """How one script runs on each side: fresh state before a run, the pipeline's call, the hand run's options."""

    name: str
    #: Fresh state before each run of either side (None: a read, nothing to reset).
    prepare: Callable[[Ctx], object] | None
    #: The pipeline's run: what the matrix's workload calls (returns pgbench's result).
    pipeline: Callable[[Ctx, int, int, float | None], pgbench.PgbenchResult]
    defines: Callable[[Ctx], dict[str, Any]]
    #: ``PGOPTIONS`` of the hand run (the workload's options for this script).
    options: str | None = None
    #: Once before the first round (load what the script needs) and after the last.
    setup: Callable[[Ctx], object] | None = None
    cleanup: Callable[[Ctx], object] | None = None


def _read(name: str) -> Script:
    def pipeline(ctx: Ctx, clients: int, seconds: int, last: float | None) -> pgbench.PgbenchResult:
        res, _ = ctx.measure(
            lambda: run_pgbench(
                ctx, name, clients, {"seconds": seconds}, defines={"products": int(ctx.scale_params["products"])}, expected_tps=last
            )
        )
        return res

    return Script(name, None, pipeline, lambda ctx: {"products": int(ctx.scale_params["products"])}, setup=lambda ctx: prewarm(ctx))


def _small_update(design: str) -> Script:
    def pipeline(ctx: Ctx, clients: int, seconds: int, last: float | None) -> pgbench.PgbenchResult:
        # measure_run makes its own fresh copy first, as the workload does.
        return updates.measure_run(ctx, design, "off", clients, {"seconds": seconds}, last)[0].result

    return Script(
        f"upd_{design}",
        lambda ctx: updates.fresh_copy(ctx, design),
        pipeline,
        lambda ctx: {"products": int(ctx.scale_params["products"])},
        options="-c synchronous_commit=off",
        cleanup=lambda ctx: ctx.session.run_file(NAME, "drop_update_copies"),
    )


def _fat_update(design: str) -> Script:
    def pipeline(ctx: Ctx, clients: int, seconds: int, last: float | None) -> pgbench.PgbenchResult:
        fat_update.fresh_copy(ctx, design)
        return fat_update.measure_update(ctx, design, clients, {"seconds": seconds}, last).result

    return Script(
        f"upd_fat_{design}",
        lambda ctx: fat_update.fresh_copy(ctx, design),
        pipeline,
        lambda ctx: {"rows": int(ctx.scale_params["fat_docs"])},
        options=fat_update.OPTIONS,
        setup=fat_update.load_base,
        cleanup=fat_update.drop,
    )


def _hybrid() -> Script:
    def pipeline(ctx: Ctx, clients: int, seconds: int, last: float | None) -> pgbench.PgbenchResult:
        hybrid.fresh_table(ctx)
        defines = {"products": int(ctx.scale_params["products"])}
        return update_run(
            ctx, "upd_hybrid", hybrid.TABLE, clients, {"seconds": seconds}, defines, "-c synchronous_commit=off", last, fpi=False
        ).result

    return Script(
        "upd_hybrid",
        hybrid.fresh_table,
        pipeline,
        lambda ctx: {"products": int(ctx.scale_params["products"])},
        options="-c synchronous_commit=off",
        cleanup=lambda ctx: ctx.session.run_file(NAME, "drop_hybrid"),
    )


#: Every script the command knows: the nine reads and the update scripts (synchronous commit off, the seeds' headline runs).
SCRIPTS: dict[str, Script] = {
    **{name: _read(name) for name in reads.SCRIPTS},
    "upd_doc": _small_update("doc"),
    "upd_rel": _small_update("rel"),
    "upd_fat_doc": _fat_update("doc"),
    "upd_fat_rel": _fat_update("rel"),
    "upd_hybrid": _hybrid(),
}
#: Shorthands for ``--script``.
GROUPS: dict[str, tuple[str, ...]] = {"reads": reads.SCRIPTS, "updates": ("upd_doc", "upd_rel", "upd_fat_doc", "upd_fat_rel", "upd_hybrid")}


def by_hand_summary(
    command: list[str], env: dict[str, str], script: str, clients: int, seconds: int, defines: dict[str, Any], options: str | None = None
) -> dict[str, float]:
    """pgbench's summary of the seed's own command line (no log, no progress)."""
    argv = [*command, "-n", "-c", str(clients), "-j", str(clients), "-T", str(seconds), "-f", str(sql_path(NAME, f"pgbench/{script}"))]
    for name, value in defines.items():
        argv += ["-D", f"{name}={value}"]
    res = subprocess.run(argv, capture_output=True, text=True, env=pgbench.environment(env, options), timeout=seconds + 300)
    if res.returncode != 0 or not _TPS_RE.search(res.stdout):
        raise pgbench.PgbenchFailed(f"pgbench by hand failed ({res.returncode}): {res.stderr.strip()[-800:]}")
    return pgbench.parse_summary(res.stdout)


def by_hand(
    command: list[str], env: dict[str, str], script: str, clients: int, seconds: int, defines: dict[str, Any], options: str | None = None
) -> float:
    """tps of the seed's own command line (no log, no parsing beyond the summary)."""
    return by_hand_summary(command, env, script, clients, seconds, defines, options)["tps"]


def hand_run(ctx: Ctx, spec: Script, clients: int, seconds: int) -> dict[str, float]:
    """One hand run of a script on fresh state (the seed took a CHECKPOINT before each update run); pgbench's summary."""
    s = ctx.session
    assert s.pgbench is not None
    if spec.prepare is not None:
        spec.prepare(ctx)
        s.checkpoint()
    return by_hand_summary(s.pgbench, s.pgbench_env, spec.name, clients, seconds, spec.defines(ctx), spec.options)


def _children_cpu() -> float:
    """CPU seconds of this process's reaped children (pgbench, on both sides)."""
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def scripts_of(names: str) -> list[str]:
    """``cb_rel,upd_fat_doc`` or a group (``reads``, ``updates``, ``all``) as script names."""
    out: list[str] = []
    for name in (n.strip() for n in names.split(",") if n.strip()):
        group = tuple(SCRIPTS) if name == "all" else GROUPS.get(name, (name,))
        for script in group:
            if script not in SCRIPTS:
                raise ValueError(f"unknown script {script!r}; one of {', '.join(SCRIPTS)} or {', '.join(GROUPS)}, all")
            if script not in out:
                out.append(script)
    return out


def measure(engine: str = "postgres-17", script: str = "cb_rel", seconds: int = 5, rounds: int = 3, scale: str = "smoke") -> dict[str, Any]:
    """Run the comparison for each script; returns per script the per-round tps of both sides, medians and ratios."""
    names = scripts_of(script)
    out: dict[str, Any] = {"engine": engine, "seconds": seconds, "scale": scale, "rounds": rounds, "scripts": {}}
    with tempfile.TemporaryDirectory(prefix="jsonbench-pgbench-overhead-") as results:
        planned = tasks.plan(
            {"scale": scale, "engines": [engine], "suites": [NAME], "results_dir": results}, f"pgbench_overhead_{int(time.time())}", None
        )
        cell = Cell.from_json(planned["cells"][0])
        handle_json = tasks.provision(planned, cell.cell_id)
        try:
            eng = engine_for(cell)
            handle = eng.load_handle(handle_json)

            def sampler() -> WindowSampler:
                return WindowSampler(lambda: eng.pids(handle), cell.quiet.max_other_cpu, cell.quiet.max_steal)

            with eng.session(handle) as session:
                ctx: Ctx = WorkloadContext(cell=cell, session=session, workload="pgbench_overhead", sampler=sampler)
                clients = pgbench.machine_clients(int(ctx.scale_params.get("clients", 4)))
                out["clients"] = clients
                for name in names:
                    out["scripts"][name] = _compare(ctx, SCRIPTS[name], clients, seconds, rounds)
        finally:
            tasks.teardown(planned, cell.cell_id, handle_json)
    return out


def _compare(ctx: Ctx, spec: Script, clients: int, seconds: int, rounds: int) -> dict[str, Any]:
    if spec.setup is not None:
        spec.setup(ctx)
    piped: list[float] = []
    hand: list[float] = []
    # pgbench's own CPU per committed transaction (µs): what the harness adds to the load generator
    # (logging, progress), in CPU time, which other load on the machine inflates less than it slows tps.
    piped_cpu: list[float] = []
    hand_cpu: list[float] = []
    disturbed = 0
    try:
        for i in range(rounds):
            for side in ("pipeline", "hand") if i % 2 == 0 else ("hand", "pipeline"):
                cpu0 = _children_cpu()
                if side == "pipeline":
                    before = len(ctx.windows)
                    res = spec.pipeline(ctx, clients, seconds, piped[-1] if piped else None)
                    piped.append(res.tps)
                    piped_cpu.append((_children_cpu() - cpu0) / max(res.processed, 1) * 1e6)
                    disturbed += sum(1 for w in ctx.windows[before:] if w.quiet is False)
                else:
                    summary = hand_run(ctx, spec, clients, seconds)
                    hand.append(summary["tps"])
                    hand_cpu.append((_children_cpu() - cpu0) / max(summary.get("processed", 1), 1) * 1e6)
    finally:
        if spec.cleanup is not None:
            spec.cleanup(ctx)
    p, h = statistics.median(piped), statistics.median(hand)
    # Per-round ratios pair runs made seconds apart, so a slow spell of the shared machine cancels out.
    paired = statistics.median(a / b for a, b in zip(piped, hand, strict=True))
    return {
        "pipeline_tps": piped,
        "hand_tps": hand,
        "pipeline_median": p,
        "hand_median": h,
        "ratio": p / h,
        "paired_ratio": paired,
        "disturbed_pipeline_windows": disturbed,
        "pipeline_client_cpu_us": piped_cpu,
        "hand_client_cpu_us": hand_cpu,
        "client_cpu_ratio": statistics.median(piped_cpu) / statistics.median(hand_cpu),
    }


def report(result: dict[str, Any]) -> str:
    """The comparison as text."""
    lines = [
        f"pgbench through the pipeline vs by hand on {result['engine']} ({result['scale']} catalogue), {result.get('clients')} clients/threads, "
        f"{result['seconds']} s per run, {result['rounds']} rounds (alternating which side goes first)"
    ]
    for name, r in result["scripts"].items():
        lines.append(f"\n{name}")
        lines.append(f"  {'round':<7}{'pipeline tps':>14}{'by hand tps':>14}{'ratio':>8}")
        for i, (p, h) in enumerate(zip(r["pipeline_tps"], r["hand_tps"], strict=True), 1):
            lines.append(f"  {i:<7}{p:>14,.1f}{h:>14,.1f}{p / h:>8.3f}")
        lines.append(f"  {'median':<7}{r['pipeline_median']:>14,.1f}{r['hand_median']:>14,.1f}{r['paired_ratio']:>8.3f}")
        lines.append(
            f"  pipeline / by hand: {r['ratio']:.3f} (medians), {r['paired_ratio']:.3f} (median of per-round ratios); "
            f"{r['disturbed_pipeline_windows']} pipeline window(s) disturbed by other load"
        )
        lines.append(
            f"  pgbench CPU per transaction: pipeline {statistics.median(r['pipeline_client_cpu_us']):.1f} µs, by hand "
            f"{statistics.median(r['hand_client_cpu_us']):.1f} µs (ratio {r['client_cpu_ratio']:.3f})"
        )
    lines.append(
        "\n1.000 means the harness costs nothing; the pipeline adds a sampled per-transaction log (-l --sampling-rate), -P progress, "
        "and for updates the counters read around the run"
    )
    return "\n".join(lines)
