"""Command line: ``python -m jsonbench.cli <command>``.

* ``run``: run the benchmark DAG once with ``airflow dags test``, print progress, then a summary
  table of the run and where its Parquet files are.
* ``overhead``: the same, then the time of each phase and the ratio of wall time to the time
  spent inside measurement windows and data loads (the orchestration overhead).
* ``airflow-floor``: ``airflow dags test`` of N tasks that only sleep, in a private Airflow home: what
  Airflow itself costs a run of that many tasks, beneath ``overhead``'s figure (see :mod:`jsonbench.tools.floor`).
* ``summary``: the summary table of a published run (the latest by default).
* ``report``: the static HTML report (``<results>/report/index.html``), see :mod:`jsonbench.report`.
* ``damaged``: list dataset files that do not read whole and leftovers of killed publishes;
  ``--quarantine`` moves the damaged files under ``<results>/_quarantine/`` (with a note each, never
  deleted) and sweeps the leftovers (see :mod:`jsonbench.dataset.repair`).
* ``pgbench-overhead``: one catalogue pgbench script through the pipeline and by hand against the
  same server, both tps and their ratio (see :mod:`jsonbench.tools.pgbench_overhead`).
* ``quiet-check``: the quiet detector both ways on this machine: windows around real engine work
  on the machine as it is, then beside a one-core busy loop it starts; prints both shares (see
  :mod:`jsonbench.tools.quietcheck`).
* ``calibrate``: per finding and engine, what the recorded runs of one scale observed and the band
  a stated rule proposes (see :mod:`jsonbench.tools.calibrate`).
* ``checkcheck``: checks of the checks: plants wrong results into copies of a real run, reruns the
  real check on a copy of the real history, and reports the share caught and the false alarms
  (see :mod:`jsonbench.tools.checkcheck`).
* ``campaign``: N honest reruns one after another (resumable), then the noise model of the hardware
  label and scale (see :mod:`jsonbench.tools.campaign` and :mod:`jsonbench.history.noise`).
* ``link-engines`` / ``install-sqlite`` / ``install-otava``: setup steps used by ``./bin/setup``.
* ``bands``: the band rule applied to every timing finding (``--write`` puts the bands into the
  reproduction files; see :mod:`jsonbench.checks.bandrule` and :mod:`jsonbench.tools.bands`).
* ``recheck``: today's bands against every recorded run of every host (``recorded/``), per host and
  scale (see :mod:`jsonbench.tools.recheck`).
* ``sample-documents``: writes ``examples/orders.jsonl``, the documents suite's sample (see
  :mod:`jsonbench.tools.sample_documents`); ``run --suites documents --documents PATH`` measures your own.
* ``rerun`` / ``report-bench`` / ``derive-facts`` / ``views``: commands with parsers of their own
  (their ``--help`` is theirs): a run again as the same run, the report's build benchmark, the
  catalogue's deterministic facts, the SQL views refreshed (see :mod:`jsonbench.tools` and
  :mod:`jsonbench.dataset.views`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jsonbench import paths

DAG_ID = "jsonb_benchmark_matrix"
_TASK_RE = re.compile(r"\[DAG TEST\] (starting|end task) task_id=(\S+) map_index=(-?\d+)")
_FINISHED_RE = re.compile(r"DagRun Finished: dag_id=\S+ logical_date=.*?run_id=(\S+?), .*?state=(\w+)")
_RUN_ID_RE = re.compile(r"run_id=(\S+?)[,\s]")


def link_engines() -> None:
    """Setup step (``./bin/setup``): see :mod:`jsonbench.setup.engine_links`."""
    from jsonbench.setup.engine_links import link_engines as link

    print(link())


def install_sqlite() -> None:
    """Setup step (``./bin/setup``): one venv per SQLite engine of the matrix."""
    from jsonbench.setup.sqlite_venvs import install_all

    install_all()


def _conf(args: argparse.Namespace) -> dict[str, Any]:
    conf: dict[str, Any] = json.loads(args.conf) if args.conf else {}
    for key in ("scale", "backend", "repetitions", "starts", "hardware_label", "results_dir"):
        val = getattr(args, key, None)
        if val is not None:
            conf[key] = val
    for key in ("engines", "suites", "read_keys", "update_keys"):
        val = getattr(args, key, None)
        if val:
            conf[key] = [v for v in val.split(",") if v]
    documents = getattr(args, "documents", None)
    if documents:
        # Absolute here, where the user named it: the plan runs in Airflow's task process, in another folder.
        conf["documents"] = str(Path(documents).expanduser().resolve()) if Path(documents).expanduser().exists() else documents
    return conf


def _add_documents_options(p: argparse.ArgumentParser) -> None:
    """--documents, --read-keys, --update-keys: the documents suite's input (issue 36)."""
    p.add_argument(
        "--documents",
        metavar="PATH",
        help="your documents for --suites documents: a .jsonl file or a folder of .json files (default: examples/orders.jsonl)",
    )
    p.add_argument("--read-keys", dest="read_keys", metavar="KEYS", help="comma-separated key paths to read (default: found by a scan)")
    p.add_argument(
        "--update-keys", dest="update_keys", metavar="KEYS", help="comma-separated key paths to update (default: found by a scan)"
    )


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


