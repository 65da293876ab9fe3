"""The Docker backend at unit speed: container specification, selection, engine and connection, lifecycle, pgbench argv.

The real thing runs in tests/docker/ (a Docker engine and the images of ``./bin/setup --docker``):
the smoke matrix in real containers, a container killed mid-statement, a killed provision swept.
Here, what needs no engine is tested for real: the specification (through the docker SDK's own
translation into Engine API arguments), the selection of the adapter, which engine and connection the
DockerHook gets, and the clear error when no engine answers (a real connection attempt to a socket that
does not exist). The lifecycle tests use :class:`FakeDocker`, a stand-in for the Docker engine, for
speed and for failures a real engine gives only rarely; they say so.
"""

from __future__ import annotations

import dataclasses
import io
import json
import tarfile
from pathlib import Path
from typing import Any

import docker.errors
import pytest
from docker.models.containers import _create_container_args

from jsonbench import paths
from jsonbench.engines import docker_client, docker_exec
from jsonbench.engines.base import engine_for
from jsonbench.engines.docker_client import DockerTarget, docker_target
from jsonbench.engines.docker_container import container_labels, container_spec, initdb_args
from jsonbench.engines.docker_sampling import ContainerGauge
from jsonbench.engines.postgres_common import scaled_settings
from jsonbench.engines.postgres_docker import DockerPostgres
from jsonbench.errors import EngineUnavailable
from jsonbench.host import facts as hostfacts
from jsonbench.orchestration import tasks

SUITE = "large_document_update"
API_VERSION = "1.47"


# -- a stand-in for the Docker engine ------------------------------------------------------------


class FakeContainer:
    """A container record as the SDK shows it; ``behaviour`` decides what starting it does."""

    def __init__(self, engine: FakeDocker, spec: dict[str, Any]) -> None:
        self.engine = engine
        self.spec = spec
        self.id = f"fake{len(engine.created):04d}"
        self.name = spec["name"]
        self.labels = dict(spec.get("labels") or {})
        self.status = "created"
        self.ports: dict[str, Any] = {}
        self.attrs = {"Config": {"Env": [f"{k}={v}" for k, v in (spec.get("environment") or {}).items()], "Labels": self.labels}}
        self.removed_with: dict[str, Any] | None = None

    def start(self) -> None:
        self.engine.behaviour(self)

    def reload(self) -> None:
        pass

    def logs(self, tail: int = 30) -> bytes:
        return self.engine.log

    def remove(self, **kwargs: Any) -> None:
        if self.id not in self.engine.live:
            raise docker.errors.NotFound("gone")
        self.removed_with = kwargs
        del self.engine.live[self.id]


class FakeDocker:
    """Mocks the Docker engine (none can run here): the parts of ``docker.DockerClient`` the adapter uses."""

    def __init__(self, images: tuple[str, ...] = ()) -> None:
        self.created: list[FakeContainer] = []
        self.live: dict[str, FakeContainer] = {}
        self.images_present = set(images)
        self.pulled: list[tuple[str, str]] = []
        self.log = b""
        self.behaviour = lambda c: setattr(c, "status", "running")
        self.containers = self
        self.images = _FakeImages(self)

    def ping(self) -> bool:
        return True

    # containers.*
    def create(self, **spec: Any) -> FakeContainer:
        # The SDK's own translation of these kwargs into an Engine API request: a bad key fails here as it would for real.
        _create_container_args({**spec, "version": API_VERSION})
        if spec["image"] not in self.images_present:
            raise docker.errors.ImageNotFound(spec["image"])
        if any(c.name == spec["name"] for c in self.live.values()):
            raise docker.errors.APIError(f"Conflict. The container name {spec['name']} is already in use")
        container = FakeContainer(self, spec)
        self.created.append(container)
        self.live[container.id] = container
        return container

    def get(self, key: str) -> FakeContainer:
        for c in self.live.values():
            if key in (c.id, c.name):
                return c
        raise docker.errors.NotFound(key)

    def list(self, all: bool = False, filters: dict[str, Any] | None = None) -> list[FakeContainer]:
        wanted = dict(item.split("=", 1) for item in (filters or {}).get("label", []))
        return [c for c in self.live.values() if (all or c.status == "running") and _labels_match(c.labels, wanted)]


def _labels_match(labels: dict[str, str], wanted: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in wanted.items())


