"""Which Docker engine a cell's container runs on, and the client that reaches it through Airflow's Docker provider.

A :class:`~airflow.providers.docker.hooks.docker.DockerHook` gives the API client (the docker SDK's
high-level models are used on top of it). The Airflow connection ``docker_conn_id``
(``backend_options.docker_conn_id``, else ``$JSONBENCH_DOCKER_CONN_ID``, else ``jsonbench_docker``;
an empty value means none) says which engine: ``backend_options.base_url`` when the matrix or run gives
one, else the connection's extra ``{"docker_url": ...}`` (DockerOperator's name for it), ``$DOCKER_HOST``,
or the local socket; when the connection also names a registry (host, login, password: the provider's
own meaning of a Docker connection), the hook logs in there before an image is pulled. No connection
defined is fine: the engine is then the URL above and nothing is logged into. ``./bin/setup`` and
``docker-compose.yaml`` define the connection for the local socket.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: The Airflow connection naming the Docker engine (and optionally a registry), when the matrix names none.
DEFAULT_CONN_ID = "jsonbench_docker"
CLIENT_TIMEOUT_S = 120
DEFAULT_SOCKET = "unix:///var/run/docker.sock"


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


def hook_client(target: DockerTarget) -> Any:
    """A docker SDK client whose API connection is the Airflow DockerHook's (pinged; logged in when a registry is named)."""
    from airflow.providers.docker.hooks.docker import DockerHook

    import docker

    hook = DockerHook(docker_conn_id=target.login_conn_id, base_url=target.base_url, version="auto", timeout=CLIENT_TIMEOUT_S)
    # DockerClient is the high-level models over one APIClient (``client.api``): use the hook's.
    client = docker.DockerClient.__new__(docker.DockerClient)
    client.api = hook.get_conn()
    return client


def why_unreachable(base_url: str, exc: Exception) -> str:
    """The cause in the engine's own words: the hook only says that no host answered, and logs why."""
    import docker

    try:
        docker.APIClient(base_url=base_url, version="auto", timeout=10).ping()
    except Exception as cause:  # what the hook saw
        return str(cause)
    return str(exc)
