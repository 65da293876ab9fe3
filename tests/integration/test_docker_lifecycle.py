"""The Docker backend's whole lifecycle, with the Docker engine mocked by one that runs a real server.

No Docker engine runs on these machines, so :class:`ServerRunningDocker` stands in for it: when
the adapter starts a container, it does what the official image's entrypoint does, with the
embedded build of the same major: ``initdb`` with the container's ``POSTGRES_INITDB_ARGS``, a
password from ``POSTGRES_PASSWORD`` (scram for TCP), the database ``POSTGRES_DB``, then
``postgres`` with the container's own ``-c`` arguments, listening on 127.0.0.1 at a free port
it reports as the published port. So the specification's settings and initdb flags are checked
by real PostgreSQL binaries, and provision, facts, a suite workload and teardown run for real
over a password-protected loopback connection. (pgbench through ``docker exec`` needs the real
engine and is not covered here.)
"""

from __future__ import annotations

import secrets
import shlex
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker.errors
import psycopg
import pytest

from tests.conftest import planned_of
from docker.models.containers import _create_container_args

from jsonbench.cell import Cell, RunRef
from jsonbench import tasks
from jsonbench.engines.base import engine_for
from jsonbench.engines.postgres_docker import DockerPostgres
from jsonbench.engines.postgres_embedded import EmbeddedPostgres
from jsonbench.dataset.staging import Staging