class _FakeImages:
    def __init__(self, engine: FakeDocker) -> None:
        self.engine = engine

    def get(self, name: str) -> Any:
        if name not in self.engine.images_present:
            raise docker.errors.ImageNotFound(name)
        return type("Image", (), {"id": "sha256:feed", "attrs": {"RepoDigests": [f"{name.split(':')[0]}@sha256:beef"]}})()

    def pull(self, repo: str, tag: str | None = None) -> None:
        self.engine.pulled.append((repo, tag or "latest"))
        self.engine.images_present.add(f"{repo}:{tag}")


@pytest.fixture
def fake_docker(monkeypatch: pytest.MonkeyPatch) -> FakeDocker:
    """Install a :class:`FakeDocker` as the adapter's client (the Docker engine is mocked: none runs here)."""
    fake = FakeDocker()
    monkeypatch.setattr(DockerPostgres, "client_factory", staticmethod(lambda url: fake))
    return fake


# -- the specification ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "engine_id,image",
    [("postgres-16", "jsonbench/postgres:16"), ("postgres-17", "jsonbench/postgres:17"), ("postgres-18", "jsonbench/postgres:18")],
)
def test_spec_runs_the_official_image_with_the_cells_settings_on_loopback(make_cells: Any, engine_id: str, image: str) -> None:
    cell = make_cells(SUITE, [engine_id], backend="docker")[0]
    workdir = cell.identity.workdir()
    settings, _ = scaled_settings(cell.server_settings, cell.postgres.memory_caps, hostfacts.memory_bytes())
    spec = container_spec(cell, "s3cret", settings)

    assert spec["image"] == image and spec["name"] == workdir.name
    command = spec["command"]
    assert command[0] == "postgres"
    assert [command[i] for i in range(1, len(command), 2)] == ["-c"] * len(settings)
    assert dict(command[i].split("=", 1) for i in range(2, len(command), 2)) == settings
    assert set(settings) >= {"shared_buffers", "work_mem", "max_wal_size", "max_connections"}
    env = spec["environment"]
    assert env["POSTGRES_USER"] == env["POSTGRES_DB"] == "bench" and env["POSTGRES_PASSWORD"] == "s3cret"
    assert "--data-checksums" in env["POSTGRES_INITDB_ARGS"].split() and "--locale=C" in env["POSTGRES_INITDB_ARGS"]
    assert spec["labels"] == {
        "io.jsonbench.managed": "true",
        "io.jsonbench.run_id": cell.run.run_id,
        "io.jsonbench.cell_id": cell.cell_id,
        "io.jsonbench.workdir": workdir.name,
    }
    assert spec["auto_remove"] is False  # teardown removes it, after the log could be read
    assert "volumes" not in spec and "mounts" not in spec and "tmpfs" not in spec  # data on the image's own volume, no host path

    api = _create_container_args({**spec, "version": API_VERSION})  # what the SDK sends to the Engine API
    assert api["host_config"]["PortBindings"] == {"5432/tcp": [{"HostIp": "127.0.0.1", "HostPort": ""}]}  # loopback, random port
    assert api["host_config"]["NetworkMode"] == "default"
    assert api["host_config"]["ShmSize"] >= 512 * 1024**2


def test_spec_on_a_private_network_publishes_no_port(make_cells: Any) -> None:
    cell = make_cells(SUITE, ["postgres-17"], backend="docker")[0]
    spec = container_spec(cell, "pw", {"work_mem": "64MB"}, network="jsonbench-bench")
    api = _create_container_args({**spec, "version": API_VERSION})
    assert "PortBindings" not in api["host_config"] and "ports" not in api
    assert api["host_config"]["NetworkMode"] == "jsonbench-bench" and api["networking_config"] == {"jsonbench-bench": None}


def test_checksums_follow_the_matrix_on_every_major(make_cells: Any) -> None:
    cell = make_cells(SUITE, ["postgres-18"], backend="docker")[0]
    assert "--data-checksums" in initdb_args(cell).split()
    off = dataclasses.replace(cell, postgres=dataclasses.replace(cell.postgres, data_checksums=False))
    assert "--no-data-checksums" in initdb_args(off).split()  # 18 would turn them on by itself
    cell16 = make_cells(SUITE, ["postgres-16"], backend="docker")[0]
    cell16 = dataclasses.replace(cell16, postgres=dataclasses.replace(cell16.postgres, data_checksums=False))
    assert "checksums" not in initdb_args(cell16)


