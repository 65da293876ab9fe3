"""Docker PostgreSQL: one throwaway container per cell, of a ``postgres:<major>``-compatible image.

The matrix names the image (``backends.docker.image``): ``jsonbench/postgres:<major>``, the embedded
backend's pinned builds packaged with the official image's entrypoint (built here by
``./bin/setup --docker``, see ``docker/``), ``jsonbench/postgres-debian:<major>`` (Debian's lz4-enabled
packages), or the official ``postgres:<major>`` where a registry is reachable: all three keep the same
contract, so this adapter does not care which.

**The Docker engine is reached through Airflow's Docker provider**: a
:class:`~airflow.providers.docker.hooks.docker.DockerHook` gives the API client (the docker SDK's
high-level models are used on top of it). The Airflow connection ``docker_conn_id``
(``backend_options.docker_conn_id``, else ``$JSONBENCH_DOCKER_CONN_ID``, else ``jsonbench_docker``;
an empty value means none) says which engine: ``backend_options.base_url`` when the matrix or run gives
one, else the connection's extra ``{"docker_url": ...}`` (DockerOperator's name for it), ``$DOCKER_HOST``,
or the local socket; when the connection also
names a registry (host, login, password: the provider's own meaning of a Docker connection), the
hook logs in there before an image is pulled. No connection defined is fine: the engine is then the
URL above and nothing is logged into. ``./bin/setup`` and ``docker-compose.yaml`` define the
connection for the local socket.

The container comes from :func:`container_spec`, a pure function of the cell, so tests can check
exactly what would be started without a Docker engine:

* the cell's server settings, scaled to this machine like the embedded engine's, as ``-c``
  arguments of ``postgres``; data checksums (and C locale, UTF8) through ``POSTGRES_INITDB_ARGS``;
* reachable only on ``127.0.0.1`` at a random host port, or, when ``backend_options.network``
  (or ``$JSONBENCH_DOCKER_NETWORK``) names a private Docker network, only on that network
  (what a worker that itself runs in a container uses) with no port published at all;
* a password generated per container, given to the container only: it is never logged, never
  stored in the handle (which crosses XCom); sessions read it back from the container's own
  configuration through the same Docker API;
* named and labelled after ``cell.identity`` (run, cell, engine folder), so :meth:`DockerPostgres.teardown`
  (and the DAG's sweep, through :meth:`DockerPostgres.handle_for`) finds the container even when the
  setup task died before returning its handle; teardown removes it with its data volume.

pgbench runs inside the container, the image's own (see :mod:`jsonbench.engines.docker_exec`, which
execs it through the same engine). For the quiet-window sampler, :meth:`DockerPostgres.pids` lists the
container's processes as host pids (``docker top``) and :meth:`DockerPostgres.cpu_seconds` reads the
container's cgroup CPU time (pgbench's exec'd runs included), from the cgroup file system when this host
sees it, else from the engine's stats.
"""

from __future__ import annotations

import logging
import os
import secrets
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonbench.host import facts as hostfacts
from jsonbench.cell import Cell
from jsonbench.engines.base import Engine, Handle, ResourceUsage
from jsonbench.engines.postgres_common import opened, scaled_settings, server_facts
from jsonbench.engines.postgres_session import PostgresSession
from jsonbench.errors import ConfigError, EngineUnavailable

log = logging.getLogger(__name__)

DB_NAME = "bench"
#: The Airflow connection naming the Docker engine (and optionally a registry), when the matrix names none.
DEFAULT_CONN_ID = "jsonbench_docker"
CLIENT_TIMEOUT_S = 120
#: How often the disk usage is measured with ``du`` inside the container (when the volume is not visible here).
DU_EVERY_S = 10.0
DB_USER = "bench"
PG_PORT = 5432
#: Socket folder of the official images: what pgbench inside the container connects through (unless the
#: server reports another one first in ``unix_socket_directories``).
CONTAINER_SOCKET_DIR = "/var/run/postgresql"
START_TIMEOUT_S = 180
LABEL = "io.jsonbench"
DEFAULT_SOCKET = "unix:///var/run/docker.sock"
EXEC_HELPER = Path(__file__).with_name("docker_exec.py")


