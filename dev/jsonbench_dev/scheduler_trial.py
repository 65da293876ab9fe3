"""Benchmark command: one run of the benchmark DAG through a real scheduler, triggered over the REST API.

``jsonbench-dev scheduler-run --scale smoke`` starts a private Airflow (``airflow
standalone``: API server, scheduler with the LocalExecutor, DAG processor, triggerer) on loopback
with its own metadata database and scratch folder, triggers ``jsonb_benchmark_matrix`` the way a
user's script would (a JWT from ``/auth/token``, then ``POST /api/v2/dags/{id}/dagRuns``), samples
the live engines every 0.2 s while the run goes on (:mod:`jsonbench.host.census`), and reports the run's
state, its wall time from trigger to end, the time of each kind of task, and the most engines
that were ever alive at once. It stops everything it started.

``--floor`` then runs :mod:`jsonbench_dev.floor_dag` in the same Airflow: one task instance per task that ran,
sleeping its duration, one at a time through the same pool. Its wall time over its task sum is Airflow's own
hand-off from task to task; the benchmark DAG's own share of its ratio is what lies beyond it.

The DAG's nightly schedule is switched off for this private Airflow (``JSONBENCH_SCHEDULE=none``):
unpausing a DAG with ``catchup=False`` would otherwise start the latest nightly interval at once.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from jsonbench import paths
from jsonbench.host.census import Census
from jsonbench_dev import child_pythonpath

DAG_ID = "jsonb_benchmark_matrix"


class _Api:
    def __init__(self, base: str) -> None:
        self.base = base
        self.token: str | None = None

    def call(self, method: str, path: str, body: Any = None, timeout: float = 60) -> Any:
        """One request; a GET that times out (an API server on a busy 2-core machine) is asked again, up to 5 times."""
        for attempt in range(5 if method == "GET" else 1):
            try:
                return self._call(method, path, body, timeout)
            except (TimeoutError, urllib.error.URLError) as exc:
                if isinstance(exc, urllib.error.HTTPError) or attempt == 4 or method != "GET":
                    raise
                time.sleep(2.0)
        raise AssertionError("unreachable")

    def _call(self, method: str, path: str, body: Any, timeout: float) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method)
        req.add_header("Content-Type", "application/json")
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            raw = resp.read()
        return json.loads(raw) if raw else None

    def wait(self, method: str, path: str, deadline: float, body: Any = None) -> Any:
        last: Exception | None = None
        while time.monotonic() < deadline:
            try:
                return self.call(method, path, body)
            except urllib.error.HTTPError as exc:
                if exc.code != 404:
                    raise
                last = exc
                time.sleep(1.0)
            except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
                last = exc
                time.sleep(1.0)
        raise TimeoutError(f"{method} {path} did not answer: {last}")


def _env(home: Path, port: int, scratch: Path) -> dict[str, str]:
    from jsonbench.environment import defaults

    env = dict(os.environ)
    env.update(
        {
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__CORE__DAGS_FOLDER": str(paths.PROJECT_ROOT / "dags"),
            "AIRFLOW__CORE__PLUGINS_FOLDER": str(paths.PROJECT_ROOT / "plugins"),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__API__HOST": "127.0.0.1",
            "AIRFLOW__API__PORT": str(port),
            "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://127.0.0.1:{port}/execution/",
            # The log servers of the scheduler's workers and of the triggerer need free ports too (8793/8794 by default).
            "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(free_port()),
            "AIRFLOW__LOGGING__TRIGGER_LOG_SERVER_PORT": str(free_port()),
            "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "True",
            "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "30",
            "AIRFLOW__DAG_PROCESSOR__MIN_FILE_PROCESS_INTERVAL": defaults()["AIRFLOW__DAG_PROCESSOR__MIN_FILE_PROCESS_INTERVAL"],
            "JSONBENCH_SCHEDULE": "none",
            "JSONBENCH_SCRATCH_DIR": str(scratch),
            "JSONBENCH_HOST_LOCK_DIR": str(scratch / ".host-lease"),
            "PYTHONPATH": child_pythonpath(paths.PROJECT_ROOT / "plugins", env),
        }
    )
    return env


def _processes_of(home: Path, session: int) -> list[int]:
    """Every process of this private Airflow: in standalone's session, or with its home in the environment.

    Both are needed: some of Airflow's processes start sessions of their own, and some rename
    themselves with setproctitle, which overwrites what ``/proc/<pid>/environ`` shows.
    """
    wanted = f"AIRFLOW_HOME={home}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            sid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[3])
            if sid == session or wanted in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def _stop(proc: subprocess.Popen[bytes], home: Path) -> None:
    """SIGTERM to standalone's group, then SIGKILL to anything still running with this Airflow home."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        pass
    for _ in range(3):
        left = _processes_of(home, proc.pid)
        if not left:
            return
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(1.0)