def test_spec_uses_the_run_parameters_server_settings(make_cells: Any) -> None:
    cell = make_cells(SUITE, ["postgres-16"], backend="docker", server_settings={"wal_compression": "lz4", "work_mem": "8MB"})[0]
    spec = container_spec(cell, "pw", cell.server_settings)
    assert "wal_compression=lz4" in spec["command"] and "work_mem=8MB" in spec["command"]


# -- selection and the error without an engine ---------------------------------------------------


def test_backend_docker_selects_the_docker_adapter(make_cells: Any) -> None:
    for engine_id in ("postgres-16", "postgres-17", "postgres-18"):
        cell = make_cells(SUITE, [engine_id], backend="docker")[0]
        assert cell.backend == "docker" and cell.backend_options["image"] == f"jsonbench/postgres:{engine_id[-2:]}"
        assert type(engine_for(cell)) is DockerPostgres


def test_no_docker_engine_fails_the_plan_with_a_clear_message(results_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A real connection attempt (no mock): the Docker socket named by DOCKER_HOST does not exist."""
    url = f"unix://{tmp_path}/no-docker.sock"
    monkeypatch.setenv("DOCKER_HOST", url)
    params = {"scale": "smoke", "engines": ["postgres-17"], "suites": [SUITE], "backend": "docker", "results_dir": str(results_dir)}
    with pytest.raises(EngineUnavailable, match=rf"^Docker path selected \(backend=docker\) but no Docker engine answers at {url}: \S"):
        tasks.plan(params, "no_docker_run", None)
    assert not any(paths.scratch_dir().glob("jsonbench-*"))  # nothing was started or created where engines live


def test_missing_image_in_the_matrix_names_the_field(make_cells: Any, fake_docker: FakeDocker) -> None:
    """The Docker engine is mocked (none can run here); the error comes from the matrix entry alone."""
    from jsonbench.errors import ConfigError

    cell = dataclasses.replace(make_cells(SUITE, ["postgres-17"], backend="docker")[0], backend_options={})
    with pytest.raises(ConfigError, match=r"matrix\.engines\.postgres-17\.backends\.docker\.image"):
        engine_for(cell).check()


# -- lifecycle against a mocked engine ----------------------------------------------------------


def test_failed_start_reports_the_server_log_and_removes_the_container(
    make_cells: Any, fake_docker: FakeDocker, caplog: pytest.LogCaptureFixture
) -> None:
    """The Docker engine is mocked (none can run here): the container 'exits' during start, as a bad setting makes it."""
    fake_docker.log = b'FATAL:  invalid value for parameter "shared_buffers": "lots"\n'
    fake_docker.behaviour = lambda c: setattr(c, "status", "exited")
    cell = make_cells(SUITE, ["postgres-17"], backend="docker")[0]
    engine = engine_for(cell)
    workdir = cell.identity.workdir()
    with pytest.raises(EngineUnavailable, match=r"(?s)exited during start.*invalid value for parameter"):
        engine.provision()
    assert fake_docker.pulled == [("jsonbench/postgres", "17")]  # absent image pulled first
    (container,) = fake_docker.created
    assert container.removed_with == {"force": True, "v": True}  # with its data volume
    assert not fake_docker.live and not workdir.exists()
    password = container.spec["environment"]["POSTGRES_PASSWORD"]
    assert len(password) >= 24 and password not in caplog.text


def test_passwords_differ_per_container(make_cells: Any, fake_docker: FakeDocker) -> None:
    """The Docker engine is mocked (none can run here)."""
    fake_docker.behaviour = lambda c: setattr(c, "status", "exited")
    fake_docker.images_present.add("jsonbench/postgres:16")
    for run_id in ("run_a", "run_b"):
        cell = make_cells(SUITE, ["postgres-16"], backend="docker", run_id=run_id)[0]
        with pytest.raises(EngineUnavailable):
            engine_for(cell).provision()
    a, b = (c.spec["environment"]["POSTGRES_PASSWORD"] for c in fake_docker.created)
    assert a != b
    assert fake_docker.created[0].name != fake_docker.created[1].name


def test_teardown_and_sweep_find_the_container_by_label_only(make_cells: Any, fake_docker: FakeDocker, results_dir: Path) -> None:
    """The Docker engine is mocked (none can run here). A setup task 'died' after starting its container."""
    fake_docker.images_present.update({"jsonbench/postgres:16", "jsonbench/postgres:17"})
    mine = make_cells(SUITE, ["postgres-17"], backend="docker", run_id="killed_run")[0]
    other = make_cells(SUITE, ["postgres-16"], backend="docker", run_id="someone_else")[0]
    for cell in (mine, other):
        spec = container_spec(cell, "pw", {})
        fake_docker.create(**spec).start()
    mine.identity.workdir().mkdir()  # what provision leaves before it would have returned the handle
    planned = {"run": mine.run.to_json(), "cells": [mine.to_json()]}

    swept = tasks.sweep(planned)
    assert swept == [mine.cell_id]
    assert [c.labels["io.jsonbench.run_id"] for c in fake_docker.live.values()] == ["someone_else"]
    assert not mine.identity.workdir().exists()
    tasks.teardown(planned, mine.cell_id, None)  # again, with no handle at all: idempotent
    engine_for(mine).teardown(engine_for(mine).handle_for())
    assert len(fake_docker.live) == 1


def test_handle_never_holds_the_password(make_cells: Any, fake_docker: FakeDocker) -> None:
    """The Docker engine is mocked (none can run here); the handle crosses XCom, so it must not carry secrets."""
    cell = make_cells(SUITE, ["postgres-17"], backend="docker")[0]
    engine = engine_for(cell)
    handle = engine.handle_for()
    assert handle.labels == container_labels(cell)
    assert "password" not in json.dumps(handle.to_json()).lower()


# -- pgbench from the same image ----------------------------------------------------------------


def test_pgbench_runs_inside_this_cells_container(make_cells: Any) -> None:
    cell = make_cells(SUITE, ["postgres-18"], backend="docker")[0]
    argv = engine_for(cell).pgbench()
    assert argv is not None and argv[-1] == "pgbench" and argv[-2] == "--"
    assert Path(argv[1]) == Path(docker_exec.__file__)
    assert argv[argv.index("--container") + 1] == cell.identity.name  # the container's name
    assert argv[argv.index("--image") + 1] == "jsonbench/postgres:18"


def test_exec_helper_copies_scripts_in_and_knows_where_logs_go(tmp_path: Path) -> None:
    script = tmp_path / "read.sql"
    script.write_text("SELECT 1;\n")
    command = ["pgbench", "-n", "-c", "2", "-f", f"{script}@3", f"--file={script}", "-T", "1", "-l", f"--log-prefix={tmp_path}/txlog"]
    assert docker_exec.script_files(command) == [script, script]
    assert docker_exec.log_prefix(command, Path("/elsewhere")) == tmp_path / "txlog"
    assert docker_exec.log_prefix(["pgbench", "-l"], tmp_path) == tmp_path / "pgbench_log"
    assert docker_exec.log_prefix(["pgbench", "-T", "1"], tmp_path) is None
    with tarfile.open(fileobj=io.BytesIO(docker_exec.tar_of([script], [tmp_path]))) as tar:
        names = {m.name: m for m in tar.getmembers()}
    assert names[str(script).lstrip("/")].isfile() and names[str(tmp_path).lstrip("/")].isdir()


class _FakeExecAPI:
    """The low-level exec calls of the Docker API, for :func:`docker_exec.main` (the Docker engine is mocked)."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.created: dict[str, Any] = {}

    def exec_create(self, container: str, cmd: list[str], environment: dict[str, str], workdir: str, user: str) -> dict[str, str]:
        self.created = {"container": container, "cmd": cmd, "environment": environment, "workdir": workdir, "user": user}
        return {"Id": "exec1"}

    def exec_start(self, exec_id: str, stream: bool, demux: bool) -> Any:
        yield (b"tps = 42.0 (without initial connection time)\n", None)
        yield (None, b"a warning\n")

    def exec_inspect(self, exec_id: str) -> dict[str, int]:
        return {"ExitCode": 3}


class _FakeExecContainer:
    def __init__(self, log_dir: Path) -> None:
        self.id = "c0ffee"
        self.log_dir = log_dir
        self.archives: list[tuple[str, bytes]] = []

    def put_archive(self, path: str, data: bytes) -> bool:
        self.archives.append((path, data))
        return True

    def get_archive(self, path: str) -> tuple[Any, dict[str, Any]]:
        assert path == str(self.log_dir)
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            for name, body in (("txlog.77", b"0 1 1500 0 1 2\n"), ("unrelated.txt", b"x")):
                info = tarfile.TarInfo(f"{self.log_dir.name}/{name}")
                info.size = len(body)
                tar.addfile(info, io.BytesIO(body))
        return iter([buf.getvalue()]), {}


def test_exec_helper_runs_in_the_container_and_returns_its_output_logs_and_exit_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """The Docker engine is mocked (none can run here): the helper's round trip of script, env, logs and exit code."""
    import docker

    script = tmp_path / "s.sql"
    script.write_text("SELECT 1;\n")
    logs = tmp_path / "logs"
    logs.mkdir()
    container = _FakeExecContainer(logs)
    api = _FakeExecAPI(logs)

    class Client:
        def __init__(self, base_url: str) -> None:
            assert base_url == "unix:///fake.sock"
            self.api = api
            self.containers = self

        def get(self, name: str) -> _FakeExecContainer:
            assert name == "jsonbench-abc"
            return container

    monkeypatch.setattr(docker, "DockerClient", Client)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PGHOST", "/var/run/postgresql")
    monkeypatch.setenv("SECRET_OF_THE_WORKER", "must-not-leak")
    code = docker_exec.main(
        [
            "--base-url",
            "unix:///fake.sock",
            "--container",
            "jsonbench-abc",
            "--user",
            "1000:1000",
            "--",
            "pgbench",
            "-f",
            str(script),
            "-T",
            "1",
            "-l",
            f"--log-prefix={logs}/txlog",
        ]
    )
    assert code == 3
    out, err = capfd.readouterr()
    assert "tps = 42.0" in out and "a warning" in err
    assert api.created["cmd"][0] == "pgbench" and api.created["workdir"] == str(tmp_path) and api.created["user"] == "1000:1000"
    assert api.created["environment"]["PGHOST"] == "/var/run/postgresql"
    assert all(k.startswith("PG") for k in api.created["environment"])  # only the session's PG* variables cross over
    ((path, data),) = container.archives
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        names = set(tar.getnames())
    assert path == "/" and str(script).lstrip("/") in names and str(logs).lstrip("/") in names
    assert (logs / "txlog.77").read_text() == "0 1 1500 0 1 2\n" and not (logs / "unrelated.txt").exists()


# -- which engine, through Airflow's DockerHook ----------------------------------------------------


class _Conn:
    def __init__(self, host: str | None = None, extra: dict[str, Any] | None = None) -> None:
        self.host = host
        self.extra_dejson = extra or {}


def test_engine_url_and_registry_login_come_from_the_options_the_connection_or_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    monkeypatch.delenv("JSONBENCH_DOCKER_CONN_ID", raising=False)
    none = lambda conn_id: None  # noqa: E731 - no connection defined
    assert docker_target({}, none) == DockerTarget("unix:///var/run/docker.sock", None, None, "the local socket")
    monkeypatch.setenv("DOCKER_HOST", "tcp://127.0.0.1:2375")
    assert docker_target({}, none).base_url == "tcp://127.0.0.1:2375"
    seen: list[str] = []

    def conn(conn_id: str) -> _Conn:
        seen.append(conn_id)
        return _Conn(extra={"docker_url": "unix:///run/other.sock"})

    t = docker_target({}, conn)
    assert seen == ["jsonbench_docker"] and t.base_url == "unix:///run/other.sock" and t.conn_id == "jsonbench_docker"
    assert t.login_conn_id is None  # no registry named: the hook logs into nothing
    assert docker_target({"base_url": "unix:///x.sock"}, conn).base_url == "unix:///x.sock"  # the matrix or run wins
    registry = docker_target({"docker_conn_id": "my_registry"}, lambda c: _Conn(host="registry.example:5000"))
    assert registry.login_conn_id == "my_registry" and registry.base_url == "tcp://127.0.0.1:2375"
    seen.clear()
    assert docker_target({"docker_conn_id": ""}, conn).conn_id is None and seen == []  # "" = no connection at all
    monkeypatch.setenv("JSONBENCH_DOCKER_CONN_ID", "site_docker")
    docker_target({}, conn)
    assert seen == ["site_docker"]


def test_the_client_is_the_docker_hooks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The adapter's default client wraps the APIClient the provider's DockerHook made (pinged, logged in if asked)."""
    import airflow.providers.docker.hooks.docker as hook_module

    made: list[dict[str, Any]] = []

    class FakeHook:
        def __init__(self, **kwargs: Any) -> None:
            made.append(kwargs)

        def get_conn(self) -> str:
            return "the hook's APIClient"

    monkeypatch.setattr(hook_module, "DockerHook", FakeHook)
    client = docker_client.hook_client(DockerTarget("unix:///run/d.sock", "jsonbench_docker", "jsonbench_docker", "test"))
    assert made == [
        {
            "docker_conn_id": "jsonbench_docker",
            "base_url": "unix:///run/d.sock",
            "version": "auto",
            "timeout": docker_client.CLIENT_TIMEOUT_S,
        }
    ]
    assert client.api == "the hook's APIClient" and hasattr(client, "containers") and hasattr(client, "images")


def test_locally_built_image_missing_fails_the_plan_naming_the_setup(make_cells: Any, fake_docker: FakeDocker) -> None:
    cell = make_cells(SUITE, ["postgres-17"], backend="docker")[0]
    with pytest.raises(EngineUnavailable, match=r"jsonbench/postgres:17 is not built on this Docker engine .*\./bin/setup --docker"):
        engine_for(cell).check()
    fake_docker.images_present.add("jsonbench/postgres:17")
    engine_for(cell).check()


# -- what the quiet-window sampler reads -------------------------------------------------------------


class _SamplingApi:
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def top(self, container: str, ps_args: str | None = None) -> dict[str, Any]:
        self.calls.append(("top", ps_args))
        return {"Titles": ["PID"], "Processes": [["4101"], ["4120"], ["4133"]]}

    def stats(self, container: str, stream: bool = True, one_shot: bool = False) -> dict[str, Any]:
        self.calls.append(("stats", (stream, one_shot)))
        return {
            "cpu_stats": {"cpu_usage": {"total_usage": 12_500_000_000}},
            "memory_stats": {"usage": 300_000_000, "stats": {"total_inactive_file": 100_000_000}},
        }


def test_sampler_reads_host_pids_cgroup_cpu_and_memory_without_cache(
    make_cells: Any, fake_docker: FakeDocker, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_docker.images_present.add("jsonbench/postgres:16")
    api = _SamplingApi()
    fake_docker.api = api  # type: ignore[attr-defined]  # the stand-in's low-level API
    cell = make_cells(SUITE, ["postgres-16"], backend="docker")[0]
    engine = engine_for(cell)
    monkeypatch.setattr(ContainerGauge, "disk_bytes", lambda self, handle: 42)
    handle = engine.handle_for()
    handle.container_id = "c1"
    assert engine.pids(handle) == [4101, 4120, 4133]
    assert engine.cpu_seconds(handle) == 12.5  # nanoseconds of the container's cgroup, exited processes included
    use = engine.usage(handle)
    assert use.memory_bytes == 200_000_000 and use.disk_bytes == 42
    assert ("stats", (False, True)) in api.calls  # one reading, no wait for a second sample


@pytest.mark.parametrize("layout", ["v1-cgroupfs", "v2-systemd"])
def test_sampler_reads_the_containers_cgroup_files_when_this_host_sees_them(
    layout: str, make_cells: Any, fake_docker: FakeDocker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Microseconds per reading instead of the engine's one-second stats call (which stays the fallback)."""
    cid = "ab" * 32
    if layout == "v1-cgroupfs":
        (tmp_path / "cpuacct" / "docker" / cid).mkdir(parents=True)
        (tmp_path / "cpuacct" / "docker" / cid / "cpuacct.usage").write_text("7250000000\n")
        mem = tmp_path / "memory" / "docker" / cid
        mem.mkdir(parents=True)
        (mem / "memory.usage_in_bytes").write_text("500\n")
        (mem / "memory.stat").write_text("total_cache 300\ntotal_inactive_file 120\n")
    else:
        folder = tmp_path / "system.slice" / f"docker-{cid}.scope"
        folder.mkdir(parents=True)
        (folder / "cpu.stat").write_text("usage_usec 7250000\nuser_usec 7000000\n")
        (folder / "memory.current").write_text("500\n")
        (folder / "memory.stat").write_text("anon 200\ninactive_file 120\n")
    monkeypatch.setenv("JSONBENCH_HOST_CGROUP", str(tmp_path))
    fake_docker.api = _SamplingApi()  # type: ignore[attr-defined]  # the stand-in's low-level API
    cell = make_cells(SUITE, ["postgres-16"], backend="docker")[0]
    engine = engine_for(cell)
    monkeypatch.setattr(ContainerGauge, "disk_bytes", lambda self, handle: 0)
    handle = engine.handle_for()
    handle.container_id = cid
    assert engine.cpu_seconds(handle) == 7.25
    assert engine.usage(handle).memory_bytes == 380
    assert not [c for c in fake_docker.api.calls if c[0] == "stats"]  # type: ignore[attr-defined]  # set above, not a FakeDocker field