def _narrowed_env(conf: dict[str, Any]) -> dict[str, str]:
    """The environment of ``airflow dags test``: the DAG it parses holds the groups of this run's engines only.

    A one-shot run knows its engines before Airflow starts. ``dags test`` parses the DAG file twice, serializes it and
    walks every task instance in its loop; with every engine of the matrix that is 260-odd tasks, most of them skipped,
    for a run of one cell (issue 35). ``$JSONBENCH_HOST_ENGINES`` (a deployment's own list) is the same knob; one set
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
    env = _narrowed_env(conf)
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


def summary(results_dir: str | None = None, run_id: str | None = None) -> str:
    """A plain-text table of a run's headline metrics per engine (the latest run by default)."""
    from jsonbench.dataset.publish import read_dataset
    from jsonbench.suites import get_suite

    root = paths.results_dir(results_dir)
    table = read_dataset(root)
    if table.num_rows == 0:
        return f"no published results under {root}"
    df = table.to_pandas()
    if run_id is None:
        run_id = df.sort_values("ended_at")["run_id"].iloc[-1]
    df = df[df["run_id"] == run_id]
    if df.empty:
        return f"run {run_id!r} has no published rows under {root}"
    lines = [f"run {run_id}: {len(df)} rows, hardware {df['hardware_label'].iloc[0]}, scale {df['scale'].iloc[0]}"]
    from jsonbench.dataset.measurement import HOST_SUITE

    for suite_name, sdf in df.groupby("suite"):
        if suite_name == HOST_SUITE:
            lines.append("\nhost (canary, ms, median of each component's samples, before each cell)")
            lines.append(
                sdf.pivot_table(index=["variant", "engine_id"], columns="metric", values="value", aggfunc="first").to_string(
                    float_format=lambda v: f"{v:,.1f}"
                )
            )
            continue
        headline = get_suite(str(suite_name)).headline
        sdf = sdf[sdf["metric"].isin(headline)] if headline else sdf
        pivot = sdf.pivot_table(index=["workload", "variant", "metric", "unit"], columns="engine_version", values="value", aggfunc="first")
        lines.append(f"\n{suite_name}")
        lines.append(pivot.to_string(float_format=lambda v: f"{v:,.2f}"))
    from jsonbench.suites.documents.summary import answers, render

    found = answers(df.to_dict("records"))
    if found:  # the documents suites' answer in sentences, from the same published rows as the tables above
        lines.append(render(found))
    na = df[df["status"] == "not_applicable"]
    if not na.empty:
        lines.append(f"\n{len(na)} metrics not applicable on some builds, e.g. {na['metric'].iloc[0]}: {na['reason'].iloc[0]}")
    lines.append(_checks_line(root, run_id))
    parts = sorted({str(p) for p in (root / "measurements").glob("hardware_label=*/run_date=*/run_key=*")})
    lines.append(
        f"\nParquet dataset: {root / 'measurements'} ({len(parts)} runs); this run: {[p for p in parts if p.endswith(_key(run_id))]}"
    )
    return "\n".join(lines)


