"""Faults injected into real processes of a real DAG run: a run in the background, and ways to find its parts.

* :class:`DagRun` runs ``airflow dags test jsonb_benchmark_matrix <logical date> -c CONF`` (or another DAG) in a
  background process (or, with ``again=RUN_ID``, ``python -m jsonbench.cli rerun RUN_ID``: the same run
  cleared and run again), keeps its log, and tells which tasks started and how each ended.
* :func:`postmasters` finds this session's PostgreSQL postmasters by executable and parent (never
  by command line), :func:`active_statement` asks one of them, through its own socket, what a
  client is running right now.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.leakcheck import Proc, Tracker

DAG_ID = "jsonb_benchmark_matrix"
_STARTED = re.compile(r"\[DAG TEST\] starting task_id=(\S+) map_index=(-?\d+)")
_RUN_ID = re.compile(r"<TaskInstance: \S+ (\S+) ")
_RUN_FINISHED = re.compile(r"DagRun Finished: dag_id=(\S+?), .*?run_id=(\S+?), .*?state=(\w+)")


@dataclass
class DagRun:
    """One ``airflow dags test`` process in the background."""

    env: dict[str, str]
    conf: dict[str, Any]
    logical_date: str
    log_path: Path
    again: str | None = None  # run this earlier run id again, as the same run (python -m jsonbench.cli rerun)
    dag_id: str = DAG_ID
    proc: subprocess.Popen[str] | None = None
    lines: list[str] = field(default_factory=list)
    _reader: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> DagRun:
        airflow = str(Path(sys.executable).parent / "airflow")
        argv = [airflow, "dags", "test", self.dag_id, self.logical_date, "-c", json.dumps(self.conf)]
        if self.again:
            argv = [sys.executable, "-m", "jsonbench.cli", "rerun", self.again, "--dag-id", self.dag_id]
        env = dict(self.env)
        if self.conf.get("engines"):  # the run's engines' task groups only: each other one is a skip, ~2.5 s of dags test
            env["JSONBENCH_HOST_ENGINES"] = ",".join(self.conf["engines"])
        self.env = env  # task_states and the rerun see the same DAG
        self.proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        return self

    def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        with open(self.log_path, "a", encoding="utf-8") as log:
            for line in self.proc.stdout:
                log.write(line)
                with self._lock:
                    self.lines.append(line)

    @property
    def log(self) -> str:
        with self._lock:
            return "".join(self.lines)

    def started(self) -> list[str]:
        """Task ids in the order they started."""
        return [m.group(1) for m in _STARTED.finditer(self.log)]

    def task_states(self) -> dict[str, str]:
        """Every task's state in the metadata database (mapped tasks as ``id[index]``), from ``airflow tasks states-for-dag-run``."""
        airflow = str(Path(sys.executable).parent / "airflow")
        res = subprocess.run(
            [airflow, "tasks", "states-for-dag-run", self.dag_id, self.run_id, "-o", "json"],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
        rows = json.loads(res.stdout[res.stdout.index("[") :])
        states: dict[str, str] = {}
        for r in rows:
            index = str(r.get("map_index", "-1"))
            states[r["task_id"] + (f"[{index}]" if index not in ("-1", "") else "")] = str(r["state"])
        return states

    def run_state(self) -> str | None:
        m = _RUN_FINISHED.search(self.log)
        return m.group(3) if m else None

    @property
    def run_id(self) -> str:
        """The run id, from the log (``dags test`` names a run after the moment it starts, not after its logical date)."""
        m = _RUN_ID.search(self.log)
        assert m, "the run has not started a task yet"
        return m.group(1)

    def wait(self, timeout: float = 1800) -> int:
        assert self.proc is not None
        try:
            rc = self.proc.wait(timeout=timeout)
        finally:
            if self._reader is not None:
                self._reader.join(timeout=30)
            if self.proc.stdout is not None:
                self.proc.stdout.close()
        return rc

    def kill(self) -> None:
        """kill -9 of the run's own process (under ``dags test`` the tasks run inside it)."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)

    def stop(self) -> None:
        """Make sure the process is gone (used in ``finally``)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.wait(timeout=60)


def postmasters(tracker: Tracker) -> list[Proc]:
    """This session's postmasters: a ``postgres`` executable whose parent is not one."""
    ours = tracker.processes()
    is_pg = {pid for pid, p in ours.items() if os.path.basename(p.exe.removesuffix(" (deleted)")) == "postgres"}
    return [ours[pid] for pid in sorted(is_pg) if ours[pid].ppid not in is_pg]


def pgbench_clients(tracker: Tracker) -> list[Proc]:
    return [p for p in tracker.processes().values() if os.path.basename(p.exe.removesuffix(" (deleted)")) == "pgbench"]


def active_statement(postmaster: Proc) -> str | None:
    """The statement a client of ``postmaster`` runs right now (None when every client is idle or it does not answer)."""
    import psycopg

    datadir = Path(postmaster.cwd.removesuffix(" (deleted)"))
    try:
        with psycopg.connect(
            host=str(datadir.parent), port=5432, user="bench", dbname="postgres", autocommit=True, connect_timeout=2
        ) as conn:
            row = conn.execute(
                "SELECT query FROM pg_stat_activity WHERE state = 'active' AND backend_type = 'client backend' "
                "AND pid <> pg_backend_pid() ORDER BY query_start LIMIT 1"
            ).fetchone()
    except psycopg.Error:
        return None
    return None if row is None else str(row[0])


def wait_for(condition: Callable[[], Any], timeout: float, what: str, every: float = 0.02) -> Any:
    """Poll ``condition`` until it returns something true; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(every)