@dataclass(frozen=True)
class DockerTarget:
    """Which Docker engine, and which Airflow connection (if any) the DockerHook logs into a registry with."""

    base_url: str
    conn_id: str | None  # the connection consulted (None: none configured)
    login_conn_id: str | None  # the same, when it names a registry to log into; else None
    source: str  # where base_url came from, for messages


def docker_conn_id(options: dict[str, Any]) -> str | None:
    """``backend_options.docker_conn_id``, else ``$JSONBENCH_DOCKER_CONN_ID``, else ``jsonbench_docker`` ("" = none)."""
    if "docker_conn_id" in options:
        return str(options["docker_conn_id"] or "") or None
    return os.environ.get("JSONBENCH_DOCKER_CONN_ID", DEFAULT_CONN_ID) or None


def _connection(conn_id: str) -> Any | None:
    """The Airflow connection, or None when it is not defined (or Airflow cannot be asked)."""
    try:
        from airflow.sdk import BaseHook
        from airflow.sdk.exceptions import AirflowNotFoundException
    except ImportError:  # no Airflow installed: plain defaults
        return None
    try:
        return BaseHook.get_connection(conn_id)
    except AirflowNotFoundException:
        return None


def docker_target(options: dict[str, Any], connection: Callable[[str], Any | None] = _connection) -> DockerTarget:
    """The engine URL and the connection: ``docker_url`` of the connection, ``base_url``, ``$DOCKER_HOST``, the socket."""
    conn_id = docker_conn_id(options)
    conn = connection(conn_id) if conn_id else None
    extra = (conn.extra_dejson or {}) if conn is not None else {}
    if options.get("base_url"):
        base_url, source = str(options["base_url"]), "backend_options.base_url"
    elif extra.get("docker_url"):
        base_url, source = str(extra["docker_url"]), f"connection {conn_id} (extra docker_url)"
    elif os.environ.get("DOCKER_HOST"):
        base_url, source = os.environ["DOCKER_HOST"], "$DOCKER_HOST"
    else:
        base_url, source = DEFAULT_SOCKET, "the local socket"
    login = conn_id if conn is not None and getattr(conn, "host", None) else None
    return DockerTarget(base_url=base_url, conn_id=conn_id if conn is not None else None, login_conn_id=login, source=source)


def docker_base_url(options: dict[str, Any]) -> str:
    """The Docker engine to talk to (see :func:`docker_target`)."""
    return docker_target(options).base_url


def docker_network(options: dict[str, Any]) -> str | None:
    """The private network the container joins instead of publishing a loopback port (None: loopback)."""
    return options.get("network") or os.environ.get("JSONBENCH_DOCKER_NETWORK") or None


def container_labels(cell: Cell) -> dict[str, str]:
    """Labels that let a teardown or a sweep find this cell's container by label alone."""
    return {
        f"{LABEL}.managed": "true",
        f"{LABEL}.run_id": cell.run.run_id,
        f"{LABEL}.cell_id": cell.cell_id,
        f"{LABEL}.workdir": cell.identity.name,
    }


def initdb_args(cell: Cell) -> str:
    """``POSTGRES_INITDB_ARGS``: the embedded engine's initdb choices (checksums per the matrix, C locale, UTF8)."""
    args = ["--encoding=UTF8", "--locale=C"]
    if cell.postgres is None or cell.postgres.data_checksums:
        args.append("--data-checksums")
    elif int(str(cell.version).split(".")[0]) >= 18:
        args.append("--no-data-checksums")  # 18 turned checksums on by default
    return " ".join(args)