def _checks_line(root: Path, run_id: str) -> str:
    """The run's judgement in one line: passed, failed, suspect or NOT JUDGED, the judged share and the confirmations."""
    from jsonbench.checks.examine import check_outcome
    from jsonbench.checks.verdicts import describe_share

    out = check_outcome(root, run_id)
    if not out["rows"]:
        return "\nchecks: not checked"
    verdicts = out["verdicts"]
    confirmed = ", ".join(f"{v} {verdicts[v]}" for v in ("confirmed", "cleared", "unconfirmed", "suspect") if verdicts.get(v))
    return (
        f"\nchecks: {out['judgement'].upper().replace('_', ' ')}; {len(out['failed'])} of {out['rows']} failed"
        + (f" (timing measured twice: {confirmed})" if confirmed else "")
        + f"; {describe_share(out['judged'])}"
    )


def _key(run_id: str) -> str:
    from jsonbench.dataset.schema import run_key

    return run_key(run_id)


def overhead_report(results_dir: str | None, run_id: str, wall: float, task_seconds: dict[str, float]) -> str:
    """Time per phase against the run's wall time, and the ratio of wall time to the work floor.

    load and measure come from the windows the workloads themselves timed (staged with their
    measurements); provision is the server start inside the setup tasks; check and publish are
    their tasks' durations; whatever is left is orchestration (Airflow, process start-up, scheduling).
    """
    from jsonbench.dataset.staging import Staging

    phases = {"provision": 0.0, "load": 0.0, "measure": 0.0}
    records = 0
    for rec in Staging(paths.results_dir(results_dir), run_id).records():
        records += 1
        for phase in phases:
            phases[phase] += rec.phases.get(phase, 0.0)
    phases["check"] = task_seconds.get("check", 0.0)
    phases["publish"] = task_seconds.get("publish", 0.0)
    floor = phases["load"] + phases["measure"]
    lines = [f"phases of run {run_id} ({records} staged task records):"]
    for phase, secs in phases.items():
        lines.append(f"  {phase:<14} {secs:9.2f} s")
    lines.append(f"  {'other':<14} {wall - sum(phases.values()):9.2f} s  (Airflow start-up, scheduling, task processes, teardown)")
    lines.append(f"  {'wall':<14} {wall:9.2f} s")
    if floor > 0:
        lines.append(f"wall / (load + measure) = {wall / floor:.3f}  (target <= 1.15 at laptop scale)")
    cells = _cell_seconds(results_dir, run_id)
    if cells:
        staged = sum(cells.values())
        lines.append(
            f"cells' staged time {staged:.1f} s ({len(cells)} cell(s)); the DAG beyond its cells: {wall - staged:.1f} s "
            "(plan, canaries, check, publish, report, Airflow; target <= 10 s for one smoke cell)"
        )
    return "\n".join(lines)


def _cell_seconds(results_dir: str | None, run_id: str) -> dict[str, float]:
    """Each cell's staged task seconds, from the run's published ``_cell`` rows (what the plan's cost table reads)."""
    from jsonbench.dataset.measurement import CELL_RECORD
    from jsonbench.dataset.publish import read_dataset

    df = read_dataset(paths.results_dir(results_dir), run_id=run_id).to_pandas()
    df = df[(df["workload"] == CELL_RECORD) & (df["metric"] == "duration")]
    return {f"{r.suite}__{r.engine_id}": float(r.value) for r in df.itertuples()}


