"""``jsonbench compare``: one run of ``jsonb_benchmark_compare`` with ``airflow dags test``, then its verdict table.

The parameters are checked first (:func:`jsonbench.compare.params.resolve_comparison`), so a bad one fails here,
naming the field, before Airflow starts. The run's log goes to a file; each start is printed as it ends.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from jsonbench import paths

DAG_ID = "jsonb_benchmark_compare"
_TASK_RE = re.compile(r"\[DAG TEST\] (starting|end task) task_id=(\S+) map_index=(-?\d+)")
_FINISHED_RE = re.compile(r"DagRun Finished: dag_id=\S+ logical_date=.*?run_id=(\S+?), .*?state=(\w+)")


def parse_settings(items: list[str] | None, field: str) -> dict[str, str]:
    """``["work_mem=4MB", ...]`` as a dict (``SystemExit`` naming the option on an item without ``=``)."""
    out = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise SystemExit(f"{field}: expected name=value, got {item!r}")
        out[name.strip()] = value.strip()
    return out


def conf_of(
    a: str,
    b: str,
    *,
    suites: list[str],
    scale: str | None = None,
    pairs: list[int] | int = 10,
    margin: float | None = None,
    seed: int = 0,
    workloads: list[str] | None = None,
    a_settings: dict[str, str] | None = None,
    b_settings: dict[str, str] | None = None,
    results_dir: str | None = None,
    hardware_label: str | None = None,
    backend: str | None = None,
) -> dict[str, Any]:
    """The DAG run's parameters from the command line's values (unset ones left out: the DAG's defaults apply)."""
    conf: dict[str, Any] = {
        "a": {"engine": a, "settings": dict(a_settings or {})},
        "b": {"engine": b, "settings": dict(b_settings or {})},
        "suites": list(suites),
        "pairs": pairs[0] if isinstance(pairs, list) and len(pairs) == 1 else pairs,
        "seed": seed,
    }
    extra = {
        "scale": scale,
        "margin": margin,
        "workloads": workloads,
        "results_dir": results_dir,
        "hardware_label": hardware_label,
        "backend": backend,
    }
    conf.update({k: v for k, v in extra.items() if v is not None})
    if results_dir is not None:
        conf["results_dir"] = str(Path(results_dir).expanduser().resolve())
    return conf


def verdict_table(rows: list[dict[str, Any]]) -> str:
    """The comparison's rows as a plain-text table: timed and sampled metrics, then the facts that differ."""
    from jsonbench.compare.page import precision_lines
    from jsonbench.history.stats.paired import PRECISION, half_width

    lines = [f"{'metric':<58} {'B/A':>7} {'interval':>17} {'+/-':>6} {'margin':>7} {'pairs':>5}  verdict"]
    for r in rows:
        if r["metric_kind"] == "deterministic":
            continue
        name = f"{r['workload']}/{r['variant']}/{r['metric']}"
        lo, hi = r.get("interval_low"), r.get("interval_high")
        interval, hw = "none", None
        if lo is not None and hi is not None and math.isfinite(lo) and math.isfinite(hi):
            interval, hw = f"[{lo:.3f}, {hi:.3f}]", half_width((lo, hi))
        est = f"{r['estimate']:.3f}" if r.get("estimate") is not None else ""
        need = f" (about {r['pairs_needed']} pairs)" if r.get("pairs_needed") else ""
        spread = f"{hw:6.1%}" if hw is not None else ""
        lines.append(f"{name:<58} {est:>7} {interval:>17} {spread:>6} {r['margin']:7.1%} {r['pairs_used']:>5}  {r['verdict']}{need}")
    lines += precision_lines(rows, PRECISION)
    facts = [r for r in rows if r["metric_kind"] == "deterministic"]
    same = sum(1 for r in facts if r["verdict"] == "same")
    lines.append(f"deterministic facts: {same} of {len(facts)} the same in A and B")
    lines += [f"  {r['fact']}" for r in facts if r["verdict"] != "same"]
    if rows:
        dropped = json.loads(rows[0].get("dropped") or "{}")
        lines += [f"pair {k} dropped: {v}" for k, v in dropped.items()]
    return "\n".join(lines)


def compare_command(a: str, b: str, *, suites: list[str], log_path: Path | None = None, quiet: bool = False, **options: Any) -> int:
    """``jsonbench compare --a A --b B --suites S [--scale] [--pairs N ...] [--margin] [--seed] [--workloads] [--a-setting
    name=value ...] [--b-setting ...] [--results-dir] [--hardware-label] [--backend]``: :func:`conf_of`'s keywords."""
    return run_comparison(conf_of(a, b, suites=suites, **options), log_path=log_path, quiet=quiet)


def run_comparison(conf: dict[str, Any], log_path: Path | None = None, quiet: bool = False) -> int:
    """Run the comparison once (``airflow dags test``) and print its verdict table; the exit status is the run's (0: success)."""
    from jsonbench.compare.params import resolve_comparison
    from jsonbench.compare.publish import read_comparisons
    from jsonbench.errors import ConfigError

    try:
        cfg = resolve_comparison(conf)  # a bad parameter fails here, naming the field, before Airflow starts
    except ConfigError as exc:
        print(f"jsonbench compare: {exc}", file=sys.stderr)
        return 2
    log_dir = Path(os.environ.get("AIRFLOW_HOME", paths.PROJECT_ROOT / ".airflow")) / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_path or log_dir / f"compare-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.log"
    argv = [str(Path(sys.executable).parent / "airflow"), "dags", "test", DAG_ID, "-c", json.dumps(conf)]
    if not quiet:
        print(f"comparing A {cfg.a.label} with B {cfg.b.label}: {', '.join(cfg.suites)} at {cfg.run.scale}, "
              f"pairs {[s.pairs for s in cfg.stages]}; full log: {log_path}", flush=True)  # fmt: skip
    t0 = time.perf_counter()
    run_id, state = None, "unknown"
    began: dict[tuple[str, str], float] = {}
    with (
        open(log_path, "w", encoding="utf-8") as log,
        subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1) as proc,
    ):
        assert proc.stdout is not None
        for line in proc.stdout:
            log.write(line)
            m = _TASK_RE.search(line)
            if m:
                what, task_id, idx = m.groups()
                if what == "starting":
                    began[(task_id, idx)] = time.perf_counter()
                elif not quiet:
                    took = time.perf_counter() - began.get((task_id, idx), time.perf_counter())
                    label = task_id + (f"[{idx}]" if idx != "-1" else "")
                    print(f"  {time.perf_counter() - t0:7.1f}s  {label:<32} {took:7.1f}s", flush=True)
            f = _FINISHED_RE.search(line)
            if f:
                run_id, state = f.group(1), f.group(2)
        rc = proc.wait()
    rows = [r for r in read_comparisons(cfg.run.results_dir, cfg.run.hardware_label).to_pylist() if r["comparison_id"] == run_id]
    print(verdict_table(rows) if rows else f"no comparison rows for run {run_id}; see {log_path}")
    if rows:
        from jsonbench.compare.publish import pair_time, read_starts
        from jsonbench.dataset.schema import run_key

        spent = pair_time(read_starts(cfg.run.results_dir, str(run_id), cfg.run.hardware_label))
        print(f"pairs: {spent['pairs']} started, {spent['seconds']:.0f} s of engine cells, {spent['per_pair']:.1f} s a pair")

        print(f"page: {Path(cfg.run.results_dir) / 'report' / f'compare-{run_key(str(run_id))}.html'}")
    print(f"run {run_id}: {state} in {time.perf_counter() - t0:.0f} s")
    return 0 if state == "success" and rc == 0 else 1