def server_command(settings: dict[str, str]) -> list[str]:
    """The container's command: ``postgres -c name=value ...`` (the image's entrypoint runs it as postgres)."""
    command = ["postgres"]
    for name, value in settings.items():
        command += ["-c", f"{name}={value}"]
    return command


def container_spec(cell: Cell, password: str, settings: dict[str, str], network: str | None = None) -> dict[str, Any]:
    """Keyword arguments of ``DockerClient.containers.create`` for one cell (``run`` takes the same plus ``detach``).

    Pure: no Docker engine needed. The data directory is the image's anonymous volume, removed
    with the container (``remove(v=True)``); it is not a tmpfs, so WAL and checkpoints hit a disk
    as they do on the embedded engine. ``auto_remove`` is off so a server that fails to start
    leaves its log for the error message; teardown removes the container in every case.
    """
    spec: dict[str, Any] = {
        "image": cell.backend_options["image"],
        "command": server_command(settings),
        "name": cell.identity.name,
        "environment": {
            "POSTGRES_USER": DB_USER,
            "POSTGRES_DB": DB_NAME,
            "POSTGRES_PASSWORD": password,
            "POSTGRES_INITDB_ARGS": initdb_args(cell),
            "LC_ALL": "C",
        },
        "labels": container_labels(cell),
        "auto_remove": False,
        # Parallel query uses dynamic shared memory in /dev/shm; Docker's default 64 MB is too small.
        "shm_size": "1g",
    }
    if network:
        spec["network"] = network
        spec["ports"] = {}
    else:
        spec["ports"] = {f"{PG_PORT}/tcp": ("127.0.0.1", None)}  # loopback only, random free host port
    return spec


def _default_client(target: DockerTarget) -> Any:
    """A docker SDK client whose API connection is the Airflow DockerHook's (pinged; logged in when a registry is named)."""
    from airflow.providers.docker.hooks.docker import DockerHook

    import docker

    hook = DockerHook(docker_conn_id=target.login_conn_id, base_url=target.base_url, version="auto", timeout=CLIENT_TIMEOUT_S)
    # DockerClient is the high-level models over one APIClient (``client.api``): use the hook's.
    client = docker.DockerClient.__new__(docker.DockerClient)
    client.api = hook.get_conn()
    return client


@dataclass
class DockerHandle(Handle):
    """The cell's container (named and labelled after ``cell.identity``) and where the worker reaches it."""

    container: str = ""
    container_id: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    image: str = ""
    base_url: str = ""
    dbname: str = DB_NAME
    user: str = DB_USER
    network: str | None = None
    host: str | None = None
    port: int | None = None
    #: Where pgbench inside the container finds the server's socket (the server's first unix_socket_directories).
    socket_dir: str = CONTAINER_SOCKET_DIR
    settings_requested: dict[str, str] = field(default_factory=dict)
    settings_adjusted: dict[str, str] = field(default_factory=dict)