def _parser() -> argparse.ArgumentParser:
    """The command line's parser; the groups add their subcommands in the order ``--help`` lists them."""
    parser = argparse.ArgumentParser(prog="jsonbench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    _add_run_commands(sub)
    _add_handcheck_commands(sub)
    _add_check_commands(sub)
    for name, (summary_line, _) in _OWN_PARSERS.items():
        sub.add_parser(name, help=summary_line, add_help=False)
    return parser


def _add_run_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """run, overhead, plan, scheduler-run (a run's parameters), host and summary: running the benchmark and its outcome."""
    for name in ("run", "overhead"):
        p = sub.add_parser(name)
        p.add_argument("--scale")
        p.add_argument("--engines", help="comma-separated engine ids, e.g. postgres-16,postgres-17")
        p.add_argument("--suites", help="comma-separated suite names")
        p.add_argument("--backend")
        p.add_argument("--repetitions", type=int)
        p.add_argument("--starts", type=int, help="engine starts each cell's timings rest on (1-3; a restart between, repetitions split)")
        p.add_argument("--hardware-label", dest="hardware_label")
        p.add_argument("--results-dir", dest="results_dir")
        p.add_argument("--conf", help="extra DAG params as JSON")
        p.add_argument(
            "--resume", metavar="RUN_ID", help="run an earlier run again with its parameters: completed cells are kept, the rest measured"
        )
        _add_documents_options(p)
    p = sub.add_parser("plan", help="print what a run would cost (per cell: load, disk and memory peak, duration) without running it")
    for opt in ("--scale", "--engines", "--suites", "--backend", "--hardware-label", "--results-dir", "--conf"):
        p.add_argument(opt, dest=opt[2:].replace("-", "_"))
    p.add_argument("--repetitions", type=int)
    p.add_argument("--starts", type=int, help="engine starts each cell's timings rest on (1-3)")
    _add_documents_options(p)
    p = sub.add_parser(
        "scheduler-run",
        help="one run through a private Airflow scheduler (LocalExecutor), triggered over the REST API: wall time and engines alive at once",
    )
    for opt in ("--scale", "--engines", "--suites", "--backend", "--hardware-label", "--results-dir", "--conf"):
        p.add_argument(opt, dest=opt[2:].replace("-", "_"))
    p.add_argument("--repetitions", type=int)
    p.add_argument("--starts", type=int, help="engine starts each cell's timings rest on (1-3)")
    p.add_argument("--port", type=int, default=None, help="API server port (default: a free one)")
    p.add_argument(
        "--floor",
        action="store_true",
        help="then Airflow's floor in the same scheduler: one sleep per task that ran, of its duration (what the ratio holds of Airflow's own)",
    )
    _add_documents_options(p)
    p = sub.add_parser("host", help="the host lease: who holds the benchmark host (status), or release a dead holder's lease (release)")
    p.add_argument("action", choices=["status", "release"])
    p = sub.add_parser("summary")
    p.add_argument("--run-id")
    p.add_argument("--results-dir")


def _add_handcheck_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The pipeline against the same work by hand (handchecks, pgbench-overhead), two setup steps, and the report."""
    p = sub.add_parser("handcheck", help="seed 004 through the pipeline and by hand with psql, on one server")
    p.add_argument("--engine", default="postgres-16")
    p.add_argument("--rows", type=int, default=5000)
    p.add_argument("--repetitions", type=int, default=3)
    p = sub.add_parser("fat-update-handcheck", help="the catalogue's 8 kB document update as a matrix task vs pgbench by hand, same server")
    p.add_argument("--engine", default="postgres-17")
    p.add_argument("--scale", default="laptop")
    p.add_argument("--rounds", type=int, default=2)
    p = sub.add_parser(
        "fat-update-wal-clients",
        help="the 8 kB update's fixed-count WAL per update with one client and with the machine's, alternated on one server",
    )
    p.add_argument("--engine", default="postgres-17")
    p.add_argument("--scale", default="laptop")
    p.add_argument("--rounds", type=int, default=3)
    p = sub.add_parser(
        "fat-update-reads",
        help="the 8 kB read timed by pgbench at the machine's clients and at one, and inside the server, alternated on one server",
    )
    p.add_argument("--engine", default="postgres-16")
    p.add_argument("--scale", default="laptop")
    p.add_argument("--rounds", type=int, default=3)
    p = sub.add_parser("load-handcheck", help="the catalogue's load through the pipeline vs the same SQL by hand with psql, same server")
    p.add_argument("--engine", default="postgres-17")
    p.add_argument("--scale", default="full")
    p.add_argument("--rounds", type=int, default=1)
    sub.add_parser("link-engines")
    sub.add_parser("install-sqlite")
    p = sub.add_parser(
        "pgbench-overhead",
        help="catalogue pgbench scripts through the pipeline vs by hand, same server: both tps, their ratio and the paired ratio",
    )
    p.add_argument("--engine", default="postgres-17")
    p.add_argument(
        "--script",
        default="cb_rel",
        help="comma-separated catalogue scripts (cb_rel, upd_doc, upd_fat_doc, ...) or groups: reads, updates, all",
    )
    p.add_argument("--seconds", type=int, default=5)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--scale", default="smoke", help="catalogue size to load (smoke, laptop, full)")
    p = sub.add_parser(
        "quiet-check",
        help="the quiet detector both ways on this machine: windows around real engine work idle (>= 95 %% quiet) "
        "and beside a one-core busy loop it starts (>= 95 %% busy)",
    )
    p.add_argument("--seconds", type=float, default=20.0, help="seconds of windows per phase")
    p.add_argument("--engine", help="the PostgreSQL engine to start (default: the matrix's first)")
    p = sub.add_parser("report", help="build the static HTML report (<results>/report/index.html) without Airflow")
    p.add_argument("--results-dir")
    p.add_argument("--run-id", help="the run to report on (default: the latest)")
    p = sub.add_parser(
        "figures", help="write the seeds' findings side by side with every engine version at laptop and full (docs/figures.md)"
    )
    p.add_argument(
        "--results-dir", action="append", dest="results_dirs", help="a results folder to read (repeatable; default: the results folder)"
    )
    p.add_argument("--out", default="docs/figures.md", help="the markdown file to write (default: docs/figures.md)")


def _add_check_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """calibrate, checkcheck, install-otava and damaged: the checks' bands, the checks' own check, their detector, the dataset's health."""
    p = sub.add_parser(
        "calibrate",
        help="observed min/median/max per finding and engine over recorded runs of one scale, and the band a stated rule proposes",
    )
    p.add_argument("--scale", required=True)
    p.add_argument("--results-dir")
    p.add_argument("--hardware-label")
    p.add_argument("--suites", help="comma-separated suite names")
    p.add_argument(
        "--fact-tolerance", type=float, default=0.01, help="deterministic findings: widen the observed range by this share (default 0.01)"
    )
    p.add_argument("--json", dest="as_json", action="store_true", help="print the proposals as JSON")
    p.add_argument(
        "--include-disturbed", action="store_true", help="also use timing findings measured while the host was busy (quiet false)"
    )
    p.add_argument(
        "--record",
        action="store_true",
        help="write the noise model (calibration record) of the label and scale instead: include/calibration/local/<scale>.json "
        "for label local, <results>/calibration/<label>/<scale>.json otherwise",
    )
    p.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="RUN_ID[::SUITE,...]",
        help="with --record: leave a disturbed run (or some of its suites) out of the noise model; repeatable",
    )
    p.add_argument("--why", default="", help="with --record: why these runs (stored in the record)")
    p.add_argument(
        "--recorded",
        action="store_true",
        help="with --record: model the noise from the honest runs of every host in recorded/ (recorded/hosts.json), and the "
        "--results-dir folder when one is given: between starts inside each host, between hosts across them",
    )
    p = sub.add_parser(
        "campaign",
        help="N honest reruns through the DAG one after another (resumable), then the calibration record of the label and scale",
    )
    p.add_argument("--scale", required=True)
    p.add_argument("--runs", type=int, required=True, help="how many honest runs the record is made of")
    p.add_argument("--hardware-label", dest="hardware_label")
    p.add_argument("--results-dir", dest="results_dir")
    p.add_argument("--engines", help="comma-separated engine ids (default: the matrix's)")
    p.add_argument("--suites", help="comma-separated suite names (default: the matrix's)")
    p.add_argument("--conf", help="extra DAG params as JSON")
    p = sub.add_parser(
        "checkcheck", help="plant wrong results into copies of real runs, rerun the real check, report the share caught and false alarms"
    )
    p.add_argument("--results-dir", help="the results folder holding the real published runs (read only)")
    p.add_argument("--hardware-label")
    p.add_argument("--scale")
    p.add_argument("--work-dir", help="where the copies go (default: a temporary folder, removed afterwards)")
    p.add_argument("--kinds", help="comma-separated plant kinds (default: all)")
    p.add_argument("--honest", type=int, default=None, help="how many of the latest honest runs to recheck for false alarms (default: all)")
    p.add_argument("--target", help="the run to plant into (default: the latest); its earlier runs are the history")
    p.add_argument("--json", dest="as_json", action="store_true")
    p.add_argument("--no-power", dest="power", action="store_false", help="skip the planted slowdowns of every size (drift's power)")
    p.add_argument(
        "--save-to",
        dest="save_to",
        help="the results folder whose report shows these figures (default: the default results folder); "
        "written to <it>/checkcheck/<label>-<scale>.json",
    )
    sub.add_parser("install-otava", help="create the venv of Apache Otava, the drift check's change-point detector")
    p = sub.add_parser("damaged", help="list damaged dataset files and leftovers of killed publishes; --quarantine moves them aside")
    p.add_argument("--results-dir")
    p.add_argument(
        "--quarantine", action="store_true", help="move damaged files under <results>/_quarantine/ (with a note) and sweep leftovers"
    )


