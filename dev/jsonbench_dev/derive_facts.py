"""Derive the catalogue's deterministic facts at each scale by running the suite's own SQL.

``jsonbench-dev derive-facts --build pg17 --products 20000,200000,1000000`` starts a
throwaway server of one pinned build (as the unprivileged ``postgres`` user when run as root), loads
the catalogue exactly as the suite does (``include/sql/catalogue/``: source, both designs, tags,
foreign key, indexes, VACUUM ANALYZE), and prints, per product count, what the reproduction bands
check as facts: the rows the fixed-parameter queries match (category 7 + tag 33, category 7 +
brand 120), the buffers their EXPLAIN (ANALYZE, BUFFERS) touch, heap sizes and average value sizes.
These are properties of the deterministic data and the engine's page layout, not of the machine:
the figures in ``catalogue.reproduction.json`` name this command as their source.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jsonbench import paths
from jsonbench.sqlfiles import statements

if TYPE_CHECKING:
    from psycopg import Connection, Cursor

FILES = (
    "source_function",
    "create_tables",
    "load_source",
    "load_doc",
    "load_rel",
    "load_tags",
    "add_foreign_key",
    "index_doc",
    "index_rel",
    "vacuum_analyze",
)
PARAMS = {"c": 7, "b": 120, "t": 33, "i": 42, "p": 50000}


def _sql(name: str) -> str:
    return (paths.SQL_DIR / "catalogue" / f"{name}.sql").read_text(encoding="utf-8")


def _fixed(script: str, params: dict[str, Any]) -> str:
    lines = [ln for ln in script.splitlines() if not ln.lstrip().startswith(("\\", "--"))]
    text = "\n".join(lines).strip().rstrip(";")
    return re.sub(r"(?<![:\w]):([A-Za-z_]\w*)", lambda m: str(params[m.group(1)]), text)


def _one(cur: Cursor[tuple[Any, ...]]) -> tuple[Any, ...]:
    """The row of a statement that returns exactly one."""
    row = cur.fetchone()
    assert row is not None
    return row


def _as_user(argv: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


def _facts_at(conn: Connection[tuple[Any, ...]], n: int) -> dict[str, Any]:
    """Load the catalogue at ``n`` products and read its facts: load time, rows and buffers of each fixed query, sizes and ratios."""
    t0 = time.perf_counter()
    for name in FILES:
        for stmt in statements(_sql(name)):
            conn.execute(stmt, {"products": n} if "%(products)s" in stmt else None)
    got: dict[str, Any] = {"load_seconds": round(time.perf_counter() - t0, 1)}
    conn.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
    for rel in ("products_doc", "products_rel", "product_tags"):
        conn.execute("SELECT pg_prewarm(%s)", (rel,))
    for script in ("tag_doc", "tag_rel", "cb_doc_btree", "cb_doc_gin", "cb_rel"):
        q = _fixed((paths.SQL_DIR / "catalogue" / "pgbench" / f"{script}.sql").read_text(encoding="utf-8"), {**PARAMS, "products": n})
        plan = _one(conn.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + q))[0][0]
        top = plan["Plan"]
        node = top
        while (
            node.get("Node Type") in {"Aggregate", "Limit", "Gather", "Gather Merge", "Sort", "Result"} and len(node.get("Plans", [])) == 1
        ):
            node = node["Plans"][0]
        got[script] = {
            "rows": node.get("Actual Rows", 0) * (node.get("Actual Loops", 1) or 1),
            "buffers": int(top.get("Shared Hit Blocks", 0)) + int(top.get("Shared Read Blocks", 0)),
        }
    doc, row, tag = _one(conn.execute(_sql("avg_sizes")))
    doc, row, tag = float(doc), float(row), float(tag)
    got["avg_doc_bytes"], got["avg_row_bytes"], got["avg_tag_row_bytes"] = doc, row, tag
    got["value_doc_over_row"] = doc / row
    sizes = {}
    for rel in ("products_doc", "products_rel", "product_tags"):
        h, toast, idx, total, keys, _ = _one(conn.execute(_sql("relation_storage"), {"relation": rel}))
        sizes[rel] = {"heap": h, "base_total": h + toast + keys}
    got["sizes"] = sizes
    got["heap_doc_over_rel"] = sizes["products_doc"]["heap"] / sizes["products_rel"]["heap"]
    rel_with_tags = sizes["products_rel"]["base_total"] + sizes["product_tags"]["base_total"]
    got["base_total_rel_with_tags_over_doc"] = rel_with_tags / sizes["products_doc"]["base_total"]
    got["tag_rel_over_doc_buffers"] = got["tag_rel"]["buffers"] / got["tag_doc"]["buffers"]
    return got


def derive(build: str, counts: list[int]) -> dict[str, Any]:
    import psycopg

    from jsonbench.engines.npm_builds import npm_build

    bindir = npm_build(build).bin_dir
    env = {**os.environ, "LD_LIBRARY_PATH": str(bindir.parent / "lib")}
    work = Path(tempfile.mkdtemp(prefix="jbfacts-", dir="/tmp"))
    os.chmod(work, 0o777)
    data, sock = work / "data", work / "sock"
    sock.mkdir()
    os.chmod(sock, 0o777)
    out: dict[str, Any] = {"build": build, "scales": {}}
    subprocess.run(
        _as_user([str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale"]),
        check=True,
        env=env,
        capture_output=True,
    )
    opts = f"-k {sock} -c listen_addresses='' -c shared_buffers=1GB -c maintenance_work_mem=256MB -c max_wal_size=4GB -c autovacuum=off"
    subprocess.run(
        _as_user([str(bindir / "pg_ctl"), "-D", str(data), "-o", opts, "-w", "start", "-l", str(work / "log")]),
        check=True,
        env=env,
        capture_output=True,
    )
    try:
        with psycopg.connect(host=str(sock), user="postgres", dbname="postgres", autocommit=True) as conn:
            out["version"] = _one(conn.execute("SHOW server_version"))[0]
            for n in counts:
                got = _facts_at(conn, n)
                out["scales"][n] = got
                print(json.dumps({n: got}, default=float), flush=True)
    finally:
        subprocess.run(_as_user([str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]), env=env, capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    return out


def main(args: argparse.Namespace) -> int:
    """The command: the facts as JSON, per product count."""
    print(json.dumps(derive(args.build, [int(x) for x in args.products.split(",")]), indent=1, default=float))
    return 0