def _cpu_by_component(pids: list[int]) -> dict[int, tuple[str, float]]:
    """Each live process's name (:func:`jsonbench.host.load.process_name`: ``airflow scheduler``, ``airflow
    api_server``...) and its CPU seconds so far (:func:`jsonbench.host.load.cpu_seconds_of`, its own, not its reaped
    children's)."""
    from jsonbench.host.load import cpu_seconds_of, process_name

    out: dict[int, tuple[str, float]] = {}
    for pid in pids:
        if not Path(f"/proc/{pid}").exists():
            continue  # gone
        out[pid] = (process_name(pid)[:60], cpu_seconds_of([pid], children=False))
    return out


def airflow_cpu(before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]]) -> dict[str, float]:
    """CPU seconds each long-lived Airflow component spent between two snapshots, by name.

    What the orchestrator itself costs beside the measure windows on a 2-core host: a scheduler that loops more often
    to start the next task sooner spends it here. Task processes that came and went between the snapshots are not in
    it (their time is the tasks').
    """
    spent: dict[str, float] = {}
    for pid, (name, cpu) in after.items():
        was = before.get(pid)
        if was is None:
            continue
        spent[name] = spent.get(name, 0.0) + max(0.0, cpu - was[1])
    return spent


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _task_instances(api: _Api, run_id: str, dag_id: str = DAG_ID) -> list[dict[str, Any]]:
    """Every task instance of the run: the API returns at most its page limit (100 by default) per call."""
    out: list[dict[str, Any]] = []
    while True:
        page = api.call("GET", f"/api/v2/dags/{dag_id}/dagRuns/{run_id}/taskInstances?limit=100&offset={len(out)}")
        out += page["task_instances"]
        if not page["task_instances"] or len(out) >= page.get("total_entries", 0):
            return out


def _task_seconds(tis: list[dict[str, Any]]) -> dict[str, float]:
    """Seconds per task kind (the task id without its cell group), summed over the run's task instances."""
    kinds: dict[str, float] = {}
    for ti in tis:
        if ti.get("duration"):
            kind = ti["task_id"].rpartition(".")[2]
            kinds[kind] = kinds.get(kind, 0.0) + float(ti["duration"])
    return kinds


def _when(value: Any) -> float | None:
    """An API timestamp (ISO 8601) as epoch seconds, or None."""
    if not value:
        return None
    from datetime import datetime

    return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()


def gaps(tis: list[dict[str, Any]]) -> dict[str, float]:
    """Where the time between tasks went, in a serial chain: what the wall time holds beyond the task sum.

    For each task that ran (a duration), the gap from the latest end of a task before it started to its start,
    split at its ``queued_when``: before it, the scheduler's loop noticing the end and queueing the next task (it
    sleeps ``[scheduler] scheduler_idle_sleep_time``, 1 s, whenever a loop found nothing to do); after it, the
    executor starting the task's process. A gap in which empty tasks completed (one scheduler loop each: the groups'
    ``done`` links cost a run 30 of them, one by one along the chain, when the DAG had them) is counted apart.
    """
    ran = sorted(
        (
            (s, e, _when(t.get("queued_when")))
            for t in tis
            if t.get("duration") and (s := _when(t.get("start_date"))) and (e := _when(t.get("end_date")))
        ),
        key=lambda x: x[0],
    )
    links = sorted(e for t in tis if not t.get("duration") and t.get("state") == "success" and (e := _when(t.get("end_date"))))
    out = {"gaps": 0.0, "count": 0.0, "to_queued_s": 0.0, "to_start_s": 0.0, "with_links_s": 0.0, "links": 0.0}
    last_end: float | None = None
    for start, end, queued in ran:
        if last_end is not None and start > last_end:
            gap = start - last_end
            out["gaps"] += gap
            out["count"] += 1
            q = min(max(queued or start, last_end), start)
            out["to_queued_s"] += q - last_end
            out["to_start_s"] += start - q
            inside = sum(1 for x in links if last_end < x < start)
            if inside:
                out["with_links_s"] += gap
                out["links"] += inside
        last_end = end if last_end is None else max(last_end, end)
    return out


