"""The Compose stack for real: Celery workers per hardware label, runs through the scheduler, a backfill for a new label.

In the order a user lives it (each step needs the one before):

1. ``./bin/stack up`` with an ``.env`` written by ``./bin/stack env`` (fresh secrets, two labels) under a
   project name, network and port of its own: api-server, scheduler, dag-processor, triggerer, Redis, the
   metadata PostgreSQL, init, the orchestration worker and two benchmark workers;
2. over the REST API, as a user's script would (JWT from ``/auth/token``, ``POST /api/v2/dags/{id}/dagRuns``):
   one smoke run of ``jsonb_benchmark_matrix`` (label A) and of ``jsonb_benchmark_matrix__<B>``, each
   given the logical date of the DAG's next scheduled slot, then the DAGs unpaused, so the scheduler runs
   these and creates no run of its own (catchup is off and the slot is taken);
3. both runs complete, publish and are checked, their sanity checks and deterministic facts pass (never
   their state: the check judges timing bands too, ``tests.runcheck.assert_run_correct``), each label's rows
   are in the Parquet dataset under its own partition, name this machine (``boot_id``, cores, memory) and hold
   the canary measured before each cell, and the report DAG ran after them; the API server serves its report
   (the UI's Benchmark report) to signed-in users only;
4. a new host arrives: its label is added to the deployment (``JSONBENCH_HARDWARE_LABELS``, services
   recreated), its worker started, and ``airflow backfill create`` over three past dates gives three runs
   of its DAG that complete, publish under its label and whose facts hold;
5. a worker killed mid-cell (its own test, below): that cell fails and says so, the host is freed, a resume
   completes it;
6. ``./bin/stack down``: ``docker ps -a``, ``docker volume ls`` and ``docker network ls`` show nothing of
   the project, and no benchmark container is left.

The runs are narrowed to one suite and one or two engines at ``smoke``; still the module takes about 20 minutes
on a 2-core machine, so it is not part of ``./bin/test`` (nor CI): it is the benchmark command
``./bin/stack selftest`` (README), run before relying on a new deployment. The full smoke matrix on the Docker
backend (tests/docker/test_docker_engine.py) and the official-image contract stay in CI.

Independent of the clock: a scheduled run of a slot that came due while the test ran (the DAGs run nightly at
02:00) is not the scheduler "creating a run of its own" in the slot the test took, and is left out of the counts.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow.dataset as ds
import pytest

from tests.docker.docker_support import ROOT, require_docker
from tests.runcheck import assert_run_correct, states_of

sys.path.insert(0, str(ROOT / "bin"))
import airflow_api  # bin/ is not a package; the same client users run

PROJECT = "jsonbench-stacktest"
LABEL_A, LABEL_B, LABEL_NEW = "stack-a", "stack-b", "stack-new"
RUN_CONF = {"scale": "smoke", "suites": ["large_document_update"], "engines": ["postgres-16", "postgres-18"]}
BACKFILL_CONF = {"scale": "smoke", "suites": ["large_document_update"], "engines": ["postgres-17"]}
#: The killed-worker step: one cell whose workloads each run several seconds at smoke.
KILL_CONF = {"scale": "smoke", "suites": ["catalogue"], "engines": ["postgres-17"]}
RUN_TIMEOUT_S = 1500
#: How often a wait asks the API (each answer is a cheap GET; the wait ends as soon as the condition holds).
POLL_S = 2


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _project_objects() -> dict[str, list[str]]:
    """Containers, volumes and networks of the test's Compose project, and benchmark containers on its network."""
    label = f"label=com.docker.compose.project={PROJECT}"

    def names(*argv: str) -> list[str]:
        out = subprocess.run(["docker", *argv], capture_output=True, text=True, check=True).stdout
        return [line for line in out.splitlines() if line.strip()]

    return {
        "containers": names("ps", "-a", "--filter", label, "--format", "{{.Names}}"),
        "volumes": names("volume", "ls", "--filter", label, "--format", "{{.Name}}"),
        "networks": names("network", "ls", "--filter", label, "--format", "{{.Name}}")
        + names("network", "ls", "--filter", f"name=^{PROJECT}-bench$", "--format", "{{.Name}}"),
        "benchmark containers": names(
            "ps", "-a", "--filter", "label=io.jsonbench.managed=true", "--filter", f"network={PROJECT}-bench", "--format", "{{.Names}}"
        ),
    }


