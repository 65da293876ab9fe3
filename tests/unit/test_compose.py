"""docker-compose.yaml, checked without a Docker engine: services, executor, mounts, queues, secrets, image.

The file is read with YAML anchors and merge keys resolved, and ``${VAR:-default}`` /
``${VAR:?message}`` interpolated the way Compose does, so the checks see what Compose would run.
When a Compose client is installed, ``config`` (which needs no daemon) validates it too.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yaml"
AIRFLOW_SERVICES = (
    "airflow-apiserver",
    "airflow-scheduler",
    "airflow-dag-processor",
    "airflow-triggerer",
    "airflow-worker",
    "airflow-bench-worker",
    "airflow-bench-worker-2",
    "airflow-init",
)
WORKERS = ("airflow-worker", "airflow-bench-worker", "airflow-bench-worker-2")
SECRETS = (
    "JSONBENCH_METADATA_DB_PASSWORD",
    "AIRFLOW_JWT_SECRET",
    "AIRFLOW_API_SECRET_KEY",
    "AIRFLOW_FERNET_KEY",
    "JSONBENCH_ADMIN_PASSWORD",
)
ENV = {
    "JSONBENCH_METADATA_DB_PASSWORD": "from-env-db",
    "AIRFLOW_JWT_SECRET": "from-env-jwt",
    "AIRFLOW_API_SECRET_KEY": "from-env-api-key",
    "AIRFLOW_FERNET_KEY": "from-env-fernet",
    "JSONBENCH_ADMIN_PASSWORD": "from-env-admin",
    "JSONBENCH_HARDWARE_LABEL": "rack7-epyc",
    "JSONBENCH_HARDWARE_LABEL_2": "rack8-xeon",
    "JSONBENCH_HARDWARE_LABELS": "rack7-epyc,rack8-xeon",
}
_VAR = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}")


def interpolate(value: Any, env: dict[str, str]) -> Any:
    """Compose's variable substitution (``$$`` escapes, ``:-`` defaults, ``:?`` required) over a parsed file."""
    if isinstance(value, dict):
        return {k: interpolate(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, env) for v in value]
    if not isinstance(value, str):
        return value

    def sub(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        name, op, arg = m.group(1), m.group(2), m.group(3)
        have = env.get(name)
        if op in (":-", "-"):
            return have if have else (arg or "")
        if op in (":?", "?"):
            if not have:
                raise KeyError(f"{name}: {arg}")
            return have
        return have or ""

    return _VAR.sub(sub, value)


def load(env: dict[str, str] = ENV) -> dict[str, Any]:
    return interpolate(yaml.safe_load(COMPOSE.read_text()), env)


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return load()


def _env(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment") or {}
    return dict(env) if isinstance(env, dict) else dict(item.split("=", 1) for item in env)


def _mounts(service: dict[str, Any]) -> dict[str, str]:
    """Container path -> host source of each bind mount or volume."""
    out = {}
    for item in service.get("volumes") or []:
        parts = item.split(":")
        out[parts[1]] = parts[0]
    return out


def _commands(services: dict[str, Any]) -> dict[str, str]:
    return {name: s["command"] for name, s in services.items() if isinstance(s.get("command"), str)}


def _queues(command: str) -> list[str]:
    return command.split("--queues", 1)[1].split()[0].split(",") if "--queues" in command else []


def test_all_airflow_components_and_their_backing_services(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(services) == {"postgres", "redis", *AIRFLOW_SERVICES}
    commands = {
        name: services[name]["command"] for name in ("airflow-apiserver", "airflow-scheduler", "airflow-dag-processor", "airflow-triggerer")
    }
    assert commands == {
        "airflow-apiserver": "api-server",
        "airflow-scheduler": "scheduler",
        "airflow-dag-processor": "dag-processor",
        "airflow-triggerer": "triggerer",
    }
    for name in AIRFLOW_SERVICES:
        env = _env(services[name])
        assert env["AIRFLOW__CORE__EXECUTOR"] == "CeleryExecutor", name
        assert env["AIRFLOW__CORE__AUTH_MANAGER"].endswith("FabAuthManager")
        assert env["AIRFLOW__CELERY__BROKER_URL"] == "redis://redis:6379/0"
        assert env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"].endswith("@postgres/airflow")
        assert env["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"] == "http://airflow-apiserver:8080/execution/"
        assert env["JSONBENCH_BACKEND"] == "docker"
        assert services[name]["image"] == "jsonbench/airflow:3.3.2" and "build" not in services[name]
    for name, service in services.items():
        for dep in service.get("depends_on") or {}:
            assert dep in services, (name, dep)
    # Every image is one ./bin/setup --docker builds here (no registry is reachable).
    assert services["postgres"]["image"] == "jsonbench/postgres:16" and services["redis"]["image"] == "jsonbench/redis:7"


def test_nothing_listens_beyond_loopback(compose: dict[str, Any]) -> None:
    published = {name: s["ports"] for name, s in compose["services"].items() if s.get("ports")}
    assert published == {"airflow-apiserver": ["127.0.0.1:8080:8080"]}  # the UI and API, on loopback unless asked otherwise
    moved = load({**ENV, "AIRFLOW_UI_PORT": "18080"})
    assert moved["services"]["airflow-apiserver"]["ports"] == ["127.0.0.1:18080:8080"]


def test_project_folders_and_results_are_mounted_where_the_code_looks(compose: dict[str, Any]) -> None:
    for name in AIRFLOW_SERVICES:
        service = compose["services"][name]
        mounts = _mounts(service)
        home = _env(service)["JSONBENCH_HOME"]
        for folder in ("dags", "plugins", "include"):
            assert mounts[f"{home}/{folder}"] == f"./{folder}", (name, folder)
        assert mounts[_env(service)["JSONBENCH_RESULTS_DIR"]] == "./results"
        assert _env(service)["JSONBENCH_SCRATCH_DIR"] in mounts
        assert mounts[_env(service)["JSONBENCH_SQLITE_VENVS"]] == "sqlite-venvs"
    moved = load({**ENV, "JSONBENCH_RESULTS_HOST_DIR": "/srv/results"})
    assert _mounts(moved["services"]["airflow-bench-worker"])["/opt/airflow/results"] == "/srv/results"
    # paths.PROJECT_ROOT is two folders above plugins/jsonbench: the mount layout must keep that true.
    assert (ROOT / "plugins" / "jsonbench" / "paths.py").exists()


def test_the_documents_suite_finds_its_sample_and_your_documents(compose: dict[str, Any]) -> None:
    """The shipped sample sits where the documents suite looks for it (the project's examples/), and a user's folder
    of documents is mounted read-only where JSONBENCH_DOCUMENTS can point; the nightly suites and documents pass
    through to every Airflow component (the DAG files' form defaults and the plan task read them)."""
    for name in AIRFLOW_SERVICES:
        service = compose["services"][name]
        mounts, env = _mounts(service), _env(service)
        assert mounts[f"{env['JSONBENCH_HOME']}/examples"] == "./examples", name
        assert mounts["/opt/airflow/documents"] == "./examples", name
        assert all(
            f"{target}:ro" in " ".join(map(str, service["volumes"])) for target in ("/opt/airflow/examples", "/opt/airflow/documents")
        )
        assert {"JSONBENCH_SUITES", "JSONBENCH_DOCUMENTS", "JSONBENCH_READ_KEYS", "JSONBENCH_UPDATE_KEYS"} <= set(env), name
    mine = load(
        {
            **ENV,
            "JSONBENCH_DOCUMENTS_HOST_DIR": "/data/orders",
            "JSONBENCH_SUITES": "catalogue,documents",
            "JSONBENCH_DOCUMENTS": "/opt/airflow/documents/orders.jsonl",
        }
    )
    worker = mine["services"]["airflow-bench-worker"]
    assert _mounts(worker)["/opt/airflow/documents"] == "/data/orders"
    assert _env(worker)["JSONBENCH_SUITES"] == "catalogue,documents"
    assert _env(worker)["JSONBENCH_DOCUMENTS"] == "/opt/airflow/documents/orders.jsonl"


def test_two_benchmark_workers_one_per_label_one_task_at_a_time(compose: dict[str, Any]) -> None:
    services = compose["services"]
    commands = _commands(services)
    assert commands["airflow-bench-worker"] == "celery worker --queues bench-rack7-epyc --concurrency 1"
    assert commands["airflow-bench-worker-2"] == "celery worker --queues bench-rack8-xeon --concurrency 1"
    assert _queues(commands["airflow-worker"]) == ["default"]
    for label in ("rack7-epyc", "rack8-xeon"):
        consumers = [n for n, c in commands.items() if f"bench-{label}" in _queues(c)]
        assert len(consumers) == 1, (label, consumers)
    # Every component parses the DAG files with the same label, labels and queue (a worker whose parse
    # lacked a DAG could not run its tasks); the benchmark workers differ by --queues only.
    for var in ("JSONBENCH_HARDWARE_LABEL", "JSONBENCH_HARDWARE_LABELS", "JSONBENCH_QUEUE"):
        assert len({_env(services[n])[var] for n in AIRFLOW_SERVICES}) == 1, var
    env = _env(services["airflow-bench-worker-2"])
    assert env["JSONBENCH_HARDWARE_LABELS"] == "rack7-epyc,rack8-xeon" and env["JSONBENCH_QUEUE"] == "bench-rack7-epyc"
    # Both benchmark workers of this machine share its host lease: their engines never run side by side.
    for name in ("airflow-bench-worker", "airflow-bench-worker-2"):
        assert _mounts(services[name])[_env(services[name])["JSONBENCH_HOST_LOCK_DIR"]] == "host-lock"
    assert _env(services["airflow-init"])["JSONBENCH_BENCH_HOSTS"] == "2"
    # Without a label in .env, the queue and the label still agree.
    unlabelled = load({k: v for k, v in ENV.items() if not k.startswith("JSONBENCH_HARDWARE_LABEL_") and k != "JSONBENCH_HARDWARE_LABEL"})
    assert _env(unlabelled["services"]["airflow-bench-worker"])["JSONBENCH_QUEUE"] == "bench-local"
    assert _commands(unlabelled["services"])["airflow-bench-worker"] == "celery worker --queues bench-local --concurrency 1"


def test_dag_sends_benchmark_tasks_to_the_queue_named_in_the_environment() -> None:
    """Parsed for real: this host's DAG uses $JSONBENCH_QUEUE; each other label gets its own DAG on bench-<label>."""
    import sys

    code = (
        "import importlib.util, json\n"
        "spec = importlib.util.spec_from_file_location('d', 'dags/jsonb_benchmark_matrix.py')\n"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        "out = {}\n"
        "for name in ('jsonb_benchmark_matrix', 'jsonb_benchmark_matrix__rack-7'):\n"
        "    d = getattr(m, name)\n"
        "    out[name] = {t.task_id: t.queue for t in d.tasks}\n"
        "print('QUEUES' + json.dumps(out))\n"
    )
    env = {
        **os.environ,
        "JSONBENCH_QUEUE": "bench-here",
        "JSONBENCH_HARDWARE_LABEL": "here",
        "JSONBENCH_HARDWARE_LABELS": "here,rack-7",
        "PYTHONPATH": str(ROOT / "plugins"),
    }
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    line = next((ln for ln in res.stdout.splitlines() if ln.startswith("QUEUES")), None)
    assert line, res.stdout[-2000:] + res.stderr[-3000:]
    queues = json.loads(line[len("QUEUES") :])
    for dag_id, expected in (("jsonb_benchmark_matrix", "bench-here"), ("jsonb_benchmark_matrix__rack-7", "bench-rack-7")):
        tasks = queues[dag_id]
        bench = {t: q for t, q in tasks.items() if t.rsplit(".", 1)[-1] in ("provision", "teardown", "rel_small", "reads") or t == "sweep"}
        assert bench and set(bench.values()) == {expected}, (dag_id, bench)
        assert tasks["plan"] != expected and tasks["publish"] != expected  # orchestration stays on the default queue


def test_workers_reach_the_docker_engine_and_the_private_bench_network(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name in WORKERS:
        assert _mounts(services[name])["/var/run/docker.sock"] == "/var/run/docker.sock", name
        assert "bench" in services[name]["networks"], name
        assert services[name]["environment"]["DUMB_INIT_SETSID"] == "0"
        cgroup = _env(services[name])["JSONBENCH_HOST_CGROUP"]
        assert "/sys/fs/cgroup:" + cgroup + ":ro" in services[name]["volumes"], name  # read-only, for the sampler
    for name in ("airflow-apiserver", "airflow-scheduler", "airflow-dag-processor", "airflow-triggerer", "airflow-init"):
        assert "/var/run/docker.sock" not in _mounts(services[name]), name  # only workers may start containers
    network = _env(services["airflow-bench-worker"])["JSONBENCH_DOCKER_NETWORK"]
    assert compose["networks"]["bench"]["name"] == network == "jsonbench-bench"
    assert load({**ENV, "JSONBENCH_BENCH_NETWORK": "other-bench"})["networks"]["bench"]["name"] == "other-bench"


def test_no_credential_is_written_in_the_file() -> None:
    text = COMPOSE.read_text()
    for secret in (*SECRETS, "JSONBENCH_HARDWARE_LABELS"):
        with pytest.raises(KeyError, match=secret):
            load({k: v for k, v in ENV.items() if k != secret})  # Compose refuses to start without it
        assert re.search(rf"\$\{{{secret}:\?", text)
    assert "airflow:airflow@" not in text
    resolved = load()
    assert resolved["services"]["postgres"]["environment"]["POSTGRES_PASSWORD"] == "from-env-db"
    ignored = (ROOT / ".gitignore").read_text().splitlines()
    assert ".env" in ignored  # ./bin/stack env writes it; it never goes into git


def test_init_migrates_creates_the_admin_the_pool_and_the_sqlite_venvs(compose: dict[str, Any]) -> None:
    script = "\n".join(compose["services"]["airflow-init"]["command"])
    assert "airflow db migrate" in script
    assert re.search(r"airflow users create --role Admin --username admin", script)
    assert '--password "${JSONBENCH_ADMIN_PASSWORD}"' in script  # from the environment, expanded by the shell
    assert re.search(r"airflow pools set benchmark_host ", script)
    assert "python -m jsonbench.cli install-sqlite" in script


def test_image_is_airflow_3_3_2_with_the_pinned_requirements() -> None:
    dockerfile = (ROOT / "docker" / "airflow" / "Dockerfile").read_text()
    assert re.search(r"^ARG BASE_IMAGE=jsonbench/debian:bookworm$", dockerfile, re.M)
    assert "apache-airflow==3.3.2" in (ROOT / "constraints.txt").read_text().splitlines()
    assert "apache-airflow==3.3.2" in (ROOT / "requirements.txt").read_text().splitlines()
