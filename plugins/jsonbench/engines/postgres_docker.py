"""Docker PostgreSQL: one throwaway container per cell, of a ``postgres:<major>``-compatible image.

The matrix names the image (``backends.docker.image``): ``jsonbench/postgres:<major>``, the embedded
backend's pinned builds packaged with the official image's entrypoint (built here by
``./bin/setup --docker``, see ``docker/``), ``jsonbench/postgres-debian:<major>`` (Debian's lz4-enabled
packages), or the official ``postgres:<major>`` where a registry is reachable: all three keep the same
contract, so this adapter does not care which.

The adapter drives the container's life: start, wait until the server takes logins, facts, sessions,
teardown. Its parts are apart: which Docker engine and how it is reached (through Airflow's Docker
provider) is :mod:`jsonbench.engines.docker_client`; what container a cell starts, and the handle that
names it, is :mod:`jsonbench.engines.docker_container`; what the driver samples of it is
:mod:`jsonbench.engines.docker_sampling`. Teardown removes every container labelled with the cell's
engine folder, with its data volume, so :meth:`DockerPostgres.teardown` (and the DAG's sweep, through
:meth:`DockerPostgres.handle_for`) finds the container even when the setup task died before returning
its handle.

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
from pathlib import Path
from typing import Any

from jsonbench.cell import Cell
from jsonbench.engines.base import Engine, ResourceUsage
from jsonbench.engines.docker_client import DockerTarget, docker_target, hook_client, why_unreachable
from jsonbench.engines.docker_container import (
    CONTAINER_SOCKET_DIR,
    LABEL,
    PG_PORT,
    DockerHandle,
    container_labels,
    container_password,
    container_spec,
    docker_network,
    logs_tail,
)
from jsonbench.engines.docker_sampling import ContainerGauge
from jsonbench.engines.postgres_common import opened, scaled_settings, server_facts
from jsonbench.engines.postgres_session import PostgresSession
from jsonbench.errors import ConfigError, EngineUnavailable
from jsonbench.host import facts as hostfacts

log = logging.getLogger(__name__)

START_TIMEOUT_S = 180
EXEC_HELPER = Path(__file__).with_name("docker_exec.py")


class DockerPostgres(Engine[DockerHandle, PostgresSession]):
    """A throwaway container of a ``postgres:<major>``-compatible image, reached through Airflow's DockerHook."""

    family = "postgres"
    backend = "docker"
    handle_type = DockerHandle

    #: Makes a Docker client for a :class:`DockerTarget` (by default through the DockerHook). Unit tests
    #: replace it with a stand-in; tests/docker/ run the real one.
    client_factory: Callable[[DockerTarget], Any] = staticmethod(hook_client)

    def __init__(self, cell: Cell) -> None:
        super().__init__(cell)
        self._target: DockerTarget | None = None
        self._client: Any = None
        #: What the driver samples of the cell's container, through this adapter's client.
        self.gauge = ContainerGauge(self.client)

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
                f"Docker path selected (backend=docker) but no Docker engine answers at {target.base_url}: {why_unreachable(target.base_url, exc)}{via}"
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
                    f"PostgreSQL {self.version} container ({self.image}) exited during start; its log tail:\n{logs_tail(container)}"
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
                    f"PostgreSQL {self.version} container ({self.image}) not accepting connections after {START_TIMEOUT_S}s ({last}); "
                    f"log tail:\n{logs_tail(container)}"
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
                f"OOM-killed {state.get('OOMKilled')}); its log tail:\n{logs_tail(container)}"
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

    def pids(self, handle: DockerHandle) -> list[int]:
        """The container's processes as host pids (``docker top``: the server, its children, pgbench while it runs)."""
        return self.gauge.pids(handle)

    def cpu_seconds(self, handle: DockerHandle) -> float | None:
        """CPU time of the container's cgroup, pgbench's exec'd runs and exited processes included (see :class:`ContainerGauge`)."""
        return self.gauge.cpu_seconds(handle)

    def usage(self, handle: DockerHandle) -> ResourceUsage:
        """Memory of the container's cgroup without its inactive page cache (what ``docker stats`` shows), and its data volume's bytes."""
        return ResourceUsage(self.gauge.memory_bytes(handle), self.gauge.disk_bytes(handle))
