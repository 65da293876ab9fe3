"""SQLite through apsw: one virtual environment per SQLite version, statements run and timed there.

apsw's version tracks SQLite's (``apsw==3.46.1.0`` embeds SQLite 3.46.1), and one Python
environment holds one apsw, so every SQLite version of the matrix gets its own venv under
``.cache/sqlite/<version>/<package>/``, created by ``./bin/setup`` (``install_all``) and, if it is
missing, by :meth:`SqliteApsw.provision` (a version whose build cannot be installed fails its own
cell, not the whole matrix).

A :class:`SqliteSession` starts the worker (:mod:`jsonbench.engines.sqlite_worker`) with that
venv's Python and talks JSON lines to it. The worker holds the in-memory database for the life of
the session and takes every timing itself, so the measured time never includes the pipe. An
in-memory database does not outlive its session: each workload opens its own and loads its data.

The "engine" handle is a private folder (for file-backed copies) plus the venv's Python. Nothing
runs between tasks, so teardown only stops a worker a killed task left behind and removes the folder.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from jsonbench import paths
from jsonbench.engines.base import Engine, Handle, Session, register
from jsonbench.errors import BenchmarkError, ConfigError, EngineUnavailable

#: The first SQLite release with JSONB (the jsonb_* functions and the binary format).
MIN_VERSION = (3, 45, 0)
WORKER = Path(__file__).with_name("sqlite_worker.py")
_PIN_RE = re.compile(r"^apsw==(\d+)\.(\d+)\.(\d+)\.(\d+)$")
_VERSION_RE = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")
STAMP = ".jsonbench-sqlite.json"
PIP_TIMEOUT_S = 600


class SqliteWorkerError(BenchmarkError):
    """A statement failed in the worker, or the worker died; the message carries SQLite's own words."""


# -- the venvs ------------------------------------------------------------------------------------


def venvs_root() -> Path:
    """Where the per-version venvs live (``$JSONBENCH_SQLITE_VENVS``, else ``.cache/sqlite``)."""
    return Path(os.environ.get("JSONBENCH_SQLITE_VENVS") or paths.PROJECT_ROOT / ".cache" / "sqlite")


def venv_dir(version: str, package: str) -> Path:
    """The venv of one SQLite version and apsw pin (a different pin never reuses another's venv)."""
    slug = re.sub(r"[^A-Za-z0-9.]+", "-", package).strip("-")
    return venvs_root() / version / slug


def _python(venv: Path) -> Path:
    return venv / "bin" / "python"


def _stamp(package: str, version: str) -> dict[str, str]:
    """What a finished venv records; a venv whose stamp differs is rebuilt."""
    return {"package": package, "sqlite_version": version, "base_python": f"{sys.version_info[0]}.{sys.version_info[1]}"}


def venv_ready(version: str, package: str) -> bool:
    """True when the venv exists, finished installing, and was made for this pin (no process started)."""
    venv = venv_dir(version, package)
    try:
        return json.loads((venv / STAMP).read_text()) == _stamp(package, version) and _python(venv).exists()
    except (OSError, ValueError):
        return False


