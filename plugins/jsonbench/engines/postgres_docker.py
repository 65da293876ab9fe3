"""Docker PostgreSQL: the official ``postgres:<major>`` image, one throwaway container per cell.

The container is created through the Docker API (the ``docker`` SDK that the Airflow Docker provider
is built on; the engine is ``backend_options.base_url``, else ``$DOCKER_HOST``, else the local
socket) from :func:`container_spec`, a pure function of the cell, so tests can check exactly
what would be started without a Docker engine:

* the cell's server settings, scaled to this machine like the embedded engine's, as ``-c``
  arguments of ``postgres``; data checksums (and C locale, UTF8) through ``POSTGRES_INITDB_ARGS``;
* reachable only on ``127.0.0.1`` at a random host port, or, when ``backend_options.network``
  (or ``$JSONBENCH_DOCKER_NETWORK``) names a private Docker network, only on that network
  (what a worker that itself runs in a container uses) with no port published at all;
* a password generated per container, given to the container only: it is never logged, never
  stored in the handle (which crosses XCom); sessions read it back from the container's own
  configuration through the same Docker API;
* labels naming the run, the cell and the engine folder, so :meth:`DockerPostgres.teardown` (and
  the DAG's sweep, through :meth:`DockerPostgres.handle_for`) finds the container even when the
  setup task died before returning its handle; teardown removes it with its data volume.

pgbench runs from the same image, inside the container (see :mod:`jsonbench.engines.docker_exec`).
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

from jsonbench import hostfacts
from jsonbench.cell import Cell
from jsonbench.engines.base import Engine, Handle
from jsonbench.engines.postgres_common import opened, scaled_settings, server_facts
from jsonbench.engines.postgres_session import PostgresSession
from jsonbench.errors import ConfigError, EngineUnavailable

log = logging.getLogger(__name__)

DB_NAME = "bench"
DB_USER = "bench"
PG_PORT = 5432
#: Socket folder of the official images: what pgbench inside the container connects through.
CONTAINER_SOCKET_DIR = "/var/run/postgresql"
START_TIMEOUT_S = 180
LABEL = "io.jsonbench"
DEFAULT_SOCKET = "unix:///var/run/docker.sock"
EXEC_HELPER = Path(__file__).with_name("docker_exec.py")


def docker_base_url(options: dict[str, Any]) -> str:
    """The Docker engine to talk to: ``backend_options.base_url``, ``$DOCKER_HOST``, or the local socket."""
    return str(options.get("base_url") or os.environ.get("DOCKER_HOST") or DEFAULT_SOCKET)


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


def _default_client(base_url: str) -> Any:
    import docker

    return docker.DockerClient(base_url=base_url, timeout=60)


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
    settings_requested: dict[str, str] = field(default_factory=dict)
    settings_adjusted: dict[str, str] = field(default_factory=dict)


class DockerPostgres(Engine[DockerHandle, PostgresSession]):
    """A throwaway container of the official PostgreSQL image."""

    family = "postgres"
    backend = "docker"
    handle_type = DockerHandle

    #: Makes a Docker client for a base URL. Tests replace it: no Docker engine runs on the CI machines.
    client_factory: Callable[[str], Any] = staticmethod(_default_client)

    @property
    def image(self) -> str:
        image = self.options.get("image")
        if not image:
            raise ConfigError(f"matrix.engines.{self.cell.engine_id}.backends.docker.image", "no image given for the docker backend")
        return str(image)

    @property
    def base_url(self) -> str:
        return docker_base_url(self.options)

    def client(self) -> Any:
        """A Docker client that has answered a ping, or :class:`EngineUnavailable` saying where nobody answered."""
        try:
            client = type(self).client_factory(self.base_url)
            client.ping()
        except Exception as exc:  # the SDK raises DockerException, requests' errors, or OSError
            raise EngineUnavailable(f"Docker path selected (backend=docker) but no Docker engine answers at {self.base_url}: {exc}") from None
        return client

    # -- contract -------------------------------------------------------------------------

    def check(self) -> None:
        self.image  # noqa: B018 - raises ConfigError when the matrix names no image
        self.client()

    def pgbench(self) -> list[str] | None:
        return self._pgbench_argv(self.cell.identity.name)

    def _pgbench_argv(self, name: str) -> list[str]:
        return [
            sys.executable, str(EXEC_HELPER),
            "--base-url", self.base_url,
            "--container", name,
            "--image", self.image,
            "--user", f"{os.getuid()}:{os.getgid()}",  # files it writes (transaction logs) stay ours
            "--", "pgbench",
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
                raise EngineUnavailable(f"PostgreSQL {self.version} container ({self.image}) exited during start; its log tail:\n{_logs_tail(container)}")
            if container.status == "running":
                host, port = self._address(container, handle)
                handle.host, handle.port = host, port
                try:
                    with psycopg.connect(**self._conninfo(handle, container), connect_timeout=3) as conn:
                        conn.execute("SELECT 1")
                    return
                except psycopg.OperationalError as exc:
                    last = exc
            if time.monotonic() > deadline:
                raise EngineUnavailable(f"PostgreSQL {self.version} container ({self.image}) not accepting connections after {START_TIMEOUT_S}s ({last}); log tail:\n{_logs_tail(container)}")
            time.sleep(0.5)

    def _conninfo(self, handle: DockerHandle, container: Any) -> dict[str, Any]:
        return {"host": handle.host, "port": handle.port, "user": handle.user, "dbname": handle.dbname, "password": container_password(container)}

    def facts(self, handle: DockerHandle) -> dict[str, Any]:
        client = self.client()
        with self.session(handle) as s:
            facts = server_facts(s)
        image = client.images.get(handle.image)
        digests = image.attrs.get("RepoDigests") or []
        facts["build"] = f"docker image {handle.image} ({digests[0] if digests else image.id})"
        facts["image_id"] = image.id
        facts["backend"] = self.backend
        facts["settings_adjusted"] = handle.settings_adjusted
        facts["pgbench"] = f"pgbench of {handle.image}, inside the container"
        return facts

    @contextmanager
    def session(self, handle: DockerHandle) -> Iterator[PostgresSession]:
        client = self.client()
        container = client.containers.get(handle.container_id)
        pg = self.cell.postgres
        session = PostgresSession(
            conninfo=self._conninfo(handle, container),
            pgbench=self._pgbench_argv(handle.container),
            pgbench_env={"PGHOST": CONTAINER_SOCKET_DIR, "PGPORT": str(PG_PORT), "PGUSER": handle.user, "PGDATABASE": handle.dbname},
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

