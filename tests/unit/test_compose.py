"""docker-compose.yaml, checked without a Docker engine: services, executor, mounts, queues, secrets, image.

The file is read with YAML anchors and merge keys resolved, and ``${VAR:-default}`` /
``${VAR:?message}`` interpolated the way Compose does, so the checks see what Compose would run.
When a Compose client is installed, ``config`` (which needs no daemon) validates it too.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yaml"
AIRFLOW_SERVICES = ("airflow-apiserver", "airflow-scheduler", "airflow-dag-processor", "airflow-triggerer", "airflow-worker", "airflow-bench-worker", "airflow-init")
ENV = {
    "JSONBENCH_METADATA_DB_PASSWORD": "from-env-db",
    "AIRFLOW_JWT_SECRET": "from-env-jwt",
    "JSONBENCH_ADMIN_PASSWORD": "from-env-admin",
    "JSONBENCH_HARDWARE_LABEL": "rack7-epyc",
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


def test_all_airflow_components_and_their_backing_services(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(services) >= {"postgres", "redis", *AIRFLOW_SERVICES}
    commands = {name: services[name]["command"] for name in ("airflow-apiserver", "airflow-scheduler", "airflow-dag-processor", "airflow-triggerer")}
    assert commands == {"airflow-apiserver": "api-server", "airflow-scheduler": "scheduler", "airflow-dag-processor": "dag-processor", "airflow-triggerer": "triggerer"}
    for name in AIRFLOW_SERVICES:
        env = _env(services[name])
        assert env["AIRFLOW__CORE__EXECUTOR"] == "CeleryExecutor", name
        assert env["AIRFLOW__CELERY__BROKER_URL"].startswith("redis://") and "@redis:" in env["AIRFLOW__CELERY__BROKER_URL"]
        assert env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"].endswith("@postgres/airflow")
        assert env["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"] == "http://airflow-apiserver:8080/execution/"
        assert env["JSONBENCH_BACKEND"] == "docker"
    for name, service in services.items():
        for dep in service.get("depends_on") or {}:
            assert dep in services, (name, dep)
    assert services["airflow-apiserver"]["ports"] == ["127.0.0.1:8080:8080"]  # the UI on loopback unless asked otherwise


def test_project_folders_and_results_are_mounted_where_the_code_looks(compose: dict[str, Any]) -> None:
    for name in AIRFLOW_SERVICES:
        service = compose["services"][name]
        mounts = _mounts(service)
        home = _env(service)["JSONBENCH_HOME"]
        for folder in ("dags", "plugins", "include"):
            assert mounts[f"{home}/{folder}"] == f"./{folder}", (name, folder)
        assert mounts[_env(service)["JSONBENCH_RESULTS_DIR"]] == "./results"
        assert _env(service)["JSONBENCH_SCRATCH_DIR"] in mounts
    # paths.PROJECT_ROOT is two folders above plugins/jsonbench: the mount layout must keep that true.
    assert (ROOT / "plugins" / "jsonbench" / "paths.py").exists()


def test_benchmark_worker_owns_its_hosts_queue_one_task_at_a_time(compose: dict[str, Any]) -> None:
    services = compose["services"]
    bench = services["airflow-bench-worker"]
    queue = _env(bench)["JSONBENCH_QUEUE"]
    assert queue == "bench-rack7-epyc" == f"bench-{ENV['JSONBENCH_HARDWARE_LABEL']}"
    assert bench["command"] == f"celery worker --queues {queue} --concurrency 1"
    assert _env(bench)["JSONBENCH_HARDWARE_LABEL"] == "rack7-epyc"
    consumers = [n for n, s in services.items() if isinstance(s.get("command"), str) and "--queues" in s["command"] and queue in s["command"].split("--queues", 1)[1].split()[0].split(",")]
    assert consumers == ["airflow-bench-worker"]
    assert services["airflow-worker"]["command"].split("--queues ")[1].split()[0] == "default"
    # Every component parses the DAG with the same queue (the dag-processor's value is the one that counts).
    assert {_env(services[n])["JSONBENCH_QUEUE"] for n in AIRFLOW_SERVICES} == {queue}
    # Without a label in .env, the queue and the label still agree.
    assert _env(load({k: v for k, v in ENV.items() if k != "JSONBENCH_HARDWARE_LABEL"})["services"]["airflow-bench-worker"])["JSONBENCH_QUEUE"] == "bench-local"


def test_dag_sends_benchmark_tasks_to_the_queue_named_in_the_environment() -> None:
    """Parsed for real: this host's DAG uses $JSONBENCH_QUEUE; each other label gets its own DAG on bench-<label>."""
    import subprocess
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
    env = {**os.environ, "JSONBENCH_QUEUE": "bench-here", "JSONBENCH_HARDWARE_LABEL": "here", "JSONBENCH_HARDWARE_LABELS": "here,rack-7", "PYTHONPATH": str(ROOT / "plugins")}
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    line = next((ln for ln in res.stdout.splitlines() if ln.startswith("QUEUES")), None)
    assert line, res.stdout[-2000:] + res.stderr[-3000:]
    queues = json.loads(line[len("QUEUES"):])
    for dag_id, expected in (("jsonb_benchmark_matrix", "bench-here"), ("jsonb_benchmark_matrix__rack-7", "bench-rack-7")):
        tasks = queues[dag_id]
        bench = {t: q for t, q in tasks.items() if t.rsplit(".", 1)[-1] in ("provision", "teardown", "rel_small", "reads") or t == "sweep"}
        assert bench and set(bench.values()) == {expected}, (dag_id, bench)
        assert tasks["plan"] != expected and tasks["publish"] != expected  # orchestration stays on the default queue