def ensure_venv(version: str, package: str, log: Any = None) -> Path:
    """Create (once) the venv holding ``package`` and return its Python; raise ``EngineUnavailable`` on failure.

    Idempotent and cheap when the venv exists (one stamp file read). Creation takes a lock, so two
    tasks provisioning the same version at once build it once. Only PyPI is used, through pip, and
    only as a wheel (``--only-binary``): building apsw from source would fetch SQLite from elsewhere.
    """
    venv = venv_dir(version, package)
    if venv_ready(version, package):
        return _python(venv)
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f".{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if venv_ready(version, package):
            return _python(venv)
        shutil.rmtree(venv, ignore_errors=True)  # a half-made venv from an interrupted attempt
        if log:
            log(f"creating {venv} with {package}")
        steps = [
            [sys.executable, "-m", "venv", "--without-pip", str(venv)],
            [sys.executable, "-m", "pip", "--python", str(_python(venv)), "install", "--quiet", "--disable-pip-version-check",
             "--no-input", "--no-deps", "--only-binary", ":all:", package],
        ]
        for argv in steps:
            try:
                res = subprocess.run(argv, capture_output=True, text=True, timeout=PIP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                shutil.rmtree(venv, ignore_errors=True)
                raise EngineUnavailable(f"SQLite {version}: installing {package} into {venv} took over {PIP_TIMEOUT_S} s") from None
            if res.returncode != 0:
                shutil.rmtree(venv, ignore_errors=True)
                said = (res.stdout + res.stderr).strip()[-1500:]
                raise EngineUnavailable(f"SQLite {version}: could not install {package} into {venv} ({' '.join(argv[2:4])} exited {res.returncode}):\n{said}")
        res = subprocess.run([str(_python(venv)), "-I", "-c", "import apsw; print(apsw.sqlite_lib_version())"], capture_output=True, text=True, timeout=60)
        found = res.stdout.strip()
        if res.returncode != 0 or found != version:
            shutil.rmtree(venv, ignore_errors=True)
            raise EngineUnavailable(f"SQLite {version}: {package} installed but embeds SQLite {found or '?'} ({res.stderr.strip()[-500:]})")
        (venv / STAMP).write_text(json.dumps(_stamp(package, version)))
    return _python(venv)


def sqlite_engines(matrix: Any = None) -> list[tuple[str, str, str]]:
    """``(engine id, version, apsw package)`` of every SQLite engine in the matrix."""
    from jsonbench.matrix import load_matrix

    m = matrix or load_matrix()
    out = []
    for eid, eng in m.engines.items():
        if eng["family"] == SqliteApsw.family and SqliteApsw.backend in eng["backends"]:
            out.append((eid, str(eng["version"]), str((eng["backends"][SqliteApsw.backend] or {}).get("package", ""))))
    return out


def install_all(matrix: Any = None) -> list[str]:
    """Create the venv of every SQLite engine of the matrix (``./bin/setup``); return the ids that failed.

    A version that cannot be installed is reported and skipped, not fatal: its cell fails at
    provision time and every other cell still runs.
    """
    failed = []
    for eid, version, package in sqlite_engines(matrix):
        if venv_ready(version, package):
            print(f"{eid}: {package} ready in {venv_dir(version, package)}")
            continue
        try:
            _check_versions(eid, version, package)
            python = ensure_venv(version, package, log=lambda msg: print(f"{eid}: {msg}", flush=True))
            print(f"{eid}: {package} installed ({python})")
        except BenchmarkError as exc:
            failed.append(eid)
            print(f"warning: {eid}: {exc}", file=sys.stderr)
    return failed


def _version_tuple(version: str) -> tuple[int, int, int] | None:
    m = _VERSION_RE.match(version)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


def _check_versions(engine_id: str, version: str, package: str) -> None:
    """Refuse (naming the ``engines`` field) a version without JSONB or a pin that is not that version."""
    v = _version_tuple(version)
    if v is None:
        raise ConfigError("engines", f"engine {engine_id!r}: SQLite version {version!r} must look like 3.46.1")
    if v < MIN_VERSION:
        need = ".".join(map(str, MIN_VERSION))
        raise ConfigError("engines", f"engine {engine_id!r}: SQLite {version} has no JSONB (first in {need}); choose SQLite {need} or newer")
    pin = _PIN_RE.match(package)
    if pin is None:
        raise ConfigError("engines", f"engine {engine_id!r}: backends.apsw.package must pin an exact apsw, e.g. 'apsw==3.46.1.0', got {package!r}")
    if tuple(int(x) for x in pin.groups()[:3]) != v:
        raise ConfigError("engines", f"engine {engine_id!r}: {package} does not embed SQLite {version} (apsw's first three numbers are SQLite's)")


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

    def time(self, sql: str, params: dict[str, Any] | list[Any] | None = None, repeat: int = 5, rollback: bool = False) -> tuple[list[float], list[tuple[Any, ...]]]:
        """Run ``sql`` ``repeat`` times inside the worker; return (seconds of each run, rows of the first run).

        ``rollback`` undoes each run after its clock stops (for UPDATEs that must see the same data each time).
        """
        resp = self.request("time", sql=sql, params=params, repeat=repeat, rollback=rollback)
        return [float(s) for s in resp["seconds"]], [tuple(_decode(v) for v in row) for row in resp["rows"]]

    def time_many(self, statements: list[tuple[str, dict[str, Any] | list[Any] | None]], repeat: int = 5, rollback: bool = False) -> tuple[list[list[float]], list[list[tuple[Any, ...]]]]:
        """Time several statements in interleaved rounds inside the worker (A, B, A, B, ...).

        Returns (seconds of each run, per statement; rows of each statement's first run). Use it for
        statements whose times are compared, so a busy spell of the machine hits all of them alike.
        """
        resp = self.request("time_many", statements=[{"sql": sql, "params": params} for sql, params in statements], repeat=repeat, rollback=rollback)
        seconds = [[float(x) for x in runs] for runs in resp["seconds"]]
        rows = [[tuple(_decode(v) for v in row) for row in result] for result in resp["rows"]]
        return seconds, rows

    # -- SQL files ------------------------------------------------------------------------------

    def sql(self, suite: str, name: str, **identifiers: str | tuple[str, ...]) -> str:
        """The text of ``include/sql/<suite>/<name>.sql`` with ``{identifiers}`` bound and quoted."""
        from jsonbench.sqlfiles import load_sql

        return load_sql(suite, name).format(**{k: _quote_identifier(v) for k, v in identifiers.items()})

    def run_file(self, suite: str, name: str, params: dict[str, Any] | None = None, **identifiers: str | tuple[str, ...]) -> list[tuple[Any, ...]]:
        return self.execute(self.sql(suite, name, **identifiers), params)

    def time_file(self, suite: str, name: str, params: dict[str, Any] | None = None, repeat: int = 5, rollback: bool = False, **identifiers: str | tuple[str, ...]) -> tuple[list[float], list[tuple[Any, ...]]]:
        return self.time(self.sql(suite, name, **identifiers), params, repeat=repeat, rollback=rollback)

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


@register
class SqliteApsw(Engine):
    """One SQLite version, as the apsw build pinned in the matrix (``backends: {apsw: {package: ...}}``)."""

    family = "sqlite"
    backend = "apsw"

    @property
    def package(self) -> str:
        return str(self.options.get("package") or f"apsw=={self.version}.0")

    def check(self) -> None:
        """Refuse, before anything starts, a version without JSONB or a pin that does not match it."""
        _check_versions(self.cell.get("engine_id", self.version), self.version, self.package)

    def handle_for(self, workdir: Path) -> Handle:
        venv = venv_dir(self.version, self.package)
        return {"workdir": str(workdir), "python": str(_python(venv)), "venv": str(venv), "package": self.package, "version": self.version}

    def provision(self, workdir: Path) -> Handle:
        self.check()
        python = ensure_venv(self.version, self.package)  # EngineUnavailable fails this cell only
        root = Path(workdir)
        root.mkdir(parents=True)
        handle = self.handle_for(root)
        handle["python"] = str(python)
        try:
            with self.session(handle) as s:
                found = s.facts()
            if found["sqlite_version"] != self.version:
                raise EngineUnavailable(f"SQLite {self.version}: the venv {handle['venv']} runs SQLite {found['sqlite_version']}")
            handle["facts"] = found
        except BaseException:
            self.teardown(handle)
            raise
        return handle

    def facts(self, handle: Handle) -> dict[str, Any]:
        found = handle.get("facts")
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
            "venv": handle.get("venv"),
            "page_size": found.get("page_size"),
            "cache_size": found.get("cache_size"),
        }

    @contextmanager
    def session(self, handle: Handle) -> Iterator[SqliteSession]:
        python = Path(handle["python"])
        if not python.exists():
            raise EngineUnavailable(f"SQLite {self.version}: no venv at {handle.get('venv')}; provision the cell (or run ./bin/setup)")
        found = handle.get("facts") or {}
        session = SqliteSession(python, handle["workdir"], capabilities(found.get("sqlite_version", self.version)))
        try:
            yield session
        finally:
            session.close()

    def teardown(self, handle: Handle) -> None:
        workdir = Path(handle.get("workdir", "/nonexistent"))
        for pid_file in workdir.glob("worker-*.pid"):
            _stop_worker(pid_file)
        shutil.rmtree(workdir, ignore_errors=True)


def capabilities(version: str) -> dict[str, bool]:
    """What a SQLite version can do that workloads need."""
    v = _version_tuple(version) or (0, 0, 0)
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