class DockerPostgres(Engine[DockerHandle, PostgresSession]):
    """A throwaway container of a ``postgres:<major>``-compatible image, reached through Airflow's DockerHook."""

    family = "postgres"
    backend = "docker"
    handle_type = DockerHandle

    #: Makes a Docker client for a :class:`DockerTarget` (by default through the DockerHook). Unit tests
    #: replace it with a stand-in; tests/docker/ run the real one.
    client_factory: Callable[[DockerTarget], Any] = staticmethod(_default_client)

    def __init__(self, cell: Cell) -> None:
        super().__init__(cell)
        self._target: DockerTarget | None = None
        self._client: Any = None
        self._du: tuple[float, int] = (0.0, 0)  # (when, bytes) of the last du inside the container

    @property
    def image(self) -> str:
        image = self.options.get("image")
        if not image:
            raise ConfigError(f"matrix.engines.{self.cell.engine_id}.backends.docker.image", "no image given for the docker backend")
        return str(image)

    @property
    def target(self) -> DockerTarget:
        """The engine and connection (resolved once per adapter: the connection is read once)."""
        if self._target is None:
            self._target = docker_target(self.options)
        return self._target

    @property
    def base_url(self) -> str:
        return self.target.base_url

    def client(self) -> Any:
        """A Docker client that has answered a ping (made once), or :class:`EngineUnavailable` saying where nobody answered."""
        if self._client is not None:
            return self._client
        target = self.target
        try:
            client = type(self).client_factory(target)
            client.ping()
        except Exception as exc:  # the hook raises AirflowException; the SDK DockerException, requests' errors, OSError
            via = f" (the URL comes from {target.source})" if target.source != "the local socket" else ""
            raise EngineUnavailable(
                f"Docker path selected (backend=docker) but no Docker engine answers at {target.base_url}: {_why_unreachable(target.base_url, exc)}{via}"
            ) from None
        self._client = client
        return client

    # -- contract -------------------------------------------------------------------------

    def check(self) -> None:
        """The matrix names an image, the engine answers, and a locally built image is there (nothing can pull it)."""
        import docker.errors

        image = self.image
        client = self.client()
        if image.startswith("jsonbench/"):
            try:
                client.images.get(image)
            except docker.errors.ImageNotFound:
                raise EngineUnavailable(
                    f"image {image} is not built on this Docker engine ({self.base_url}): ./bin/setup --docker builds it"
                ) from None

    def pgbench(self) -> list[str] | None:
        return self._pgbench_argv(self.cell.identity.name)

    def _pgbench_argv(self, name: str) -> list[str]:
        return [
            sys.executable,
            str(EXEC_HELPER),
            "--base-url",
            self.base_url,
            "--container",
            name,
            "--image",
            self.image,
            "--user",
            f"{os.getuid()}:{os.getgid()}",  # files it writes (transaction logs) stay ours
            "--",
            "pgbench",
        ]

    def handle_for(self) -> DockerHandle:
        return DockerHandle(
            workdir=str(self.workdir),
            container=self.cell.identity.name,
            labels=container_labels(self.cell),
            image=self.image,
            base_url=self.base_url,
        )

    def provision(self) -> DockerHandle:
        import docker.errors

        client = self.client()
        handle = self.handle_for()
        # The local folder marks "this cell has an engine" for the DAG's sweep, as the embedded one does.
        Path(handle.workdir).mkdir(parents=True)
        pg = self.cell.postgres
        try:
            settings, adjustments = scaled_settings(self.cell.server_settings, pg.memory_caps if pg else {}, hostfacts.memory_bytes())
            handle.settings_requested = self.cell.server_settings
            handle.settings_adjusted = adjustments
            network = docker_network(self.options)
            handle.network = network
            self._ensure_image(client)
            spec = container_spec(self.cell, secrets.token_urlsafe(24), settings, network)
            container = client.containers.create(**spec)
            handle.container_id = container.id
            container.start()
            self._wait_ready(client, handle)
        except docker.errors.APIError as exc:
            self._cleanup_after_failure(handle)
            raise EngineUnavailable(f"Docker engine at {self.base_url} refused to start {self.image}: {exc}") from None
        except BaseException:
            self._cleanup_after_failure(handle)
            raise
        return handle

    def _cleanup_after_failure(self, handle: DockerHandle) -> None:
        try:
            self.teardown(handle)
        except Exception as exc:  # keep the first error: it is the one that explains
            log.error("cleanup after a failed start of %s failed too: %s", handle.container, exc)

    def _ensure_image(self, client: Any) -> None:
        """Pull the image when the engine lacks it (through the hook's client: logged into the connection's registry)."""
        import docker.errors

        try:
            client.images.get(self.image)
        except docker.errors.ImageNotFound:
            log.info("pulling %s", self.image)
            if "@" in self.image:  # pinned by digest: the reference says it all
                client.images.pull(self.image)
                return
            repo, _, tag = self.image.rpartition(":") if ":" in self.image.split("/")[-1] else (self.image, "", "latest")
            client.images.pull(repo, tag=tag)

    def _address(self, container: Any, handle: DockerHandle) -> tuple[str, int]:
        """Where the worker reaches the server: the loopback port Docker chose, or the container on the network."""
        if handle.network:
            return handle.container, PG_PORT
        bound = (container.ports or {}).get(f"{PG_PORT}/tcp") or []
        for entry in bound:
            if entry.get("HostIp") in ("127.0.0.1", "") and entry.get("HostPort"):
                return "127.0.0.1", int(entry["HostPort"])
        raise EngineUnavailable(f"container {handle.container} publishes no loopback port for {PG_PORT}/tcp (ports: {container.ports})")

    def _wait_ready(self, client: Any, handle: DockerHandle) -> None:
        """Wait until the final server accepts TCP logins (the image's init-time server listens on no TCP address)."""
        import psycopg

        deadline = time.monotonic() + START_TIMEOUT_S
        last: Exception | None = None
        while True:
            container = client.containers.get(handle.container_id)
            if container.status in ("exited", "dead"):
                raise EngineUnavailable(
                    f"PostgreSQL {self.version} container ({self.image}) exited during start; its log tail:\n{_logs_tail(container)}"
                )
            if container.status == "running":
                host, port = self._address(container, handle)
                handle.host, handle.port = host, port
                try:
                    with psycopg.connect(**self._conninfo(handle, container), connect_timeout=3) as conn:
                        row = conn.execute("SELECT current_setting('unix_socket_directories')").fetchone()
                    first = str(row[0]).split(",")[0].strip() if row and row[0] else ""
                    handle.socket_dir = first or CONTAINER_SOCKET_DIR
                    return
                except psycopg.OperationalError as exc:
                    last = exc
            if time.monotonic() > deadline:
                raise EngineUnavailable(
                    f"PostgreSQL {self.version} container ({self.image}) not accepting connections after {START_TIMEOUT_S}s ({last}); log tail:\n{_logs_tail(container)}"
                )
            time.sleep(0.5)

    def _conninfo(self, handle: DockerHandle, container: Any) -> dict[str, Any]:
        return {
            "host": handle.host,
            "port": handle.port,
            "user": handle.user,
            "dbname": handle.dbname,
            "password": container_password(container),
        }

    def _running(self, handle: DockerHandle) -> Any:
        """The cell's container, running; else :class:`EngineUnavailable` with its state and log tail (a killed server)."""
        import docker.errors

        try:
            container = self.client().containers.get(handle.container_id or handle.container)
        except docker.errors.NotFound:
            raise EngineUnavailable(
                f"the container {handle.container} of {self.cell.cell_id} is gone (removed, or never started)"
            ) from None
        if container.status != "running":
            state = container.attrs.get("State") or {}
            raise EngineUnavailable(
                f"the container {handle.container} of {self.cell.cell_id} is {container.status} (exit code {state.get('ExitCode')}, "
                f"OOM-killed {state.get('OOMKilled')}); its log tail:\n{_logs_tail(container)}"
            )
        return container

    def facts(self, handle: DockerHandle) -> dict[str, Any]:
        """The server's facts plus the image: its id, its registry digest when it has one, its build label, the pgbench inside."""
        client = self.client()
        with self.session(handle) as s:
            facts = server_facts(s)
        image = client.images.get(handle.image)
        digests = list(image.attrs.get("RepoDigests") or [])
        labels = image.labels or {}
        facts["image"] = handle.image
        facts["image_id"] = image.id
        facts["image_digest"] = digests[0] if digests else None
        if labels.get("io.jsonbench.pg-build"):
            facts["image_build"] = labels["io.jsonbench.pg-build"]  # the npm build inside jsonbench/postgres images
        identity = f"digest {digests[0]}" if digests else f"image id {image.id}; no registry digest: built on this engine"
        facts["build"] = f"docker image {handle.image} ({identity})" + (
            f", PostgreSQL build {labels['io.jsonbench.pg-build']}" if labels.get("io.jsonbench.pg-build") else ""
        )
        facts["backend"] = self.backend
        facts["settings_adjusted"] = handle.settings_adjusted
        version = self._running(handle).exec_run(["pgbench", "--version"])
        said = version.output.decode(errors="replace").strip() if version.exit_code == 0 else "unknown"
        facts["pgbench"] = f"{said}, inside the container ({handle.image})"
        return facts

    @contextmanager
    def session(self, handle: DockerHandle) -> Iterator[PostgresSession]:
        container = self._running(handle)
        pg = self.cell.postgres
        session = PostgresSession(
            conninfo=self._conninfo(handle, container),
            pgbench=self._pgbench_argv(handle.container),
            pgbench_env={
                "PGHOST": handle.socket_dir or CONTAINER_SOCKET_DIR,
                "PGPORT": str(PG_PORT),
                "PGUSER": handle.user,
                "PGDATABASE": handle.dbname,
            },
            statement_timeout_s=pg.statement_timeout_s if pg else 0,
        )
        with opened(session):
            yield session

    def teardown(self, handle: DockerHandle) -> None:
        """Remove every container labelled with this engine folder (force, with volumes), then the folder."""
        import docker.errors

        client = self.client()  # unreachable engine: raise, and keep the folder so the sweep retries
        name = handle.container or self.cell.identity.name
        found = client.containers.list(all=True, filters={"label": [f"{LABEL}.managed=true", f"{LABEL}.workdir={name}"]})
        for container in found:
            try:
                container.remove(force=True, v=True)
            except docker.errors.NotFound:
                pass  # removed meanwhile: what we wanted
        shutil.rmtree(handle.workdir, ignore_errors=True)

    # -- what the driver samples while the engine runs ----------------------------------------

    def _stats(self, handle: DockerHandle) -> dict[str, Any] | None:
        """One stats reading of the container from the engine (about a second), or None when it is not running."""
        try:
            return dict(self.client().api.stats(handle.container_id or handle.container, stream=False, one_shot=True))
        except Exception:  # a sampler must never fail a measurement
            return None

    def _cgroup(self, handle: DockerHandle, controller: str) -> Path | None:
        """The container's cgroup folder of one controller, when this host can read it (else None: ask the engine).

        The cgroup file system is ``$JSONBENCH_HOST_CGROUP`` (docker-compose.yaml mounts the host's there for the
        benchmark workers) or ``/sys/fs/cgroup``; cgroup v1 with the cgroupfs or systemd driver, or v2.
        """
        cid = handle.container_id
        if not cid:
            return None
        root = Path(os.environ.get("JSONBENCH_HOST_CGROUP") or "/sys/fs/cgroup")
        v1 = {"cpu": ("cpuacct", "cpu,cpuacct"), "memory": ("memory",)}[controller]
        for sub in (f"docker/{cid}", f"system.slice/docker-{cid}.scope"):
            for folder in [*(root / c / sub for c in v1), root / sub]:  # v1 controllers, then v2's unified tree
                if folder.is_dir():
                    return folder
        return None

    def pids(self, handle: DockerHandle) -> list[int]:
        """The container's processes as host pids (``docker top``: the server, its children, pgbench while it runs)."""
        try:
            top = self.client().api.top(handle.container_id or handle.container, ps_args="-o pid")
        except Exception:  # not running, or gone
            return []
        titles = [t.upper() for t in top.get("Titles") or []]
        col = titles.index("PID") if "PID" in titles else 0
        return [int(row[col]) for row in top.get("Processes") or [] if str(row[col]).isdigit()]

    def cpu_seconds(self, handle: DockerHandle) -> float | None:
        """CPU time of the container's cgroup: every process it ran, pgbench's exec'd runs and exited ones included.

        Read from the cgroup file system when this host sees it (microseconds), else from the engine's stats
        (about a second). Counting per process instead would miss pgbench: it runs in the container but is
        nobody's child there, so its CPU would show up as other load.
        """
        folder = self._cgroup(handle, "cpu")
        if folder is not None:
            try:
                if (folder / "cpuacct.usage").exists():
                    return int((folder / "cpuacct.usage").read_text()) / 1e9
                for line in (folder / "cpu.stat").read_text().splitlines():
                    if line.startswith("usage_usec "):
                        return int(line.split()[1]) / 1e6
            except (OSError, ValueError):
                pass
        stats = self._stats(handle)
        total = (((stats or {}).get("cpu_stats") or {}).get("cpu_usage") or {}).get("total_usage")
        return float(total) / 1e9 if total else None

    def usage(self, handle: DockerHandle) -> ResourceUsage:
        """Memory of the container's cgroup without its inactive page cache (what ``docker stats`` shows), and its data volume's bytes."""
        return ResourceUsage(self._memory_bytes(handle), self._disk_bytes(handle))

    def _memory_bytes(self, handle: DockerHandle) -> int:
        folder = self._cgroup(handle, "memory")
        if folder is not None:
            try:
                v1 = (folder / "memory.usage_in_bytes").exists()
                used = int((folder / ("memory.usage_in_bytes" if v1 else "memory.current")).read_text())
                detail = dict(line.split() for line in (folder / "memory.stat").read_text().splitlines() if len(line.split()) == 2)
                return max(used - int(detail.get("total_inactive_file" if v1 else "inactive_file", 0)), 0)
            except (OSError, ValueError):
                pass
        stats = (self._stats(handle) or {}).get("memory_stats") or {}
        detail = stats.get("stats") or {}
        cache = detail.get("total_inactive_file", detail.get("inactive_file", 0)) or 0
        return max(int(stats.get("usage") or 0) - int(cache), 0)

    def _disk_bytes(self, handle: DockerHandle) -> int:
        """Bytes of the data volume: read where it lies when this host sees it, else ``du`` inside the container (at most every DU_EVERY_S)."""
        from jsonbench.host.load import folder_bytes

        try:
            container = self.client().containers.get(handle.container_id or handle.container)
        except Exception:
            return 0
        sources = [Path(m["Source"]) for m in container.attrs.get("Mounts") or [] if m.get("Type") == "volume" and m.get("Source")]
        visible = [p for p in sources if os.access(p, os.R_OK | os.X_OK)]
        if visible:
            return sum(folder_bytes(p) for p in visible)
        when, size = self._du
        if time.monotonic() - when < DU_EVERY_S or container.status != "running":
            return size
        dests = [m["Destination"] for m in container.attrs.get("Mounts") or [] if m.get("Type") == "volume" and m.get("Destination")]
        res = container.exec_run(["du", "-s", "-B1", *dests], user="postgres") if dests else None
        if res is not None and res.exit_code == 0:
            size = sum(
                int(line.split()[0])
                for line in res.output.decode(errors="replace").splitlines()
                if line.split() and line.split()[0].isdigit()
            )
        self._du = (time.monotonic(), size)
        return size


def _why_unreachable(base_url: str, exc: Exception) -> str:
    """The cause in the engine's own words: the hook only says that no host answered, and logs why."""
    import docker

    try:
        docker.APIClient(base_url=base_url, version="auto", timeout=10).ping()
    except Exception as cause:  # what the hook saw
        return str(cause)
    return str(exc)


def container_password(container: Any) -> str:
    """The password the container was created with, read back from its configuration (never from the handle)."""
    for item in (container.attrs.get("Config") or {}).get("Env") or []:
        if item.startswith("POSTGRES_PASSWORD="):
            return item.split("=", 1)[1]
    raise EngineUnavailable(f"container {container.name} has no POSTGRES_PASSWORD in its configuration")


def _logs_tail(container: Any, lines: int = 30) -> str:
    try:
        raw = container.logs(tail=lines)
        return raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw)
    except Exception as exc:  # the log is a courtesy; never hide the real error behind this one
        return f"(no container log: {exc})"
