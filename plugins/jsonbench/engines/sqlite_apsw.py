"""SQLite through apsw: one virtual environment per SQLite version, statements run and timed there.

apsw's version tracks SQLite's (``apsw==3.46.1.0`` embeds SQLite 3.46.1), and one Python
environment holds one apsw, so every SQLite version of the matrix gets its own venv (see
:mod:`jsonbench.engines.sqlite_venv`), made by ``./bin/setup``; a version whose venv setup could not
make fails its own cell at provision, saying why, not the whole matrix.

A :class:`SqliteSession` starts the worker (:mod:`jsonbench.engines.sqlite_worker`) with that
venv's Python and talks JSON lines to it. The worker holds the in-memory database for the life of
the session and takes every timing itself, so the measured time never includes the pipe. An
in-memory database does not outlive its session: each workload opens its own and loads its data.

The "engine" handle is a private folder (for file-backed copies) plus the venv's Python. Nothing
runs between tasks, so teardown only stops a worker a killed task left behind and removes the folder.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonbench.engines.base import Engine, Handle, Session
from jsonbench.engines.sqlite_venv import MIN_VERSION, check_versions, install_failure, python_of, venv_dir, venv_ready, version_tuple
from jsonbench.errors import BenchmarkError, EngineUnavailable

WORKER = Path(__file__).with_name("sqlite_worker.py")


class SqliteWorkerError(BenchmarkError):
    """A statement failed in the worker, or the worker died; the message carries SQLite's own words."""


# -- the session ------------------------------------------------------------------------------------


def _quote_identifier(name: str | tuple[str, ...]) -> str:
    parts = (name,) if isinstance(name, str) else name
    return ".".join('"' + p.replace('"', '""') + '"' for p in parts)


def _decode(value: Any) -> Any:
    if isinstance(value, dict) and "$blob_hex" in value:
        return bytes.fromhex(value["$blob_hex"])
    return value