SUITE = "large_document_update"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RealServerContainer:
    """A 'container' whose server is a real PostgreSQL of the image's major, run like the image would."""

    def __init__(self, engine: ServerRunningDocker, spec: dict[str, Any]) -> None:
        self.engine, self.spec = engine, spec
        self.id = secrets.token_hex(6)
        self.name = spec["name"]
        self.labels = dict(spec["labels"])
        self.status = "created"
        self.ports: dict[str, Any] = {}
        self.attrs = {"Config": {"Env": [f"{k}={v}" for k, v in spec["environment"].items()]}}
        major = spec["image"].split(":")[1]
        stand_in = Cell(cell_id="stand_in", suite="large_document_update", engine_id=f"postgres-{major}", family="postgres", version=major,
                        backend="embedded", adapter="jsonbench.engines.postgres_embedded:EmbeddedPostgres", backend_options={"build": f"pg{major}"},
                        scale="smoke", scale_params={}, repetitions=1, run=RunRef("stand-in", None, "t", "", "smoke"))
        self.pg = EmbeddedPostgres(stand_in)
        self.base = engine.root / self.id
        self.log = self.base / "server.log"

    def _run(self, argv: list[str]) -> None:
        res = self.pg._run(argv, self.pg.os_user())
        assert res.returncode == 0, res.stdout + res.stderr

    def start(self) -> None:
        env = self.spec["environment"]
        user = self.pg.os_user()
        self.base.mkdir(parents=True)
        pwfile = self.base / "pw"
        pwfile.write_text(env["POSTGRES_PASSWORD"])
        if user is not None:
            shutil.chown(self.base, user.pw_uid, user.pw_gid)
            shutil.chown(pwfile, user.pw_uid, user.pw_gid)
        data = self.base / "data"
        self._run([str(self.pg.bin_dir / "initdb"), "-D", str(data), "-U", env["POSTGRES_USER"], f"--pwfile={pwfile}",
                   "--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync", *shlex.split(env["POSTGRES_INITDB_ARGS"])])
        port = _free_port()
        command = self.spec["command"]
        assert command[0] == "postgres"
        options = ["-c listen_addresses=127.0.0.1", f"-c port={port}", f"-c unix_socket_directories={self.base}"]
        options += [f"-c {shlex.quote(command[i + 1])}" for i in range(1, len(command), 2) if command[i] == "-c"]
        self._run([str(self.pg.bin_dir / "pg_ctl"), "-D", str(data), "-l", str(self.log), "-w", "-o", " ".join(options), "start"])
        with psycopg.connect(host=str(self.base), port=port, user=env["POSTGRES_USER"], dbname="postgres", autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{env["POSTGRES_DB"]}"')
        binding = self.spec["ports"]["5432/tcp"]
        assert binding == ("127.0.0.1", None)
        self.ports = {"5432/tcp": [{"HostIp": "127.0.0.1", "HostPort": str(port)}]}
        self.status = "running"

    def reload(self) -> None:
        pass

    def logs(self, tail: int = 30) -> bytes:
        return self.log.read_bytes()[-4000:] if self.log.exists() else b""

    def remove(self, force: bool = False, v: bool = False) -> None:
        assert force and v
        if (self.base / "data" / "postmaster.pid").exists():
            self._run([str(self.pg.bin_dir / "pg_ctl"), "-D", str(self.base / "data"), "-m", "fast", "-w", "stop"])
        shutil.rmtree(self.base, ignore_errors=True)
        del self.engine.live[self.id]


class ServerRunningDocker:
    """Mocks the Docker engine (none can run here); its containers run real PostgreSQL servers."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.live: dict[str, RealServerContainer] = {}
        self.containers = self
        self.images = self

    def ping(self) -> bool:
        return True

    def get(self, key: str) -> Any:
        if key.startswith("postgres:"):  # images.get
            return type("Image", (), {"id": "sha256:0ff1ce", "attrs": {"RepoDigests": [f"postgres@sha256:{'ab' * 32}"]}})()
        for c in self.live.values():
            if key in (c.id, c.name):
                return c
        raise docker.errors.NotFound(key)

    def create(self, **spec: Any) -> RealServerContainer:
        _create_container_args({**spec, "version": "1.47"})
        c = RealServerContainer(self, spec)
        self.live[c.id] = c
        return c

    def list(self, all: bool = False, filters: dict[str, Any] | None = None) -> list[RealServerContainer]:
        wanted = dict(item.split("=", 1) for item in (filters or {}).get("label", []))
        return [c for c in list(self.live.values()) if _match(c.labels, wanted)]


def _match(labels: dict[str, str], wanted: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in wanted.items())


@pytest.fixture
def docker_engine(monkeypatch: pytest.MonkeyPatch) -> Iterator[ServerRunningDocker]:
    """The Docker engine is mocked because none can run here: see :class:`ServerRunningDocker`.

    Its storage is a short folder of its own outside the session's scratch folder, as a real daemon's
    would be (the leak check still sees its servers: they carry the session's token).
    """
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="jbt-docker-", dir="/tmp"))
    root.chmod(0o755)
    fake = ServerRunningDocker(root)
    monkeypatch.setattr(DockerPostgres, "client_factory", staticmethod(lambda url: fake))
    yield fake
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("engine_id", ["postgres-16", "postgres-18"])
def test_provision_measure_teardown_through_the_docker_adapter(engine_id: str, docker_engine: ServerRunningDocker, make_cells: Any, results_dir: Path, leak_check: Any) -> None:
    """The Docker engine is mocked (none can run here); the server behind it, the settings and initdb flags are real."""
    cell = make_cells(SUITE, [engine_id], backend="docker", run_id=f"docker_{engine_id}", repetitions=1)[0]
    assert type(engine_for(cell)) is DockerPostgres
    handle = tasks.provision(planned_of(cell), cell.cell_id)
    try:
        assert handle["host"] == "127.0.0.1" and handle["port"] > 0
        (container,) = docker_engine.live.values()
        password = container.spec["environment"]["POSTGRES_PASSWORD"]
        assert password not in json_dump(handle)  # the handle crosses XCom
        with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
            psycopg.connect(host="127.0.0.1", port=handle["port"], user="bench", dbname="bench", password="wrong", connect_timeout=5).close()
        tasks.run_workload(planned_of(cell), cell.cell_id, handle, "json_big_idx")
    finally:
        tasks.teardown(planned_of(cell), cell.cell_id, handle)
    assert not docker_engine.live and not leak_check()
    tasks.teardown(planned_of(cell), cell.cell_id, handle)  # idempotent

    staging = Staging(results_dir, cell.run.run_id)
    facts = staging.read_engine(cell.cell_id)
    assert facts["backend"] == "docker" and facts["version"].startswith(engine_id[-2:] + ".")
    assert facts["build"].startswith(f"docker image postgres:{engine_id[-2:]} (postgres@sha256:")
    assert facts["data_checksums"] is True  # POSTGRES_INITDB_ARGS reached initdb
    for name in ("work_mem", "max_wal_size", "max_connections"):  # the -c arguments are in force
        assert facts["settings"][name] == cell.server_settings[name], name
    assert password not in json_dump(facts)
    m = {(r.workload, x.metric): x for r in staging.records() for x in r.measurements}
    assert m[("json_big_idx", "n_tup_upd")].value == cell.scale_params["rows"] // 2
    assert m[("json_big_idx", "n_tup_hot_upd")].value == 0


def json_dump(value: Any) -> str:
    import json

    return json.dumps(value, default=str)