# One function per subcommand, each returning the exit status. Each imports what it needs when it runs,
# so a light command (host, summary, damaged) does not pay for Airflow, pandas or the matrix.


def _cmd_damaged(args: argparse.Namespace) -> int:
    from jsonbench.dataset.repair import damaged_command

    return damaged_command(args.results_dir, args.quarantine)


def _cmd_calibrate(args: argparse.Namespace) -> int:
    from jsonbench.tools.calibrate import as_json, calibrate, render

    if args.record:
        from jsonbench.tools.record import build_record, parse_exclude, render_record, write_record

        sources = None
        if args.recorded:
            from jsonbench.tools.recheck import folders_to_check

            sources = folders_to_check([args.results_dir] if args.results_dir else [])
        record = build_record(
            paths.results_dir(args.results_dir),
            args.scale,
            args.hardware_label or "local",
            exclude=parse_exclude(args.exclude),
            why=args.why,
            command="python -m jsonbench.cli " + shlex.join(sys.argv[1:]),
            sources=sources,
        )
        print(render_record(record))
        print(f"record: {write_record(record, args.results_dir)}")
        return 0
    cals = calibrate(
        paths.results_dir(args.results_dir),
        args.scale,
        args.hardware_label,
        [s for s in (args.suites or "").split(",") if s] or None,
        args.fact_tolerance,
        include_disturbed=args.include_disturbed,
    )
    print(as_json(cals) if args.as_json else render(cals, args.scale, args.fact_tolerance))
    return 0