class SqliteSession(Session):
    """A worker process in one SQLite version's venv, holding one in-memory database.

    SQL files (``include/sql/<suite>/<name>.sql``) use SQLite's own ``:name`` parameters and
    ``{name}`` identifier placeholders, which this session quotes (a tuple becomes ``schema.table``).
    """

    def __init__(self, python: str | Path, workdir: str | Path, capabilities: dict[str, bool] | None = None) -> None:
        self.workdir = Path(workdir)
        self.capabilities = dict(capabilities or {})
        self._proc: subprocess.Popen[str] | None = subprocess.Popen(
            [str(python), "-I", str(WORKER), "--workdir", str(self.workdir)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
            cwd=str(self.workdir),
        )
        # A pid file lets teardown stop a worker whose task was killed before it could close it.
        self._pid_file = self.workdir / f"worker-{self._proc.pid}.pid"
        self._pid_file.write_text(str(self._proc.pid))

    # -- protocol ---------------------------------------------------------------------------

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        """Send one request and return the worker's answer; raise ``SqliteWorkerError`` on failure."""
        proc = self._proc
        if proc is None or proc.stdin is None or proc.stdout is None:
            raise SqliteWorkerError("the SQLite session is closed")
        try:
            proc.stdin.write(json.dumps({"op": op, **fields}) + "\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
        except BrokenPipeError:
            line = ""
        if not line:
            proc.wait(timeout=10)
            err = proc.stderr.read() if proc.stderr else ""
            raise SqliteWorkerError(f"the SQLite worker exited ({proc.returncode}) during {op!r}: {err.strip()[-2000:]}")
        resp = json.loads(line)
        if not resp.get("ok"):
            sql = fields.get("sql", "")
            raise SqliteWorkerError(f"{resp.get('type')}: {resp.get('error')}" + (f"\nin: {sql.strip()[:500]}" if sql else ""))
        return resp

    def facts(self) -> dict[str, Any]:
        """Exact SQLite and apsw versions, compile options and the venv's Python, from inside the worker."""
        return dict(self.request("facts")["facts"])

    def execute(self, sql: str, params: dict[str, Any] | list[Any] | None = None) -> list[tuple[Any, ...]]:
        """Run ``sql`` (one or more statements) and return the rows as tuples."""
        return [tuple(_decode(v) for v in row) for row in self.request("execute", sql=sql, params=params)["rows"]]

    def scalar(self, sql: str, params: dict[str, Any] | list[Any] | None = None) -> Any:
        rows = self.execute(sql, params)
        return rows[0][0] if rows and rows[0] else None

    def time(
        self, sql: str, params: dict[str, Any] | list[Any] | None = None, repeat: int = 5, rollback: bool = False
    ) -> tuple[list[float], list[tuple[Any, ...]]]:
        """Run ``sql`` ``repeat`` times inside the worker; return (seconds of each run, rows of the first run).

        ``rollback`` undoes each run after its clock stops (for UPDATEs that must see the same data each time).
        """
        resp = self.request("time", sql=sql, params=params, repeat=repeat, rollback=rollback)
        return [float(s) for s in resp["seconds"]], [tuple(_decode(v) for v in row) for row in resp["rows"]]

    def time_many(
        self, statements: Sequence[tuple[str, dict[str, Any] | list[Any] | None]], repeat: int = 5, rollback: bool = False
    ) -> tuple[list[list[float]], list[list[tuple[Any, ...]]]]:
        """Time several statements in interleaved rounds inside the worker (A, B, A, B, ...).

        Returns (seconds of each run, per statement; rows of each statement's first run). Use it for
        statements whose times are compared, so a busy spell of the machine hits all of them alike.
        """
        resp = self.request(
            "time_many", statements=[{"sql": sql, "params": params} for sql, params in statements], repeat=repeat, rollback=rollback
        )
        seconds = [[float(x) for x in runs] for runs in resp["seconds"]]
        rows = [[tuple(_decode(v) for v in row) for row in result] for result in resp["rows"]]
        return seconds, rows

    # -- SQL files ------------------------------------------------------------------------------

    def sql(self, suite: str, name: str, **identifiers: str | tuple[str, ...]) -> str:
        """The text of ``include/sql/<suite>/<name>.sql`` with ``{identifiers}`` bound and quoted."""
        from jsonbench.sqlfiles import load_sql

        return load_sql(suite, name).format(**{k: _quote_identifier(v) for k, v in identifiers.items()})

    def run_file(self, suite: str, name: str, params: dict[str, Any] | None = None, **identifiers: str | tuple[str, ...]) -> None:
        """Run every statement of ``include/sql/<suite>/<name>.sql`` (as :meth:`PostgresSession.run_file`)."""
        self.execute(self.sql(suite, name, **identifiers), params)

    def query_file(
        self, suite: str, name: str, params: dict[str, Any] | None = None, **identifiers: str | tuple[str, ...]
    ) -> list[tuple[Any, ...]]:
        """Run a SQL file and return its rows (as :meth:`PostgresSession.query_file`)."""
        return self.execute(self.sql(suite, name, **identifiers), params)

    def time_file(
        self,
        suite: str,
        name: str,
        params: dict[str, Any] | None = None,
        repeat: int = 5,
        rollback: bool = False,
        **identifiers: str | tuple[str, ...],
    ) -> tuple[list[float], list[tuple[Any, ...]]]:
        return self.time(self.sql(suite, name, **identifiers), params, repeat=repeat, rollback=rollback)

    def fingerprint(self) -> str:
        """Per table of the main database (by name): its rows, sorted as text, all hashed together (sha256). SQLite has
        no hash function of its own, so the rows cross to this process once."""
        import hashlib

        h = hashlib.sha256()
        for (name,) in self.execute("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"):
            h.update(f"{name}\n".encode())
            for row in sorted(repr(r) for r in self.execute(f"SELECT * FROM {_quote_identifier(str(name))}")):
                h.update(row.encode())
        return h.hexdigest()

    def file_path(self, name: str) -> str:
        """A path in the engine's private folder, for a file-backed database (removed at teardown)."""
        return str(self.workdir / name)

    def drop_file(self, name: str) -> None:
        """Remove a file-backed database made with :meth:`file_path` (detach it first), and its journals."""
        for suffix in ("", "-journal", "-wal", "-shm"):
            Path(self.file_path(name) + suffix).unlink(missing_ok=True)

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            if proc.poll() is None and proc.stdin is not None:
                proc.stdin.write(json.dumps({"op": "close"}) + "\n")
                proc.stdin.flush()
            proc.wait(timeout=10)
        except (BrokenPipeError, OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait(timeout=10)
        finally:
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()
            self._pid_file.unlink(missing_ok=True)


# -- the adapter ------------------------------------------------------------------------------------


@dataclass
class SqliteHandle(Handle):
    """The engine's folder (file-backed copies, worker pid files) and the venv whose Python runs the worker."""

    python: str = ""
    venv: str = ""
    package: str = ""
    version: str = ""
    #: What the worker reported at provision (exact SQLite and apsw versions, compile options).
    facts: dict[str, Any] = field(default_factory=dict)


class SqliteApsw(Engine[SqliteHandle, "SqliteSession"]):
    """One SQLite version, as the apsw build pinned in the matrix (``backends: {apsw: {package: ...}}``)."""

    family = "sqlite"
    backend = "apsw"
    handle_type = SqliteHandle

    @property
    def package(self) -> str:
        return str(self.options.get("package") or f"apsw=={self.version}.0")

    def check(self) -> None:
        """Refuse, before anything starts, a version without JSONB or a pin that does not match it.

        A venv that setup could not make is *not* refused here: that version's cell fails at
        provision (saying why), and every other cell of the run still runs.
        """
        check_versions(self.cell.engine_id, self.version, self.package)

    def handle_for(self) -> SqliteHandle:
        venv = venv_dir(self.version, self.package)
        return SqliteHandle(
            workdir=str(self.workdir), python=str(python_of(venv)), venv=str(venv), package=self.package, version=self.version
        )

    def provision(self) -> SqliteHandle:
        self.check()
        if not venv_ready(self.version, self.package):
            why = install_failure(self.version, self.package)
            raise EngineUnavailable(
                f"SQLite {self.version}: no venv with {self.package} at {venv_dir(self.version, self.package)}; "
                + (f"./bin/setup could not make it: {why}" if why else "run ./bin/setup")
            )
        handle = self.handle_for()
        Path(handle.workdir).mkdir(parents=True)
        try:
            with self.session(handle) as s:
                found = s.facts()
            if found["sqlite_version"] != self.version:
                raise EngineUnavailable(f"SQLite {self.version}: the venv {handle.venv} runs SQLite {found['sqlite_version']}")
            handle.facts = found
        except BaseException:
            self.teardown(handle)
            raise
        return handle

    def facts(self, handle: SqliteHandle) -> dict[str, Any]:
        found = handle.facts
        if not found:
            with self.session(handle) as s:
                found = s.facts()
        return {
            "version": found["sqlite_version"],
            "build": f"apsw {found['apsw_version']} from PyPI ({self.package}), Python {found['python_version']}",
            "configure": "; ".join(found["compile_options"]),
            "data_checksums": None,
            "settings": {},
            "capabilities": capabilities(found["sqlite_version"]),
            "backend": self.backend,
            "sqlite_source_id": found["sqlite_source_id"],
            "apsw_version": found["apsw_version"],
            "python_version": found["python_version"],
            "compile_options": found["compile_options"],
            "venv": handle.venv,
            "page_size": found.get("page_size"),
            "cache_size": found.get("cache_size"),
        }

    @contextmanager
    def session(self, handle: SqliteHandle) -> Iterator[SqliteSession]:
        python = Path(handle.python)
        if not python.exists():
            raise EngineUnavailable(f"SQLite {self.version}: no venv at {handle.venv}; run ./bin/setup")
        found = handle.facts or {}
        session = SqliteSession(python, handle.workdir, capabilities(found.get("sqlite_version", self.version)))
        try:
            yield session
        finally:
            session.close()

    def teardown(self, handle: SqliteHandle) -> None:
        workdir = Path(handle.workdir)
        for pid_file in workdir.glob("worker-*.pid"):
            _stop_worker(pid_file)
        shutil.rmtree(workdir, ignore_errors=True)

    def pids(self, handle: SqliteHandle) -> list[int]:
        """The live SQLite workers of this engine (each workload's session starts one)."""
        out = []
        for pid_file in Path(handle.workdir).glob("worker-*.pid"):
            try:
                out.append(int(pid_file.read_text().strip()))
            except (OSError, ValueError):
                continue
        return [p for p in out if Path(f"/proc/{p}").exists()]


def capabilities(version: str) -> dict[str, bool]:
    """What a SQLite version can do that workloads need."""
    v = version_tuple(version) or (0, 0, 0)
    return {"jsonb": v >= MIN_VERSION}


def _stop_worker(pid_file: Path) -> None:
    """Kill a worker a killed task left behind, after making sure the pid is still our worker."""
    try:
        pid = int(pid_file.read_text().strip())
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError):
        return
    if WORKER.name.encode() in cmdline and str(pid_file.parent).encode() in cmdline:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