def test_workers_reach_the_docker_engine_and_the_private_bench_network(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name in ("airflow-worker", "airflow-bench-worker"):
        assert _mounts(services[name])["/var/run/docker.sock"] == "/var/run/docker.sock", name
    for name in ("airflow-apiserver", "airflow-scheduler", "airflow-dag-processor", "airflow-triggerer"):
        assert "/var/run/docker.sock" not in _mounts(services[name]), name  # only workers may start containers
    bench = services["airflow-bench-worker"]
    network = _env(bench)["JSONBENCH_DOCKER_NETWORK"]
    assert "bench" in bench["networks"] and compose["networks"]["bench"]["name"] == network


def test_no_credential_is_written_in_the_file() -> None:
    text = COMPOSE.read_text()
    for secret in ("JSONBENCH_METADATA_DB_PASSWORD", "AIRFLOW_JWT_SECRET", "JSONBENCH_ADMIN_PASSWORD"):
        with pytest.raises(KeyError, match=secret):
            load({k: v for k, v in ENV.items() if k != secret})  # Compose refuses to start without it
        assert re.search(rf"\$\{{{secret}:\?", text)
    assert "airflow:airflow@" not in text
    resolved = load()
    assert resolved["services"]["postgres"]["environment"]["POSTGRES_PASSWORD"] == "from-env-db"


def test_init_migrates_creates_the_admin_and_the_pool(compose: dict[str, Any]) -> None:
    script = "\n".join(compose["services"]["airflow-init"]["command"])
    assert "airflow db migrate" in script
    assert re.search(r"airflow users create --role Admin --username admin", script)
    assert '--password "${JSONBENCH_ADMIN_PASSWORD}"' in script  # from the environment, expanded by the shell
    assert re.search(r"airflow pools set benchmark_host ", script)


def test_image_is_airflow_3_3_2_with_the_pinned_requirements() -> None:
    dockerfile = (ROOT / "docker" / "airflow" / "Dockerfile").read_text()
    assert re.search(r"^ARG AIRFLOW_IMAGE=apache/airflow:3\.3\.2-python3\.11$", dockerfile, re.M)
    assert "pip install --no-cache-dir -r /opt/jsonbench/requirements.txt -c /opt/jsonbench/constraints.txt" in dockerfile
    assert "apache-airflow==3.3.2" in (ROOT / "constraints.txt").read_text().splitlines()
    ignore = (ROOT / ".dockerignore").read_text().splitlines()
    assert "*" in ignore and "!requirements.txt" in ignore and "!constraints.txt" in ignore  # the venv never goes to the daemon


@pytest.mark.skipif(not (shutil.which("docker-compose") or shutil.which("docker")), reason="no Compose client installed")
def test_compose_client_accepts_the_file(tmp_path: Path) -> None:
    """``config`` parses and validates the file without a daemon (when a Compose client is installed)."""
    env = {"PATH": "/usr/bin:/usr/local/bin:/bin", **ENV}
    for argv in (["docker", "compose"], ["docker-compose"]):
        if not shutil.which(argv[0]) or subprocess.run([*argv, "version"], capture_output=True, env=env, timeout=60).returncode != 0:
            continue  # not installed, or the docker client without its compose plugin
        res = subprocess.run([*argv, "-f", str(COMPOSE), "config", "-q"], capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
        assert res.returncode == 0, res.stdout + res.stderr
        return
    pytest.skip("no Compose implementation (docker compose plugin or docker-compose) installed")
