"""Benchmark command: does a server restart move a cell's figures as much as a fresh engine does?

``jsonbench-dev restart-check --engine postgres-17 --suite json_vs_jsonb --scale laptop --fresh 3 --restarts 3``
provisions ``--fresh`` engines one after another (each a new initdb and load, as a night's cell is), and inside each
runs every workload of the suite ``--restarts`` times through the DAG's own task code (``tasks.run_workload``), the
server stopped and started again between rounds (:meth:`Engine.restart`: same data folder and page cache; new
processes, new shared memory). Per timed series (the log of the statistic drift tests: the best repetition of a
duration or rate) it splits the spread of the rounds' figures into *between restarts* of one engine (pooled inside
each) and *between fresh engines* beyond that (method of moments, :func:`jsonbench.history.noise.levels`), and prints
the medians per suite, with the mean shift of each round against the first (which alone follows the load).

Why it matters. On the reference machine type the spread between engine starts (11-21 % a series) dominates what a
night measures, and a cell's figures may rest on two or three starts. A restart costs seconds,
a second load minutes. If restarts move the figures as much as fresh engines do, the starts' noise lives in the
processes (memory layout, shared memory) and a cell can split its repetitions across restarts for free; if they move
them much less, it lives in the data or the load, and only a second load replicates it.

A benchmark, not a test: it asserts nothing. ``--out FILE`` keeps every round's figures as JSON (commit it under
``recorded/restarts/`` so the finding can be derived again).
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from jsonbench.cli import UsageError

#: The shortest useful design: two restarts of two engines.
MIN_ROUNDS = 2


def _figures(results_dir: str, run_id: str, cell_id: str, workload: str) -> list[dict[str, Any]]:
    """The staged measurements of ``workload`` (its last record) as plain rows, with whether a window was disturbed."""
    from jsonbench.dataset.staging import Staging

    recs = [r for r in Staging(results_dir, run_id).records(cell_id) if r.workload == workload]
    if not recs:
        return []
    rec = recs[-1]
    busy = any(w.get("quiet") is False for w in rec.windows)
    return [
        {
            "workload": m.workload,
            "variant": m.variant,
            "metric": m.metric,
            "unit": m.unit,
            "kind": m.kind,
            "samples": list(m.samples),
            "value": m.value,
            "disturbed": busy,
        }
        for m in rec.measurements
        if m.status == "ok"
    ]


def measure(engine_id: str, suite: str, scale: str, fresh: int, restarts: int) -> dict[str, Any]:
    """Every round's figures: ``{"rows": [{fresh, round, workload, variant, metric, unit, kind, samples, ...}], ...}``."""
    from jsonbench.host.facts import boot_id
    from jsonbench.orchestration import tasks
    from jsonbench.suites import get_suite
    from jsonbench_dev.handcheck import _provisioned

    rows: list[dict[str, Any]] = []
    restart_s: list[float] = []
    workloads = list(get_suite(suite).workloads)
    for f in range(fresh):
        with _provisioned({"engines": [engine_id], "suites": [suite], "scale": scale}, f"restart-check-{f}") as one:
            engine, handle = one.engine, one.handle
            for r in range(restarts):
                if r:
                    t0 = time.perf_counter()
                    handle = engine.restart(handle)
                    restart_s.append(time.perf_counter() - t0)
                for w in workloads:
                    tasks.run_workload(one.planned, one.cell.cell_id, handle.to_json(), w)
                    for row in _figures(one.results, one.cell.run.run_id, one.cell.cell_id, w):
                        rows.append({"fresh": f, "round": r, **row})
                print(f"fresh engine {f + 1} of {fresh}, round {r + 1} of {restarts}: done", flush=True)
    return {
        "engine_id": engine_id,
        "suite": suite,
        "scale": scale,
        "fresh": fresh,
        "restarts": restarts,
        "restart_seconds": [round(x, 3) for x in restart_s],
        "host_boot_id": boot_id(),
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "rows": rows,
    }


def summarize(data: dict[str, Any]) -> dict[str, Any]:
    """Per timed series the two levels; their medians, and each round's mean log shift against round 0."""
    from jsonbench.history.noise import statistic
    from jsonbench.history.stats import levels, log_of

    by: dict[tuple[str, str, str], dict[tuple[int, int], float]] = {}
    for row in data["rows"]:
        if row.get("kind") != "timed" or row.get("disturbed"):
            continue
        lv = log_of(statistic(row["unit"], row.get("value"), row.get("samples")))
        if lv is not None:
            by.setdefault((row["workload"], row["variant"], row["metric"]), {})[(row["fresh"], row["round"])] = lv
    restart_sd, fresh_sd, shares = [], [], []
    shift: dict[int, list[float]] = {}
    for points in by.values():
        keys = sorted(points)
        start, _, between, _ = levels([points[k] for k in keys], [str(f) for f, _ in keys])
        if start is None or between is None:
            continue
        restart_sd.append(start)
        fresh_sd.append(between)
        total = start**2 + between**2
        shares.append(start**2 / total if total > 0 else 1.0)
        for f in {f for f, _ in keys}:
            base = points.get((f, 0))
            if base is None:
                continue
            for (ff, r), v in points.items():
                if ff == f and r:
                    shift.setdefault(r, []).append(v - base)
    med = statistics.median
    return {
        "series": len(restart_sd),
        "restart_sd": med(restart_sd) if restart_sd else None,
        "fresh_sd": med(fresh_sd) if fresh_sd else None,
        "restart_share": med(shares) if shares else None,
        "round_shift": {r: math.exp(statistics.fmean(v)) - 1 for r, v in sorted(shift.items())},
    }


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def render(data: dict[str, Any], s: dict[str, Any]) -> str:
    """The summary as lines of text: the two levels, the share a restart reproduces, the rounds' shifts."""
    took = statistics.median(data["restart_seconds"]) if data["restart_seconds"] else 0.0
    lines = [
        f"{data['suite']} on {data['engine_id']} at {data['scale']}, host {data.get('host_boot_id')}: {data['fresh']} fresh engines x "
        f"{data['restarts']} rounds, a restart between rounds (median {took:.2f} s)",
        f"  timed series with both levels: {s['series']}",
        f"  between restarts of one engine (median sd of the log): {_pct(s['restart_sd'])}",
        f"  between fresh engines, beyond the restarts:            {_pct(s['fresh_sd'])}",
        f"  share of a series' start-to-start variance a restart reproduces (median): {_pct(s['restart_share'])}",
        "  each round against the first, mean over series (the first alone follows the load): "
        + (", ".join(f"round {r + 1} {v:+.1%}" for r, v in s["round_shift"].items()) or "-"),
    ]
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    """The command: measure (or summarize a file ``--out`` wrote), then print the spreads side by side."""
    # A stop (SIGTERM, as `kill` sends) unwinds like Ctrl-C, so each engine is torn down and the host lease freed (seen:
    # a killed run left its server running and the lease held).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.summarize:
        data = json.loads(Path(args.summarize).read_text())
    else:
        if args.fresh < MIN_ROUNDS or args.restarts < MIN_ROUNDS:
            raise UsageError(f"--fresh and --restarts: at least {MIN_ROUNDS} each (a spread needs two)")
        data = measure(args.engine, args.suite, args.scale, args.fresh, args.restarts)
        if args.out:
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            Path(args.out).write_text(json.dumps(data, indent=1) + "\n")
    print(render(data, summarize(data)))
    return 0