def _cmd_checkcheck(args: argparse.Namespace) -> int:
    from jsonbench.tools.checkcheck import checkcheck, render_checkcheck

    outcome = checkcheck(
        paths.results_dir(args.results_dir),
        hardware_label=args.hardware_label,
        scale=args.scale,
        work_dir=args.work_dir,
        kinds=[k for k in (args.kinds or "").split(",") if k] or None,
        honest=args.honest,
        target=args.target,
        measure_power=args.power,
    )
    print(json.dumps(outcome, indent=1, default=str) if args.as_json else render_checkcheck(outcome))
    from jsonbench.tools.checkcheck import save

    print(f"figures: {save(outcome, args.save_to)}", file=sys.stderr)
    return 0 if outcome.get("ok") else 1


def _cmd_campaign(args: argparse.Namespace) -> int:
    from jsonbench.tools.campaign import campaign

    return campaign(_conf(args), args.runs, run_dag=run_dag, resume_args=resume_args)


def _cmd_install_otava(args: argparse.Namespace) -> int:
    from jsonbench.setup.otava_venv import install

    install()
    return 0


def _cmd_handcheck(args: argparse.Namespace) -> int:
    from jsonbench.tools.handcheck import handcheck

    print(handcheck(args.engine, args.rows, args.repetitions))
    return 0


def _cmd_fat_update_handcheck(args: argparse.Namespace) -> int:
    from jsonbench.tools.handcheck import fat_update_handcheck

    print(fat_update_handcheck(args.engine, args.scale, args.rounds))
    return 0


def _cmd_fat_update_wal_clients(args: argparse.Namespace) -> int:
    from jsonbench.tools.handcheck import fat_update_wal_clients

    print(fat_update_wal_clients(args.engine, args.scale, args.rounds))
    return 0


def _cmd_fat_update_reads(args: argparse.Namespace) -> int:
    from jsonbench.tools.handcheck import fat_update_reads

    print(fat_update_reads(args.engine, args.scale, args.rounds))
    return 0


def _cmd_load_handcheck(args: argparse.Namespace) -> int:
    from jsonbench.tools.handcheck import load_handcheck

    print(load_handcheck(args.engine, args.scale, args.rounds))
    return 0


def _cmd_link_engines(args: argparse.Namespace) -> int:
    link_engines()
    return 0