#: How often the trial asks the API server whether the run has ended (seconds). Each ask costs the API server about
#: 40 ms of CPU (its median in the access log of a smoke run): every 2 s, it was the run's most frequent
#: request (155 of them) and a neighbour of the measure windows that a nightly run, with nobody polling, does not have.
#: The wall time is taken from the run's own end, so a slow poll does not lengthen it.
POLL_S = 30.0


def durations_in_order(tis: list[dict[str, Any]]) -> list[float]:
    """The durations of the task instances that ran, in the order they started: what the floor DAG sleeps."""
    ran = [(s, float(t["duration"])) for t in tis if t.get("duration") and (s := _when(t.get("start_date")))]
    return [d for _, d in sorted(ran)]


def _trigger_and_wait(api: _Api, dag_id: str, conf: dict[str, Any], timeout_s: float) -> tuple[str, str, float]:
    """Unpause ``dag_id``, trigger one run with ``conf`` and wait for its end: (run id, state, wall seconds).

    The wall time runs from the trigger to the run's own end as the scheduler wrote it, not to the poll that saw it.
    """
    api.call("PATCH", f"/api/v2/dags/{dag_id}", {"is_paused": False})
    t0, t0_epoch = time.monotonic(), time.time()
    run = api.call("POST", f"/api/v2/dags/{dag_id}/dagRuns", {"logical_date": None, "conf": conf})
    run_id = run["dag_run_id"]
    state = run["state"]
    while state not in ("success", "failed") and time.monotonic() - t0 < timeout_s:
        time.sleep(POLL_S)
        run = api.call("GET", f"/api/v2/dags/{dag_id}/dagRuns/{run_id}")
        state = run["state"]
    ended = _when(run.get("end_date")) if state in ("success", "failed") else None
    return run_id, state, (ended - t0_epoch) if ended else time.monotonic() - t0


