"""The container one cell runs in: what is started (a pure function of the cell), and the handle that names it.

:func:`container_spec` needs no Docker engine, so tests can check exactly what would be started:

* the cell's server settings, scaled to this machine like the embedded engine's, as ``-c``
  arguments of ``postgres``; data checksums (and C locale, UTF8) through ``POSTGRES_INITDB_ARGS``;
* reachable only on ``127.0.0.1`` at a random host port, or, when ``backend_options.network``
  (or ``$JSONBENCH_DOCKER_NETWORK``) names a private Docker network, only on that network
  (what a worker that itself runs in a container uses) with no port published at all;
* a password generated per container, given to the container only: it is never logged, never
  stored in the handle (which crosses XCom); sessions read it back from the container's own
  configuration (:func:`container_password`);
* named and labelled after ``cell.identity`` (run, cell, engine folder), so a teardown or the DAG's
  sweep finds the container even when the setup task died before returning its handle.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from jsonbench.cell import Cell
from jsonbench.engines.base import Handle
from jsonbench.errors import EngineUnavailable

DB_NAME = "bench"
DB_USER = "bench"
PG_PORT = 5432
#: Socket folder of the official images: what pgbench inside the container connects through (unless the
#: server reports another one first in ``unix_socket_directories``).
CONTAINER_SOCKET_DIR = "/var/run/postgresql"
LABEL = "io.jsonbench"


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


def container_password(container: Any) -> str:
    """The password the container was created with, read back from its configuration (never from the handle)."""
    for item in (container.attrs.get("Config") or {}).get("Env") or []:
        if item.startswith("POSTGRES_PASSWORD="):
            return item.split("=", 1)[1]
    raise EngineUnavailable(f"container {container.name} has no POSTGRES_PASSWORD in its configuration")


def logs_tail(container: Any, lines: int = 30) -> str:
    """The container's last log lines, for an error message; never raises."""
    try:
        raw = container.logs(tail=lines)
        return raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw)
    except Exception as exc:  # the log is a courtesy; never hide the real error behind this one
        return f"(no container log: {exc})"
