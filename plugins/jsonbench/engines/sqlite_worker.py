"""The SQLite worker: runs statements and times them inside one SQLite build's own Python.

Started by :class:`jsonbench.engines.sqlite_apsw.SqliteSession` as
``<venv>/bin/python -I sqlite_worker.py --workdir DIR``, where the venv holds exactly one apsw
(and so one SQLite) version. It imports only the standard library and apsw, because it runs in
that venv and not in the project's.

It holds one in-memory database for its whole life and speaks JSON lines: one request per line
on stdin, one response per line on stdout (nothing else is ever written to stdout)::

    {"op": "facts"}                                      -> {"ok": true, "facts": {...}}
    {"op": "execute", "sql": "...", "params": {...}}     -> {"ok": true, "rows": [[...], ...], "changes": n}
    {"op": "time", "sql": "...", "params": {...},
     "repeat": 5, "rollback": false}                     -> {"ok": true, "seconds": [...], "rows": [...], "changes": n}
    {"op": "time_many", "statements": [{"sql": ..., "params": ...}, ...],
     "repeat": 5, "rollback": false}                     -> {"ok": true, "seconds": [[...], ...], "rows": [[...], ...]}
    {"op": "close"}                                      -> {"ok": true}, then the worker exits
    (any failure)                                        -> {"ok": false, "error": "...", "type": "SQLError"}

``time`` measures each run of the statement here, with ``time.perf_counter_ns`` around executing
it and fetching every row, so no pipe, JSON or process switch is inside the measured time.
With ``rollback`` each run happens inside a savepoint that is rolled back after the clock stops,
so an UPDATE sees the same data on every run. ``time_many`` runs several statements in rounds
(A, B, C, A, B, C, ...), so statements compared with each other (text vs JSONB, first vs last key)
see the same moments of a shared, noisy machine instead of one taking all of a busy spell. Blobs in results come back as
``{"$blob_hex": "..."}``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from typing import Any

import apsw  # the venv's own build: this is the SQLite version being measured


def _jsonable(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"$blob_hex": bytes(value).hex()}
    return value


def _bindings(params: Any) -> Any:
    """apsw takes a dict for named (``:name``) and a sequence for positional (``?``) parameters."""
    if params is None:
        return None
    if isinstance(params, dict):
        return params
    return tuple(params)


class Worker:
    """One connection to one in-memory database, and the operations of the protocol."""

    def __init__(self) -> None:
        self.conn = apsw.Connection(":memory:")

    def _run(self, sql: str, params: Any) -> list[list[Any]]:
        return [list(row) for row in self.conn.execute(sql, _bindings(params))]

    def op_facts(self, req: dict[str, Any]) -> dict[str, Any]:
        options = [row[0] for row in self.conn.execute("PRAGMA compile_options")]
        version = self.conn.execute("SELECT sqlite_version(), sqlite_source_id()").fetchall()[0]
        return {
            "facts": {
                "sqlite_version": version[0],
                "sqlite_source_id": version[1],
                "apsw_version": apsw.apsw_version(),
                "sqlite_lib_version": apsw.sqlite_lib_version(),
                "compile_options": options,
                "python_version": platform.python_version(),
                "python_implementation": platform.python_implementation(),
                "executable": sys.executable,
                "prefix": sys.prefix,
                "page_size": self.conn.execute("PRAGMA page_size").fetchall()[0][0],
                "cache_size": self.conn.execute("PRAGMA cache_size").fetchall()[0][0],
            }
        }

    def op_execute(self, req: dict[str, Any]) -> dict[str, Any]:
        rows = self._run(req["sql"], req.get("params"))
        return {"rows": [[_jsonable(v) for v in r] for r in rows], "changes": self.conn.changes()}

    def _timed_run(self, sql: str, params: Any, rollback: bool) -> tuple[float, list[list[Any]]]:
        """One run of ``sql``: seconds from the first step to the last row fetched, and the rows."""
        clock = time.perf_counter_ns
        if rollback:
            self.conn.execute("SAVEPOINT jsonbench_timed")
        try:
            t0 = clock()
            rows = [list(row) for row in self.conn.execute(sql, params)]
            elapsed = clock() - t0
        finally:
            if rollback:
                self.conn.execute("ROLLBACK TO jsonbench_timed; RELEASE jsonbench_timed")
        return elapsed / 1e9, rows

    def op_time(self, req: dict[str, Any]) -> dict[str, Any]:
        sql, params = req["sql"], _bindings(req.get("params"))
        rollback = bool(req.get("rollback", False))
        seconds: list[float] = []
        first: list[list[Any]] | None = None
        for _ in range(int(req.get("repeat", 1))):
            elapsed, rows = self._timed_run(sql, params, rollback)
            seconds.append(elapsed)
            if first is None:
                first = rows
        return {"seconds": seconds, "rows": [[_jsonable(v) for v in r] for r in (first or [])], "changes": self.conn.changes()}

    def op_time_many(self, req: dict[str, Any]) -> dict[str, Any]:
        stmts = [(st["sql"], _bindings(st.get("params"))) for st in req["statements"]]
        rollback = bool(req.get("rollback", False))
        seconds: list[list[float]] = [[] for _ in stmts]
        first: list[list[list[Any]] | None] = [None for _ in stmts]
        for _ in range(int(req.get("repeat", 1))):
            for i, (sql, params) in enumerate(stmts):
                elapsed, rows = self._timed_run(sql, params, rollback)
                seconds[i].append(elapsed)
                if first[i] is None:
                    first[i] = rows
        return {"seconds": seconds, "rows": [[[_jsonable(v) for v in r] for r in (f or [])] for f in first]}


def serve(stdin: Any, stdout: Any) -> None:
    """Answer requests until ``close`` or end of input."""
    worker = Worker()
    for line in stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            op = req.get("op")
            if op == "close":
                stdout.write(json.dumps({"ok": True}) + "\n")
                stdout.flush()
                break
            handler = getattr(worker, f"op_{op}", None)
            if handler is None:
                raise ValueError(f"unknown op {op!r}")
            resp = {"ok": True, **handler(req)}
        except Exception as exc:  # every failure goes back to the caller, who raises it there
            resp = {"ok": False, "error": str(exc), "type": type(exc).__name__}
        stdout.write(json.dumps(resp) + "\n")
        stdout.flush()
    worker.conn.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", help="folder for file-backed databases (the worker's working directory)")
    args = parser.parse_args()
    if args.workdir:
        os.chdir(args.workdir)
    serve(sys.stdin, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