def scheduler_run(conf: dict[str, Any], port: int | None = None, timeout_s: float = 3600, floor: bool = False) -> dict[str, Any]:
    """Run the DAG once through a private scheduler; return state, timings and the engine census.

    With ``floor``, the same scheduler then runs :mod:`jsonbench_dev.floor_dag` with one sleep per task that ran, of
    its duration (``out["floor"]``): the wall time that floor holds beyond its task sum is Airflow's hand-off alone.
    """
    import sys

    from jsonbench_dev import floor as floor_tool

    port = port or free_port()
    # A SIGTERM (a stopped job, a timeout) must still stop the Airflow this started: run the finally block.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    cache = paths.PROJECT_ROOT / ".cache"
    cache.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="sched-", dir=cache))  # short: engines' unix sockets live under it
    home, scratch = work / "airflow", work / "scratch"
    home.mkdir()
    scratch.mkdir()
    # mkdtemp makes `work` 0700: the servers' unprivileged user must pass through it to reach scratch/ (not list it).
    work.chmod(0o711)
    scratch.chmod(0o755)
    env = _env(home, port, scratch)
    if floor:  # the project's DAG files and the floor DAG, in a folder of this Airflow's own
        env["AIRFLOW__CORE__DAGS_FOLDER"] = str(floor_tool.dag_folder(work, with_project=True))
    airflow = shutil.which("airflow", path=env.get("PATH")) or "airflow"
    for argv in ([airflow, "db", "migrate"], [airflow, "pools", "set", "benchmark_host", "1", "one benchmark task at a time"]):
        subprocess.run(argv, env=env, capture_output=True, text=True, check=True, timeout=600)
    log = open(work / "standalone.log", "w", encoding="utf-8")  # closed in finally
    proc = subprocess.Popen([airflow, "standalone"], env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    api = _Api(f"http://127.0.0.1:{port}")
    out: dict[str, Any] = {"airflow_home": str(home), "log": str(work / "standalone.log")}
    try:
        deadline = time.monotonic() + 600
        api.wait("GET", "/api/v2/version", deadline)
        pw_file = home / "simple_auth_manager_passwords.json.generated"
        while not pw_file.exists() and time.monotonic() < deadline:
            time.sleep(1)
        user, password = next(iter(json.loads(pw_file.read_text()).items()))
        api.token = api.call("POST", "/auth/token", {"username": user, "password": password})["access_token"]
        api.wait("GET", f"/api/v2/dags/{DAG_ID}", deadline)  # parsed by the DAG processor
        with Census(scratch) as census:
            cpu_before = _cpu_by_component(_processes_of(home, proc.pid))
            run_id, state, wall = _trigger_and_wait(api, DAG_ID, conf, timeout_s)
            cpu_after = _cpu_by_component(_processes_of(home, proc.pid))
        tis = _task_instances(api, run_id)
        out.update(
            run_id=run_id,
            state=state,
            wall_s=wall,
            task_seconds=_task_seconds(tis),
            gaps=gaps(tis),
            airflow_cpu_s=airflow_cpu(cpu_before, cpu_after),
            census_samples=census.samples,
            most_engines_at_once=len(census.peak),
            engines_at_peak=census.peak,
            engines_seen=len(census.seen),
            states={s: sum(1 for t in tis if t["state"] == s) for s in {str(t["state"]) for t in tis}},
            disturbers=disturbers(home / "logs" / f"dag_id={DAG_ID}" / f"run_id={run_id}"),
        )
        if floor:
            api.wait("GET", f"/api/v2/dags/{floor_tool.DAG_ID}", time.monotonic() + 600)
            seconds = durations_in_order(tis)
            cpu_before = _cpu_by_component(_processes_of(home, proc.pid))
            f_id, f_state, f_wall = _trigger_and_wait(api, floor_tool.DAG_ID, {"seconds": seconds}, timeout_s)
            cpu_after = _cpu_by_component(_processes_of(home, proc.pid))
            f_tis = _task_instances(api, f_id, floor_tool.DAG_ID)
            out["floor"] = {
                "run_id": f_id,
                "state": f_state,
                "wall_s": f_wall,
                "task_seconds": _task_seconds(f_tis),
                "sleeps": len(seconds),
                "slept_s": sum(seconds),
                "gaps": gaps(f_tis),
                "airflow_cpu_s": airflow_cpu(cpu_before, cpu_after),
            }
    finally:
        _stop(proc, home)
        log.close()
    return out


def disturbers(log_dir: Path) -> dict[str, Any]:
    """Who disturbed the run's measure windows, from its task logs: how many windows were disturbed, and the CPU
    (ms) each named process used in them, summed (the busiest three of each window, as its log line names them:
    :func:`jsonbench.host.load.disturbed_in`).

    A run through the scheduler has Airflow's own processes beside every task (API server, DAG processor, triggerer:
    not the task's ancestors, so they count as other load); this says which of them, if any, a window met.
    """
    from jsonbench.host.load import disturbed_in

    windows = 0
    by: dict[str, float] = {}
    for f in sorted(log_dir.rglob("*.log")) if log_dir.is_dir() else []:
        for line in f.read_text(encoding="utf-8", errors="replace").splitlines():
            named = disturbed_in(line)
            if named is None:
                continue
            windows += 1
            for name, ms in named:
                by[name] = by.get(name, 0.0) + ms
    return {"windows": windows, "by_process_ms": dict(sorted(by.items(), key=lambda kv: -kv[1]))}


def _disturber_words(out: dict[str, Any]) -> str:
    d = out.get("disturbers") or {}
    if not d.get("windows"):
        return "disturbed measure windows: none in the task logs"
    top = ", ".join(f"{k} {v:.0f} ms" for k, v in list(d["by_process_ms"].items())[:6])
    return f"disturbed measure windows: {d['windows']}; the other CPU in them, by process: {top or '(not named)'}"


def _wall_against_tasks(out: dict[str, Any]) -> str:
    """The run's wall time over the sum of its tasks' durations: what the scheduler adds to a serial chain.

    The cells run one at a time, so a scheduler that starts each task as soon as its upstream ends gives a
    ratio near 1; the target is at most 1.02.
    """
    task_sum = sum(out.get("task_seconds", {}).values())
    if not task_sum:
        return "wall / task sum: (no task durations)"
    return f"wall / task sum: {out.get('wall_s', 0):.1f} s / {task_sum:.1f} s = {out.get('wall_s', 0) / task_sum:.3f} (target at most 1.02)"


def _gap_words(out: dict[str, Any]) -> str:
    """The time between tasks in words: the scheduler's share, the executor's, the empty links'."""
    g = out.get("gaps") or {}
    if not g.get("count"):
        return "between tasks: (no gaps)"
    return (
        f"between tasks: {g['gaps']:.1f} s over {g['count']:.0f} gaps ({g['gaps'] / g['count']:.2f} s each): "
        f"{g['to_queued_s']:.1f} s from an end to the next task queued (the scheduler's loop), "
        f"{g['to_start_s']:.1f} s from queued to running (the executor); "
        f"{g['with_links_s']:.1f} s of them in gaps that walked {g['links']:.0f} empty tasks (one scheduler loop each)"
    )


def _cpu_words(out: dict[str, Any]) -> str:
    """Airflow's own CPU during the run, per component, as a share of one core over the run's wall time."""
    spent = out.get("airflow_cpu_s") or {}
    wall = float(out.get("wall_s") or 0)
    if not spent or not wall:
        return "Airflow's own CPU during the run: (not sampled)"
    total = sum(spent.values())
    parts = ", ".join(f"{k} {v:.1f} s" for k, v in sorted(spent.items(), key=lambda kv: -kv[1]) if v >= 0.05)
    return f"Airflow's own CPU during the run: {total:.1f} s, {100 * total / wall:.1f} % of one core ({parts})"


def _ratio(out: dict[str, Any]) -> float | None:
    task_sum = sum(out.get("task_seconds", {}).values())
    return float(out.get("wall_s") or 0) / task_sum if task_sum else None


def _floor_words(out: dict[str, Any]) -> list[str]:
    """The floor run's lines: its ratio, gaps and CPU, and the benchmark DAG's own share of the ratio beyond it."""
    f = out.get("floor")
    if not f:
        return []
    ours, floor = _ratio(out), _ratio(f)
    share = f"; the benchmark DAG's own share: {ours - floor:+.3f} of its {ours:.3f}" if ours and floor else ""
    return [
        f"Airflow's floor, the same scheduler right after ({f['run_id']}: {f['state']}): {f['sleeps']} task instances "
        f"sleeping the run's task durations ({f['slept_s']:.1f} s), one at a time through the same pool{share}",
        "  floor " + _wall_against_tasks(f),
        "  floor " + _gap_words(f),
        "  floor " + _cpu_words(f),
    ]


def report(out: dict[str, Any]) -> str:
    lines = [
        f"run {out.get('run_id')} through the scheduler (LocalExecutor, REST API trigger): {out.get('state')} in {out.get('wall_s', 0):.1f} s",
        f"task states: {json.dumps(out.get('states'))}",
        _wall_against_tasks(out),
        _gap_words(out),
        _cpu_words(out),
        _disturber_words(out),
        f"engines alive at once, at most: {out.get('most_engines_at_once')} over {out.get('census_samples')} samples "
        f"({out.get('engines_seen')} engines seen in all)",
        "seconds per task kind: "
        + ", ".join(f"{k} {v:.1f}" for k, v in sorted(out.get("task_seconds", {}).items(), key=lambda kv: -kv[1])[:12]),
        *_floor_words(out),
        f"Airflow home and log: {out.get('airflow_home')} ({out.get('log')})",
    ]
    return "\n".join(lines)
