"""The harness-overhead benchmark for pgbench: one script through the pipeline vs the same script by hand.

``python -m jsonbench.cli pgbench-overhead`` provisions one catalogue cell through the driver
(``tasks.provision``: fresh server, catalogue loaded), then runs one read script alternately

* **through the pipeline**: the catalogue suite's own pgbench call (``suites.catalogue._pgbench``,
  as the ``reads`` workload runs it: per-transaction log in a private folder, parsed for
  percentiles), and
* **by hand**: the seed's command line, ``pgbench -n -c N -j N -T S -f script``, with the ``tps``
  line read from its output and nothing else,

against the same server with the same clients and duration, and prints both tps per round, their
medians and the ratio pipeline / hand (1.00 = the harness costs nothing). Rounds alternate which
side goes first, so a drift of the shared machine hits both alike. It is a benchmark, not a test.
"""

from __future__ import annotations

import re
import statistics
import subprocess
import tempfile
import time
from typing import Any

from jsonbench import pgbench, tasks
from jsonbench.engines.base import engine_for
from jsonbench.cell import Cell
from jsonbench.sqlfiles import sql_path
from jsonbench.suites import catalogue
from jsonbench.suites.base import WorkloadContext

_TPS_RE = re.compile(r"^tps = ([\d.]+)", re.M)


def by_hand(command: list[str], env: dict[str, str], script: str, clients: int, seconds: int, defines: dict[str, Any]) -> float:
    """tps of the seed's own command line (no log, no parsing beyond the ``tps`` line)."""
    argv = [*command, "-n", "-c", str(clients), "-j", str(clients), "-T", str(seconds), "-f", str(sql_path(catalogue.NAME, f"pgbench/{script}"))]
    for name, value in defines.items():
        argv += ["-D", f"{name}={value}"]
    res = subprocess.run(argv, capture_output=True, text=True, env=pgbench._env(env), timeout=seconds + 300)
    m = _TPS_RE.search(res.stdout)
    if res.returncode != 0 or not m:
        raise pgbench.PgbenchFailed(f"pgbench by hand failed ({res.returncode}): {res.stderr.strip()[-800:]}")
    return float(m.group(1))


def measure(engine: str = "postgres-17", script: str = "cb_rel", seconds: int = 5, rounds: int = 3, scale: str = "smoke") -> dict[str, Any]:
    """Run the comparison; returns per-round tps of both sides, their medians and the ratio."""
    if script not in catalogue.READ_SCRIPTS:
        raise ValueError(f"unknown read script {script!r}; one of {', '.join(catalogue.READ_SCRIPTS)}")
    with tempfile.TemporaryDirectory(prefix="jsonbench-pgbench-overhead-") as results:
        planned = tasks.plan({"scale": scale, "engines": [engine], "suites": [catalogue.NAME], "results_dir": results}, f"pgbench_overhead_{int(time.time())}", None)
        cell = Cell.from_json(planned["cells"][0])
        handle_json = tasks.provision(planned, cell.cell_id)
        try:
            eng = engine_for(cell)
            with eng.session(eng.load_handle(handle_json)) as session:
                ctx = WorkloadContext(cell=cell, session=session, workload="pgbench_overhead")
                catalogue.Catalogue()._prewarm(ctx)
                clients = pgbench.machine_clients(int(ctx.scale.get("clients", 4)))
                defines = {"products": int(ctx.scale["products"])}
                piped: list[float] = []
                hand: list[float] = []
                for i in range(rounds):
                    sides = ("pipeline", "hand") if i % 2 == 0 else ("hand", "pipeline")
                    for side in sides:
                        if side == "pipeline":
                            piped.append(catalogue._pgbench(ctx, script, clients, {"seconds": seconds}, defines=defines).tps)
                        else:
                            assert session.pgbench is not None
                            hand.append(by_hand(session.pgbench, session.pgbench_env, script, clients, seconds, defines))
        finally:
            tasks.teardown(planned, cell.cell_id, handle_json)
    p, h = statistics.median(piped), statistics.median(hand)
    # Per-round ratios pair runs made seconds apart, so a slow spell of the shared machine cancels out.
    paired = statistics.median(a / b for a, b in zip(piped, hand, strict=True))
    return {"engine": engine, "script": script, "seconds": seconds, "clients": clients, "scale": scale,
            "pipeline_tps": piped, "hand_tps": hand, "pipeline_median": p, "hand_median": h, "ratio": p / h, "paired_ratio": paired}


def report(result: dict[str, Any]) -> str:
    """The comparison as text."""
    lines = [f"pgbench script {result['script']} on {result['engine']} ({result['scale']} catalogue), {result['clients']} clients/threads, {result['seconds']} s per run"]
    lines.append(f"  {'round':<7}{'pipeline tps':>14}{'by hand tps':>14}{'ratio':>8}")
    for i, (p, h) in enumerate(zip(result["pipeline_tps"], result["hand_tps"], strict=True), 1):
        lines.append(f"  {i:<7}{p:>14,.1f}{h:>14,.1f}{p / h:>8.3f}")
    lines.append(f"  {'median':<7}{result['pipeline_median']:>14,.1f}{result['hand_median']:>14,.1f}{result['paired_ratio']:>8.3f}")
    lines.append(f"  pipeline / by hand: {result['ratio']:.3f} (medians), {result['paired_ratio']:.3f} (median of per-round ratios)")
    lines.append("  1.000 means the harness costs nothing; what it adds is pgbench's per-transaction log (-l) for the percentiles")
    return "\n".join(lines)
