"""Benchmark of the report (a command, not a test): build the report of an N-run history, time it, check it opens offline.

::

    jsonbench-dev report-bench [--source RESULTS] [--runs 20] [--check] [--out DIR] [--browser]

The history is made from a real published run (the latest under ``--source``, default the project's
results folder; run the quick start first): it is published ``--runs`` times on consecutive nights
under its hardware label, every timing and rate with a few per cent of seeded noise, through the
dataset's own ``replace_run``. Validation rows are the source run's, re-keyed per night (fast), or,
with ``--check``, each night is checked for real by ``check_run`` (Great Expectations, drift
against the growing history; about half a minute per night). Then, in a fresh process as a user
would run it, ``python -m jsonbench.cli report --results-dir OUT`` is timed, and the page is checked
to reference nothing outside itself (no script, stylesheet, image or font from a URL). With
``--browser`` it is also opened in headless Chromium, inside a network namespace with no network
when ``unshare`` allows it, and the charts drawn are counted.
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from jsonbench.report.vendor import external_references

#: Timings and rates get noise; ratios ("x") do not (some are deterministic, e.g. planner estimates, and a noisy one would fail its band).
NOISY_UNITS = {"ms", "s", "ns", "ns/row", "tps"}


def make_history(source: Path, out: Path, runs: int, check: bool) -> list[str]:
    """Publish ``runs`` nights made from the latest run under ``source`` into ``out``; return their run ids."""
    import pyarrow as pa

    from jsonbench.dataset.publish import MEASUREMENTS, VALIDATIONS, partition_dir, read_dataset, replace_run
    from jsonbench.dataset.schema import MEASUREMENT_SCHEMA, VALIDATION_SCHEMA
    from jsonbench.report.model import pick_run

    m = read_dataset(source, MEASUREMENTS).to_pandas()
    src_run = pick_run(m, None)
    if src_run is None:
        raise SystemExit(f"no published run under {source}; run ./bin/quickstart (or python -m jsonbench.cli run --scale smoke) first")
    rows = read_dataset(source, MEASUREMENTS, run_id=src_run).drop_columns(["hardware_label", "run_date", "run_key"]).to_pylist()
    vrows = read_dataset(source, VALIDATIONS, run_id=src_run).drop_columns(["hardware_label", "run_date", "run_key"]).to_pylist()
    label = str(m[m["run_id"] == src_run]["hardware_label"].iloc[0])
    rng = random.Random(20)
    start = datetime.now(UTC).replace(hour=2, minute=0, second=0, microsecond=0) - timedelta(days=runs)
    ids: list[str] = []
    for n in range(runs):
        when = start + timedelta(days=n)
        run_id = f"scheduled__{when.isoformat()}"
        ids.append(run_id)
        night = []
        for r in rows:
            r = dict(r)
            r["run_id"], r["logical_date"] = run_id, when
            if r["unit"] in NOISY_UNITS and r["value"] is not None:
                f = 1 + rng.uniform(-0.05, 0.05)
                r["value"] = r["value"] * f
                r["samples"] = [s * f for s in (r["samples"] or [])]
            night.append(r)
        replace_run(partition_dir(out, MEASUREMENTS, label, when, run_id), pa.Table.from_pylist(night, schema=MEASUREMENT_SCHEMA))
        if check:
            from jsonbench.cell import RunRef
            from jsonbench.checks import ChecksFailed, check_run

            run = RunRef(run_id=run_id, logical_date=when.isoformat(), hardware_label=label, results_dir=str(out), scale=rows[0]["scale"])
            t = time.perf_counter()
            try:
                check_run(run)  # no plan: the cells are those of the copied rows
            except ChecksFailed as exc:
                print(f"  night {n + 1}: checks failed ({exc.summary['failed']})", flush=True)
            print(f"  night {n + 1}/{runs} checked in {time.perf_counter() - t:.1f} s", flush=True)
        elif vrows:
            night_v = [{**v, "run_id": run_id, "logical_date": when} for v in vrows]
            replace_run(partition_dir(out, VALIDATIONS, label, when, run_id), pa.Table.from_pylist(night_v, schema=VALIDATION_SCHEMA))
    return ids


#: How a headless Chromium is started to look at a page (as tests/browser.py starts it): no sandbox (root in a container),
#: nothing that reaches the network on its own.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def chromium_path() -> str | None:
    """Debian's chromium (``./bin/setup --dev`` installs it, as root), or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def open_in_browser(page: Path) -> dict[str, Any]:
    """Open the page in headless Chromium with no network (when possible); count the charts drawn."""
    chromium = chromium_path()
    if not chromium:
        return {"browser": "not installed"}
    profile = Path(tempfile.mkdtemp(prefix="jsonbench-chromium-"))
    argv = [
        chromium,
        *CHROMIUM_FLAGS,
        f"--user-data-dir={profile}",
        "--virtual-time-budget=30000",
        "--dump-dom",
        page.as_uri(),
    ]
    offline = shutil.which("unshare") is not None and subprocess.run(["unshare", "--net", "true"], capture_output=True).returncode == 0
    try:
        res = subprocess.run((["unshare", "--net"] if offline else []) + argv, capture_output=True, text=True, timeout=180)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    dom = res.stdout
    return {
        "browser": "no network (unshare --net)" if offline else "network not cut (no unshare)",
        "charts": len(re.findall(r"class=\"vl[ \"]", dom)),
        "drawn": dom.count('data-rendered="1"'),
        "failed": dom.count('data-rendered="error"'),
    }


def main(args: argparse.Namespace) -> int:
    """The command; exit 1 when the report did not build or the page references the network."""

    from jsonbench import paths

    source = paths.results_dir(args.source)
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="jsonbench-report-bench-")) / "results"
    try:
        t = time.perf_counter()
        ids = make_history(source, out, args.runs, args.check)
        print(f"history: {len(ids)} runs under {out} ({time.perf_counter() - t:.1f} s to make)")
        import os
        import resource

        load = os.getloadavg()[0]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        res = subprocess.run(
            [sys.executable, "-m", "jsonbench.cli", "report", "--results-dir", str(out)], capture_output=True, text=True, timeout=600
        )
        took = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if res.returncode != 0:
            print(res.stdout + res.stderr, file=sys.stderr)
            return 1
        page = out / "report" / "index.html"
        html = page.read_text(encoding="utf-8")
        ext = external_references(html)
        print(
            f"report of a {len(ids)}-run history: built in {took:.2f} s (a fresh process: python -m jsonbench.cli report), "
            f"{page.stat().st_size / 1e6:.2f} MB, {html.count('class=' + chr(39) + 'vl' + chr(39))} charts, target < 10 s; "
            f"CPU time {cpu:.2f} s (imports included), load average {load:.1f} on {os.cpu_count()} cores when it started"
        )
        print(f"offline: {'yes, no external resource' if not ext else 'NO: ' + '; '.join(ext[:5])}")
        if args.browser:
            print(f"browser: {open_in_browser(page)}")
        return 0 if not ext else 1
    finally:
        if not args.out:
            shutil.rmtree(out.parent, ignore_errors=True)
