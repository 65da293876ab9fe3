"""A run of the benchmark DAG from the command line: ``airflow dags test`` in a child process, followed line by line.

``jsonbench run`` (and the maintainers' instruments that run the DAG, such as a calibration campaign) go through
:func:`run_dag`: the run's parameters are checked and its cost table printed before Airflow starts (:func:`preview`),
the DAG parsed holds only this run's engines (:func:`narrowed_env`), and the log's task lines become progress with
the time left (:class:`Progress`). :func:`resume_args` turns a run id printed earlier into the parameters that run
it again, keeping the cells it completed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any

from jsonbench import paths

DAG_ID = "jsonb_benchmark_matrix"
_TASK_RE = re.compile(r"\[DAG TEST\] (starting|end task) task_id=(\S+) map_index=(-?\d+)")
_FINISHED_RE = re.compile(r"DagRun Finished: dag_id=\S+ logical_date=.*?run_id=(\S+?), .*?state=(\w+)")
_RUN_ID_RE = re.compile(r"run_id=(\S+?)[,\s]")


class Progress:
    """Cells done / total and the time left, from the plan's cost estimate corrected by what it took so far."""

    def __init__(self, expected: dict[str, float]) -> None:
        self.expected = expected
        self.done: dict[str, float] = {}
        self.started: dict[str, float] = {}

    def start(self, cell_id: str) -> None:
        self.started.setdefault(cell_id, time.perf_counter())

    def finish(self, cell_id: str) -> str | None:
        if cell_id not in self.expected or cell_id in self.done:
            return None
        self.done[cell_id] = time.perf_counter() - self.started.get(cell_id, time.perf_counter())
        spent_expected = sum(self.expected[c] for c in self.done)
        factor = (sum(self.done.values()) / spent_expected) if spent_expected > 0 else 1.0
        left = sum(v for c, v in self.expected.items() if c not in self.done) * factor
        return f"cells {len(self.done)}/{len(self.expected)} done; about {_duration(left)} left"


def _duration(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


def preview(conf: dict[str, Any]) -> tuple[str, dict[str, float]]:
    """The plan's cost table for ``conf`` (nothing starts) and the expected seconds per cell."""
    from jsonbench.cell import RunRef
    from jsonbench.orchestration import costs
    from jsonbench.orchestration.plan import plan_cells, resolve

    cfg = resolve(conf)
    run = RunRef(run_id="preview", logical_date=None, hardware_label=cfg.hardware_label, results_dir=cfg.results_dir, scale=cfg.scale)
    cells = plan_cells(cfg, run)
    estimate = costs.plan_costs(cells, cfg.results_dir)
    return costs.describe(estimate), {k: max(v.duration_s, 1.0) for k, v in estimate.cells.items()}


def narrowed_env(conf: dict[str, Any]) -> dict[str, str]:
    """The environment of ``airflow dags test``: the DAG it parses holds the groups of this run's engines only.

    A one-shot run knows its engines before Airflow starts. ``dags test`` parses the DAG file twice, serializes it and
    walks every task instance in its loop; with every engine of the matrix that is 260-odd tasks, most of them skipped,
    for a run of one cell. ``$JSONBENCH_HOST_ENGINES`` (a deployment's own list) is the same knob; one set
    by the caller is kept, and the plan still refuses an engine outside it. ``dags test`` writes the DAG it parsed to
    the metadata database; a scheduler sharing that database (``./bin/airflow-standalone``) writes the whole one back
    when its DAG processor next parses the file, and a run it starts in between, of an engine outside, fails in its plan
    naming the field rather than measuring less.
    """
    from jsonbench.orchestration.plan import resolve

    env = dict(os.environ)
    if not env.get("JSONBENCH_HOST_ENGINES"):
        env["JSONBENCH_HOST_ENGINES"] = ",".join(resolve(conf).engines)
    return env


def run_dag(
    conf: dict[str, Any], log_path: Path | None = None, quiet: bool = False, logical_date: str | None = None
) -> tuple[str | None, str, float, dict[str, float]]:
    """Run the DAG once on this machine with ``airflow dags test`` (again for ``logical_date``: a resume).

    Returns (run id, state, wall seconds, seconds per task kind), where a task kind is the task id
    without its cell group (``provision``, ``publish``, ``check``, a workload name, ...).
    """
    table, expected = preview(conf)  # fails here, naming the field, before Airflow even starts
    env = narrowed_env(conf)
    log_dir = Path(os.environ.get("AIRFLOW_HOME", paths.PROJECT_ROOT / ".airflow")) / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    # The process id too: two runs started within the same second (a campaign's, a test's) must not share a file.
    log_path = log_path or log_dir / f"dags-test-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.log"
    # The logical date (a resume) goes right after the DAG id: `dags test` takes no positional after its options.
    argv = ["airflow", "dags", "test", DAG_ID, *([logical_date] if logical_date else []), "-c", json.dumps(conf)]
    if not quiet:
        print(f"running {DAG_ID} with {json.dumps(conf)}; full log: {log_path}\n{table}", flush=True)
    t0 = time.perf_counter()
    run_id, state = None, "unknown"
    starts: dict[tuple[str, str], float] = {}
    task_seconds: dict[str, float] = {}
    progress = Progress(expected)
    with (
        open(log_path, "w", encoding="utf-8") as log,
        subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1, env=env) as proc,
    ):
        assert proc.stdout is not None
        for line in proc.stdout:
            log.write(line)
            m = _TASK_RE.search(line)
            if m:
                what, task_id, idx = m.groups()
                key = (task_id, idx)
                cell, _, kind = task_id.rpartition(".")
                if what == "starting":
                    starts[key] = time.perf_counter()
                    if cell:
                        progress.start(cell)
                else:
                    took = time.perf_counter() - starts.get(key, time.perf_counter())
                    task_seconds[kind] = task_seconds.get(kind, 0.0) + took
                    if not quiet:
                        label = task_id + (f"[{idx}]" if idx != "-1" else "")
                        print(f"  {time.perf_counter() - t0:7.1f}s  {label:<56} {took:7.1f}s", flush=True)
                    note = progress.finish(cell) if kind == "teardown" else None
                    if note and not quiet:
                        print(f"  {'':9}{note}", flush=True)
            if "Task failed with exception" in line and not quiet:
                print("  !! a task failed; see the log for its traceback", flush=True)
            if "DagRun Finished" in line:
                f = _FINISHED_RE.search(line)
                if f:
                    run_id, state = f.group(1), f.group(2)
            if run_id is None and "manual__" in line:
                r = _RUN_ID_RE.search(line)
                if r and r.group(1).startswith("manual__"):
                    run_id = r.group(1)
        rc = proc.wait()
    if state == "unknown":
        state = "success" if rc == 0 else "failed"
    return run_id, state, time.perf_counter() - t0, task_seconds


def resume_args(run_id: str, results_dir: str | None) -> tuple[dict[str, Any], str]:
    """The parameters and logical date to run ``run_id`` again (completed cells are kept, not rerun)."""
    from jsonbench.dataset.staging import Staging

    if not run_id.startswith("manual__"):
        raise SystemExit(f"--resume takes a run id printed by `jsonbench run` (manual__<logical date>), got {run_id!r}")
    params = Staging(paths.results_dir(results_dir), run_id).read_params()
    if params is None:
        raise SystemExit(f"no staged attempt of {run_id} under {paths.results_dir(results_dir)}; nothing to resume")
    return {**params, "resume_of": run_id}, run_id.removeprefix("manual__")