def _cmd_install_sqlite(args: argparse.Namespace) -> int:
    install_sqlite()
    return 0


def _cmd_pgbench_overhead(args: argparse.Namespace) -> int:
    from jsonbench.tools.pgbench_overhead import measure, report

    print(report(measure(args.engine, args.script, args.seconds, args.rounds, args.scale)))
    return 0


def _cmd_quiet_check(args: argparse.Namespace) -> int:
    from jsonbench.tools.quietcheck import measure, report

    text, ok = report(*measure(args.seconds, args.engine))
    print(text)
    return 0 if ok else 1


def _cmd_report(args: argparse.Namespace) -> int:
    from jsonbench.report import build_report

    print(f"report: {build_report(args.results_dir, args.run_id)}")
    return 0


def _cmd_figures(args: argparse.Namespace) -> int:
    from jsonbench import paths
    from jsonbench.report.figures import write_markdown

    dirs = args.results_dirs or [str(paths.results_dir(None))]
    print(f"figures: {write_markdown(dirs, Path(args.out))} (from {', '.join(dirs)})")
    return 0


def _cmd_summary(args: argparse.Namespace) -> int:
    print(summary(args.results_dir, args.run_id))
    return 0


def _cmd_host(args: argparse.Namespace) -> int:
    from jsonbench.host import lease as hostlease

    lease = hostlease.holder() if args.action == "status" else hostlease.force_release()
    what = "holds" if args.action == "status" else "released; it held"
    print(
        f"{lease.cell_id} of run {lease.run_id} {what} the host since {lease.acquired_at} (engine folder {lease.workdir})"
        if lease
        else "the host is free"
    )
    return 0


def _cmd_scheduler_run(args: argparse.Namespace) -> int:
    from jsonbench.tools.scheduler_trial import report as run_report
    from jsonbench.tools.scheduler_trial import scheduler_run

    conf = _conf(args)
    # A bad parameter fails here, before Airflow starts. Then wait for the run as long as its plan says it takes, three
    # times over (a laptop matrix takes most of an hour on 2 cores; a wait that ran out would stop Airflow under a cell).
    _, expected = preview(conf)
    out = scheduler_run(conf, port=args.port, timeout_s=max(3600.0, 3 * sum(expected.values()) + 900), floor=args.floor)
    print(run_report(out))
    return 0 if out.get("state") == "success" else 1


def _cmd_plan(args: argparse.Namespace) -> int:
    from jsonbench.errors import BenchmarkError

    try:
        print(preview(_conf(args))[0])
    except BenchmarkError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    """``run`` and ``overhead``: the DAG once, its summary, views and report; ``overhead`` adds the phase table."""
    from jsonbench.errors import BenchmarkError

    try:
        conf = _conf(args)
        logical = None
        if args.resume:
            conf, logical = resume_args(args.resume, conf.get("results_dir"))
        run_id, state, wall, task_seconds = run_dag(conf, logical_date=logical)
    except BenchmarkError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"\nDAG run {run_id}: {state} in {wall:.1f} s")
    if conf.get("resume_of"):  # the rows are published under the run it finished, not under this Airflow run's id
        print(f"(it finished run {conf['resume_of']}, under whose id its rows are published)")
        run_id = conf["resume_of"]
    if run_id:
        print(summary(conf.get("results_dir"), run_id))
        try:  # the views and the report of this run; the run's results stand without them
            from jsonbench.dataset.views import refresh
            from jsonbench.report import build_report

            refresh(conf.get("results_dir"))
            print(f"\nReport: {build_report(conf.get('results_dir'), run_id)}")
        except Exception as exc:
            print(f"\nreport not built: {type(exc).__name__}: {exc}", file=sys.stderr)
        if args.cmd == "overhead":
            print()
            print(overhead_report(conf.get("results_dir"), run_id, wall, task_seconds))
    return 0 if state == "success" else 1


_COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "run": _cmd_run,
    "overhead": _cmd_run,
    "plan": _cmd_plan,
    "scheduler-run": _cmd_scheduler_run,
    "host": _cmd_host,
    "summary": _cmd_summary,
    "handcheck": _cmd_handcheck,
    "fat-update-handcheck": _cmd_fat_update_handcheck,
    "fat-update-wal-clients": _cmd_fat_update_wal_clients,
    "fat-update-reads": _cmd_fat_update_reads,
    "load-handcheck": _cmd_load_handcheck,
    "link-engines": _cmd_link_engines,
    "install-sqlite": _cmd_install_sqlite,
    "pgbench-overhead": _cmd_pgbench_overhead,
    "quiet-check": _cmd_quiet_check,
    "report": _cmd_report,
    "figures": _cmd_figures,
    "calibrate": _cmd_calibrate,
    "checkcheck": _cmd_checkcheck,
    "campaign": _cmd_campaign,
    "install-otava": _cmd_install_otava,
    "damaged": _cmd_damaged,
}


def _main_of(module: str) -> Callable[[list[str]], int]:
    """A command whose module parses its own arguments: the module's ``main(argv)``, imported only when it runs."""

    def run(argv: list[str]) -> int:
        from jsonbench import load_object

        return int(load_object(f"{module}:main")(argv))

    return run


# Commands that parse their own arguments (and print their own --help): the rest of the argv goes to them.
def _airflow(argv: list[str]) -> int:
    """``jsonbench airflow ARGS``: the venv's Airflow CLI with the project's environment (its home, DAGs, plugins)."""
    import shutil
    import subprocess

    if argv in (["--help"], ["-h"]):
        print(
            "usage: jsonbench airflow ARGS...\n\n"
            "Runs the venv's `airflow ARGS...` with the project's environment (AIRFLOW_HOME, DAGs and plugins\n"
            "folders: jsonbench.environment), from any shell. `jsonbench airflow help` prints Airflow's own help."
        )
        raise SystemExit(0)  # as argparse does after a help text
    exe = shutil.which("airflow") or "airflow"
    return subprocess.run([exe, *(["--help"] if argv == ["help"] else argv)]).returncode


_OWN_PARSERS: dict[str, tuple[str, Callable[[list[str]], int]]] = {
    "airflow": ("the project's Airflow command line (its home, DAGs and plugins), e.g. jsonbench airflow tasks clear ...", _airflow),
    "rerun": ("run an earlier DAG run again, as the same run (same run id), on this machine", _main_of("jsonbench.tools.rerun")),
    "report-bench": (
        "the report of an N-run history made from a real run: build time, offline check, charts drawn",
        _main_of("jsonbench.tools.report_bench"),
    ),
    "derive-facts": (
        "the catalogue's deterministic facts per product count, from a throwaway server of one build",
        _main_of("jsonbench.tools.derive_facts"),
    ),
    "views": ("refresh the SQL views over the results (<results>/jsonbench.duckdb)", _main_of("jsonbench.dataset.views")),
    "airflow-floor": (
        "Airflow's own cost under a run: airflow dags test of N tasks that only sleep (issue 35's floor)",
        _main_of("jsonbench.tools.floor"),
    ),
    "drift-recheck": (
        "drift on every recorded host it never saw: honest nights' alarms, a planted version and harness slowdown",
        _main_of("jsonbench.tools.driftcheck"),
    ),
    "bands": (
        "the band rule's reproduction bands for every timing finding; --write puts them into the files",
        _main_of("jsonbench.tools.bands"),
    ),
    "recheck": (
        "today's reproduction bands against every recorded run of every host, per host and scale",
        _main_of("jsonbench.tools.recheck"),
    ),
    "noise-levels": (
        "where timed series' noise enters: repetitions, engine starts, hosts (honest recorded runs)",
        _main_of("jsonbench.tools.noise_levels"),
    ),
    "restart-check": (
        "does a server restart move a cell's figures as much as a fresh engine does? (where the starts' noise enters)",
        _main_of("jsonbench.tools.restarts"),
    ),
    "sample-documents": (
        "write the documents suite's shipped sample (examples/orders.jsonl), deterministically",
        _main_of("jsonbench.tools.sample_documents"),
    ),
}


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (the process's arguments by default) and run its subcommand; returns the exit status.

    The project's environment is applied first (:func:`jsonbench.environment.apply`), so the command works
    the same from a fresh shell as after ``source bin/env.sh``.
    """
    from jsonbench import environment

    environment.apply()
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in _OWN_PARSERS:
        return _OWN_PARSERS[argv[0]][1](argv[1:])
    args = _parser().parse_args(argv)
    return _COMMANDS[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