class Stack:
    """The running test stack: its env file, folders and a REST client."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.env_file = folder / ".env"
        self.results = folder / "results"
        self.logs = folder / "logs"
        self.port = _free_port()
        self.env = {
            **os.environ,
            "COMPOSE_PROJECT_NAME": PROJECT,
            "JSONBENCH_ENV_FILE": str(self.env_file),
            "JSONBENCH_HARDWARE_LABEL": LABEL_A,
            "JSONBENCH_HARDWARE_LABEL_2": LABEL_B,
            "JSONBENCH_RESULTS_HOST_DIR": str(self.results),
            "JSONBENCH_LOGS_HOST_DIR": str(self.logs),
            "AIRFLOW_UI_PORT": str(self.port),
            "JSONBENCH_BENCH_NETWORK": f"{PROJECT}-bench",
        }
        self.url = f"http://127.0.0.1:{self.port}"

    def run(self, *argv: str, timeout: float = 900, check: bool = True) -> subprocess.CompletedProcess[str]:
        res = subprocess.run([str(ROOT / "bin" / "stack"), *argv], env=self.env, capture_output=True, text=True, timeout=timeout)
        if check and res.returncode != 0:
            raise AssertionError(f"./bin/stack {' '.join(argv)} exited {res.returncode}:\n{res.stdout[-4000:]}\n{res.stderr[-4000:]}")
        return res

    def value(self, name: str) -> str:
        for line in self.env_file.read_text().splitlines():
            if line.startswith(f"{name}="):
                return line.split("=", 1)[1]
        raise KeyError(name)

    def set_value(self, name: str, value: str) -> None:
        lines = [line for line in self.env_file.read_text().splitlines() if not line.startswith(f"{name}=")]
        self.env_file.write_text("\n".join([*lines, f"{name}={value}"]) + "\n")

    def api(self) -> airflow_api.AirflowApi:
        return airflow_api.AirflowApi(self.url, "admin", self.value("JSONBENCH_ADMIN_PASSWORD"), timeout=60)

    def airflow(self, *argv: str, timeout: float = 300) -> str:
        """An ``airflow`` CLI command inside the scheduler's container (where a user types it)."""
        res = self.run("compose", "exec", "-T", "airflow-scheduler", "airflow", *argv, timeout=timeout)
        return res.stdout

    def diagnostics(self) -> str:
        """What a failed step leaves to read: the services' states and the last lines of each one's log."""
        res = self.run("compose", "ps", check=False)
        logs = [
            self.run("compose", "logs", "--no-color", "--tail", "25", name, check=False).stdout[-2500:]
            for name in ("airflow-init", "airflow-scheduler", "airflow-bench-worker", "airflow-bench-worker-2", "airflow-worker")
        ]
        return res.stdout + "\n" + "\n".join(logs)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    require_docker(
        "jsonbench/airflow:3.3.2", "jsonbench/redis:7", "jsonbench/postgres:16", "jsonbench/postgres:17", "jsonbench/postgres:18"
    )
    folder = tmp_path_factory.mktemp("stack")
    folder.chmod(0o755)
    st = Stack(folder)
    leftovers = _project_objects()
    assert not any(leftovers.values()), f"objects of an earlier test stack are still there: {leftovers}"
    st.run("env")
    mode = st.env_file.stat().st_mode & 0o777
    assert mode == 0o600, oct(mode)  # secrets readable by their owner only
    try:
        up = st.run("up", timeout=1800, check=False)
        if up.returncode != 0:
            raise AssertionError(f"./bin/stack up exited {up.returncode}:\n{up.stdout[-3000:]}\n{up.stderr[-3000:]}\n{st.diagnostics()}")
        yield st
    finally:
        st.run("down", timeout=600, check=False)  # also when a step failed; idempotent


def _assert_correct(api: airflow_api.AirflowApi, dag_id: str, run_id: str, stack: Stack) -> None:
    """A finished run completed, published, was checked, and its sanity checks and deterministic facts passed."""
    try:
        assert_run_correct(stack.results, run_id, states_of(api.task_instances(dag_id, run_id)))
    except AssertionError as exc:
        raise AssertionError(f"{dag_id} {run_id}: {exc}\n{stack.diagnostics()}") from None


