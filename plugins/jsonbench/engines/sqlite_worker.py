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
    {"op": "close"}                                      -> {"ok": true}, then the worker exits
    (any failure)                                        -> {"ok": false, "error": "...", "type": "SQLError"}

``time`` measures each run of the statement here, with ``time.perf_counter_ns`` around executing
it and fetching every row, so no pipe, JSON or process switch is inside the measured time.
With ``rollback`` each run happens inside a savepoint that is rolled back after the clock stops,
so an UPDATE sees the same data on every run. Blobs in results come back as
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

    def op_time(self, req: dict[str, Any]) -> dict[str, Any]:
        sql, params = req["sql"], _bindings(req.get("params"))
        repeat = int(req.get("repeat", 1))
        rollback = bool(req.get("rollback", False))
        seconds: list[float] = []
        first: list[list[Any]] | None = None
        changes = 0
        clock = time.perf_counter_ns
        for _ in range(repeat):
            if rollback:
                self.conn.execute("SAVEPOINT jsonbench_timed")
            try:
                t0 = clock()
                rows = [list(row) for row in self.conn.execute(sql, params)]
                elapsed = clock() - t0
                changes = self.conn.changes()
            finally:
                if rollback:
                    self.conn.execute("ROLLBACK TO jsonbench_timed; RELEASE jsonbench_timed")
            seconds.append(elapsed / 1e9)
            if first is None:
                first = rows
        return {"seconds": seconds, "rows": [[_jsonable(v) for v in r] for r in (first or [])], "changes": changes}


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