def _wait_finished(api: airflow_api.AirflowApi, dag_id: str, run_id: str, stack: Stack) -> dict[str, Any]:
    try:
        return api.wait(dag_id, run_id, timeout=RUN_TIMEOUT_S, poll=POLL_S)
    except TimeoutError as exc:
        raise AssertionError(f"{exc}\n{stack.diagnostics()}") from None


def _wait_run(api: airflow_api.AirflowApi, dag_id: str, run_id: str, stack: Stack) -> dict[str, Any]:
    run = _wait_finished(api, dag_id, run_id, stack)
    _assert_correct(api, dag_id, run_id, stack)
    return run


def _not_later_slots(runs: list[dict[str, Any]], taken: datetime) -> list[dict[str, Any]]:
    """The runs but the scheduled ones of a slot after ``taken`` (one that came due while the test ran)."""
    return [r for r in runs if not (r.get("run_type") == "scheduled" and _iso(r["logical_date"]) > taken)]


def _partitions(results: Path, table: str = "measurements") -> dict[tuple[str, str], int]:
    """Rows per (hardware_label, run_key) in the Parquet dataset, read as any pyarrow user reads it."""
    dataset = ds.dataset(str(results / table), format="parquet", partitioning="hive")
    tbl = dataset.to_table(columns=["hardware_label", "run_key"])
    counts: dict[tuple[str, str], int] = {}
    for label, key in zip(tbl.column("hardware_label").to_pylist(), tbl.column("run_key").to_pylist(), strict=True):
        counts[(str(label), str(key))] = counts.get((str(label), str(key)), 0) + 1
    return counts


def _assert_identity_and_canary(results: Path, label: str) -> None:
    """Every row of ``label`` names the host it ran on, and a canary ran before each of its cells.

    Deterministic facts of a worker in a container: it shares this machine's kernel, so its rows carry this
    machine's ``boot_id`` (the history keys a host by it), its cores and memory; the canary's components are
    staged beside every cell the worker measured, each with a positive time.
    """
    dataset = ds.dataset(str(results / "measurements"), format="parquet", partitioning="hive")
    tbl = dataset.to_table(
        columns=[
            "hardware_label",
            "suite",
            "workload",
            "variant",
            "metric",
            "value",
            "host_boot_id",
            "host_cores",
            "host_memory_bytes",
            "engine",
        ],
        filter=ds.field("hardware_label") == label,
    ).to_pylist()
    assert tbl, f"no rows of {label}"
    boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    assert {r["host_boot_id"] for r in tbl} == {boot}, (label, {r["host_boot_id"] for r in tbl})
    assert all((r["host_cores"] or 0) > 0 and (r["host_memory_bytes"] or 0) > 0 for r in tbl), label
    canary = [r for r in tbl if r["suite"] == "host" and r["workload"] == "canary"]
    measured = {(r["suite"], r["engine"]) for r in tbl if r["suite"] != "host"}
    before = {r["variant"] for r in canary if str(r["variant"]).startswith("before.")}
    assert before == {f"before.{suite}" for suite, _ in measured}, (label, before, measured)
    components = {r["metric"] for r in canary}
    assert {"cpu_single", "cpu_all", "total"} <= components, (label, components)
    assert all(r["value"] is not None and r["value"] > 0 for r in canary), label


def _iso(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def test_two_labels_through_the_scheduler_a_backfill_for_a_new_label_and_nothing_left(stack: Stack) -> None:
    started = time.monotonic()
    api = stack.api()
    dags = {LABEL_A: "jsonb_benchmark_matrix", LABEL_B: f"jsonb_benchmark_matrix__{LABEL_B}"}

    # -- 2. trigger both labels over the REST API, in the slot of the next scheduled run -----------------
    for dag_id in dags.values():
        dag = api.wait_for_dag(dag_id, timeout=1200)
        assert dag["is_paused"], f"{dag_id} should start paused (unpausing starts a run at once)"
    report = api.wait_for_dag("jsonb_benchmark_report", timeout=300)
    assert not report["is_paused"], "the report DAG must not stay paused, or no report follows a nightly run"
    runs: dict[str, str] = {}
    slots: dict[str, datetime] = {}
    for dag_id in dags.values():
        run = api.trigger(dag_id, RUN_CONF, logical_date="next")
        runs[dag_id] = run["dag_run_id"]
        slots[dag_id] = _iso(run["logical_date"])
        api.set_paused(dag_id, False)

    # -- 3. both complete through the scheduler and the Celery workers, facts hold; rows under each label --
    finished = {dag_id: _wait_run(api, dag_id, run_id, stack) for dag_id, run_id in runs.items()}
    for dag_id in dags.values():
        # The scheduler found the slot taken and created no run of its own in it (no laptop run started).
        mine = _not_later_slots(api.runs(dag_id), slots[dag_id])
        assert [r["dag_run_id"] for r in mine] == [runs[dag_id]], api.runs(dag_id)
    for dag_id in dags.values():
        queues = {
            ti["queue"] for ti in api.task_instances(dag_id, runs[dag_id]) if ti["task_id"].split(".")[-1] in ("provision", "teardown")
        }
        label = next(lab for lab, d in dags.items() if d == dag_id)
        assert queues == {f"bench-{label}"}, (dag_id, queues)
    counts = _partitions(stack.results)
    for label in dags:
        keys = [k for (lab, k), n in counts.items() if lab == label and n > 0]
        assert len(keys) == 1, (label, counts)
        assert (stack.results / "measurements" / f"hardware_label={label}").is_dir()
    assert {lab for lab, _ in counts} == set(dags)
    for label in dags:
        _assert_identity_and_canary(stack.results, label)

    # The report DAG (scheduled on the Asset the runs update) ran after both and succeeded.
    deadline = time.monotonic() + 900
    while True:
        reports = [r for r in api.runs("jsonb_benchmark_report") if r.get("state") == "success" and r.get("start_date")]
        if (
            any(_iso(r["start_date"]) >= min(_iso(f["start_date"]) for f in finished.values()) for r in reports)
            and (stack.results / "report" / "index.html").exists()
        ):
            break
        if time.monotonic() > deadline:
            raise AssertionError(
                f"no successful report run after the benchmark runs: {api.runs('jsonb_benchmark_report')}\n{stack.diagnostics()}"
            )
        time.sleep(POLL_S)
    # The UI's Benchmark report: the API server container serves the report the report DAG wrote, to signed-in users only.
    served = f"{stack.url}/jsonbench/results/report/index.html"
    with urllib.request.urlopen(urllib.request.Request(served, headers={"Authorization": f"Bearer {api.token()}"}), timeout=60) as r:
        assert r.status == 200 and r.read() == (stack.results / "report" / "index.html").read_bytes()
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(served, timeout=60)
    assert refused.value.code in (401, 403)

    # -- 4. a new host: its label joins the deployment, its worker starts, a backfill of three past dates --
    stack.set_value("JSONBENCH_HARDWARE_LABELS", f"{LABEL_A},{LABEL_B},{LABEL_NEW}")
    stack.set_value("JSONBENCH_BENCH_HOSTS", "3")
    stack.run("compose", "up", "-d", timeout=900)
    stack.run(
        "compose",
        "run",
        "-d",
        "--no-deps",
        "airflow-bench-worker",
        "celery",
        "worker",
        "--queues",
        f"bench-{LABEL_NEW}",
        "--concurrency",
        "1",
        timeout=300,
    )
    airflow_api.wait_for_api(stack.url, 600)
    api = stack.api()
    new_dag = f"jsonb_benchmark_matrix__{LABEL_NEW}"
    slot = _iso(api.wait_for_dag(new_dag, timeout=1200)["next_dagrun_logical_date"])
    from_date = (slot - timedelta(days=2)).date().isoformat()
    to_date = (slot + timedelta(days=1)).date().isoformat()  # midnight after the last slot: the slot is included
    out = stack.airflow(
        "backfill",
        "create",
        "--dag-id",
        new_dag,
        "--from-date",
        from_date,
        "--to-date",
        to_date,
        "--dag-run-conf",
        json.dumps(BACKFILL_CONF),
        "--max-active-runs",
        "1",
        timeout=300,
    )
    api.set_paused(new_dag, False)  # backfill runs, like all runs, wait for an unpaused DAG; the slot is taken
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while True:
        backfill_runs = [r for r in api.runs(new_dag) if r.get("run_type") == "backfill"]
        if len(backfill_runs) == 3 and all(r["state"] in airflow_api.FINISHED for r in backfill_runs):
            break
        if time.monotonic() > deadline:
            raise AssertionError(f"backfill did not finish: {api.runs(new_dag)}\n{out}\n{stack.diagnostics()}")
        time.sleep(POLL_S)
    for r in backfill_runs:
        _assert_correct(api, new_dag, r["dag_run_id"], stack)
    # The three backfill runs and no scheduled one (but of a slot that came due while the test ran).
    assert len(_not_later_slots(api.runs(new_dag), slot)) == 3, api.runs(new_dag)
    logical = sorted(_iso(r["logical_date"]).date() for r in backfill_runs)
    assert logical == [(slot - timedelta(days=d)).date() for d in (2, 1, 0)]
    counts = _partitions(stack.results)
    assert len([k for (lab, k) in counts if lab == LABEL_NEW]) == 3, counts
    dates = sorted(p.name for p in (stack.results / "measurements" / f"hardware_label={LABEL_NEW}").iterdir())
    assert dates == [f"run_date={d.isoformat()}" for d in logical]
    print(f"stack test: runs and backfill done in {time.monotonic() - started:.0f}s")


def test_a_worker_killed_mid_cell_fails_that_cell_frees_the_host_and_a_resume_completes_it(stack: Stack) -> None:
    """The benchmark worker's container is killed while a workload of the cell runs.

    The scheduler fails that workload once its heartbeats stop (``TASK_INSTANCE_HEARTBEAT_TIMEOUT``, 120 s in the
    stack), and never retries it on the engine the dead attempt left (workloads have no retries); the cell's teardown
    runs on the restarted worker, removes the engine and gives the host lease back; the run fails and its alert names
    the workload. A resume of the run (``resume_of``) measures the cell again on a fresh engine and publishes it under
    the first run's id, with its facts holding.
    """
    api = stack.api()
    dag_id = "jsonb_benchmark_matrix"
    api.wait_for_dag(dag_id, timeout=1200)
    api.set_paused(dag_id, False)
    cell = f"{KILL_CONF['suites'][0]}__{KILL_CONF['engines'][0]}"
    run_id = api.trigger(dag_id, KILL_CONF, logical_date="now")["dag_run_id"]
    deadline = time.monotonic() + RUN_TIMEOUT_S
    victim = None
    while victim is None:
        running = [
            ti["task_id"]
            for ti in api.task_instances(dag_id, run_id)
            if ti["task_id"].startswith(f"{cell}.")
            and ti["task_id"].rpartition(".")[2] not in ("provision", "teardown")
            and ti["state"] == "running"
        ]
        victim = running[0] if running else None
        assert time.monotonic() < deadline, f"no workload of {cell} ran: {states_of(api.task_instances(dag_id, run_id))}"
        time.sleep(0.5)
    stack.run("compose", "kill", "airflow-bench-worker", timeout=120)
    stack.run("compose", "start", "airflow-bench-worker", timeout=300)
    run = _wait_finished(api, dag_id, run_id, stack)
    states = states_of(api.task_instances(dag_id, run_id))
    assert run["state"] == "failed", (run, states)
    assert states[victim] == "failed", (victim, states)  # failed, not retried on the engine its attempt left
    assert states[f"{cell}.teardown"] == "success", states
    status = stack.run("compose", "exec", "-T", "airflow-bench-worker", "python", "-m", "jsonbench.cli", "host", "status").stdout
    assert "the host is free" in status, status
    assert not _project_objects()["benchmark containers"], "the killed cell's engine is still there"
    alerts = [json.loads(f.read_text()) for f in (stack.results / "alerts").glob("*.json")]
    named = [a for a in alerts if a.get("run_id") == run_id and victim in (a.get("summary") or {}).get("failed_tasks", [])]
    assert named, f"no alert of {run_id} names {victim}: {[a.get('subject') for a in alerts]}"

    resume = api.trigger(dag_id, {**KILL_CONF, "resume_of": run_id}, logical_date="now")["dag_run_id"]
    _wait_finished(api, dag_id, resume, stack)
    assert_run_correct(stack.results, run_id, states_of(api.task_instances(dag_id, resume)))
    assert _partitions(stack.results).get((LABEL_A, _run_key(run_id)), 0) > 0


def _run_key(run_id: str) -> str:
    from jsonbench.dataset.schema import run_key

    return run_key(run_id)


def test_stack_down_leaves_nothing_of_the_project(stack: Stack) -> None:
    """Runs after the test above (same module-scoped stack): bring it down here and look."""
    res = stack.run("down", timeout=600)
    left = _project_objects()
    assert not any(left.values()), f"left after ./bin/stack down: {left}\n{res.stdout}{res.stderr}"
