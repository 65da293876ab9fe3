"""The maintainers' command line, ``./bin/jsonbench-dev``: the instruments that measure the benchmark itself.

Declared like the user's (:mod:`jsonbench.cli.config`), from the same :class:`~jsonbench.cli.Arg` and
:class:`~jsonbench.cli.ActionCommand`: each command names its function by import path, imported when it runs. The
run options are the user's own (:data:`jsonbench.cli.config.RUN_ARGS`), so an instrument that runs the DAG takes a
run's parameters exactly as ``jsonbench run`` does.
"""

from __future__ import annotations

import sys
from pathlib import Path

from jsonbench.cli import ActionCommand, Arg
from jsonbench.cli.config import (
    ARG_HARDWARE_LABEL,
    ARG_RESULTS_DIR,
    ARG_RESUME,
    ARG_SCALE,
    ARG_SUITES,
    RUN_ARGS,
)

_M = "jsonbench_dev"
_C = f"{_M}.commands"


def _engine(default: str) -> Arg:
    return Arg(("--engine",), "the PostgreSQL engine to start (an engine id of the matrix)", default=default)


def _scale(default: str) -> Arg:
    return ARG_SCALE.but("the catalogue's size to load", default=default)


def _rounds(default: int, what: str = "rounds, alternating the two sides") -> Arg:
    return Arg(("--rounds",), what, type=int, default=default, metavar="N")


ARG_FOLDERS = Arg(
    ("--results-dir",), "another folder of honest runs (repeatable)", action="append", default=[], dest="results_dir", metavar="DIR"
)
ARG_RECORDED = Arg(("--recorded",), "the recorded runs' folder (default: recorded/ in the project)", metavar="DIR")
ARG_JSON = Arg(("--json",), "print the outcome as JSON", dest="as_json", action="store_true")

COMMANDS: tuple[ActionCommand, ...] = (
    # --- the pipeline against the same work by hand --------------------------------------------------------------------
    ActionCommand(
        "handcheck",
        "seed 004 through the pipeline and by hand with psql, on one server",
        f"{_C}:handcheck",
        (
            _engine("postgres-16"),
            Arg(("--rows",), "documents loaded", type=int, default=5000, metavar="N"),
            Arg(("--repetitions",), "timed repetitions of each side", type=int, default=3, metavar="N"),
        ),
        doc_of=f"{_M}.handcheck",
    ),
    ActionCommand(
        "fat-update-handcheck",
        "the catalogue's 8 kB document update as a matrix task vs pgbench by hand, same server",
        f"{_C}:fat_update_handcheck",
        (_engine("postgres-17"), _scale("laptop"), _rounds(2)),
        doc_of=f"{_M}.handcheck",
    ),
    ActionCommand(
        "fat-update-wal-clients",
        "the 8 kB update's fixed-count WAL per update with one client and with the machine's, alternated on one server",
        f"{_C}:fat_update_wal_clients",
        (_engine("postgres-17"), _scale("laptop"), _rounds(3)),
        doc_of=f"{_M}.handcheck",
    ),
    ActionCommand(
        "fat-update-reads",
        "the 8 kB read timed by pgbench at the machine's clients and at one, and inside the server, alternated on one server",
        f"{_C}:fat_update_reads",
        (_engine("postgres-16"), _scale("laptop"), _rounds(3)),
        doc_of=f"{_M}.handcheck",
    ),
    ActionCommand(
        "load-handcheck",
        "the catalogue's load through the pipeline vs the same SQL by hand with psql, same server",
        f"{_C}:load_handcheck",
        (_engine("postgres-17"), _scale("full"), _rounds(1)),
        doc_of=f"{_M}.handcheck",
    ),
    ActionCommand(
        "pgbench-overhead",
        "catalogue pgbench scripts through the pipeline vs by hand, same server: both tps, their ratio and the paired ratio",
        f"{_C}:pgbench_overhead",
        (
            _engine("postgres-17"),
            Arg(
                ("--script",),
                "comma-separated catalogue scripts (cb_rel, upd_doc, upd_fat_doc, ...) or groups: reads, updates, all",
                default="cb_rel",
            ),
            Arg(("--seconds",), "pgbench's duration of each side", type=int, default=5, metavar="S"),
            _rounds(3),
            _scale("smoke"),
        ),
        doc_of=f"{_M}.pgbench_overhead",
    ),
    ActionCommand(
        "quiet-check",
        "the quiet detector both ways on this machine: idle (>= 95 %% quiet) and beside a one-core busy loop (>= 95 %% busy)",
        f"{_C}:quiet_check",
        (
            Arg(("--seconds",), "seconds of windows per phase", type=float, default=20.0, metavar="S"),
            Arg(("--engine",), "the PostgreSQL engine to start (default: the matrix's first)"),
        ),
        doc_of=f"{_M}.quietcheck",
    ),
    # --- what orchestration costs ----------------------------------------------------------------------------------------
    ActionCommand(
        "overhead",
        "a run as `jsonbench run` makes it, then each phase's time and the wall time over the time measured",
        f"{_C}:overhead",
        (*RUN_ARGS, ARG_RESUME),
        doc_of=f"{_M}.overhead",
    ),
    ActionCommand(
        "scheduler-run",
        "one run through a private Airflow scheduler (LocalExecutor), triggered over the REST API: wall time, engines alive at once",
        f"{_C}:scheduler_run",
        (
            *RUN_ARGS,
            Arg(("--port",), "the API server's port (default: a free one)", type=int, metavar="PORT"),
            Arg(
                ("--floor",),
                "then Airflow's floor in the same scheduler: one sleep per task that ran, of its duration",
                action="store_true",
            ),
        ),
        doc_of=f"{_M}.scheduler_trial",
    ),
    ActionCommand(
        "airflow-floor",
        "Airflow's own cost under a run: airflow dags test of N tasks that only sleep",
        f"{_M}.floor:main",
        (
            Arg(("--tasks",), "task instances in all, as many as the run it stands beside (one smoke cell: 16)", type=int, default=16),
            Arg(("--seconds",), "what each task sleeps (0: Airflow's own cost only)", type=float, default=0.0),
        ),
        doc_of=f"{_M}.floor",
    ),
    # --- the checks' bands, their noise model, their own check ----------------------------------------------------------
    ActionCommand(
        "calibrate",
        "observed min/median/max per finding and engine over recorded runs of one scale, and the band a stated rule proposes",
        f"{_C}:calibrate",
        (
            ARG_SCALE.but(required=True),
            ARG_RESULTS_DIR,
            ARG_HARDWARE_LABEL,
            ARG_SUITES,
            Arg(
                ("--fact-tolerance",),
                "deterministic findings: widen the observed range by this share",
                type=float,
                default=0.01,
                dest="fact_tolerance",
            ),
            Arg(("--json",), "print the proposals as JSON", dest="as_json", action="store_true"),
            Arg(
                ("--include-disturbed",),
                "also use timing findings measured while the host was busy (quiet false)",
                action="store_true",
                dest="include_disturbed",
            ),
            Arg(
                ("--record",),
                "write the noise model (calibration record) of the label and scale instead: include/calibration/local/<scale>.json "
                "for label local, <results>/calibration/<label>/<scale>.json otherwise",
                action="store_true",
            ),
            Arg(
                ("--exclude",),
                "with --record: leave a disturbed run (or some of its suites) out of the noise model; repeatable",
                action="append",
                default=[],
                metavar="RUN_ID[::SUITE,...]",
            ),
            Arg(("--why",), "with --record: why these runs (stored in the record)", default=""),
            Arg(
                ("--recorded",),
                "with --record: model the noise from the honest runs of every host in recorded/ (recorded/hosts.json), and the "
                "--results-dir folder when one is given: between starts inside each host, between hosts across them",
                action="store_true",
            ),
        ),
        doc_of=f"{_M}.calibrate",
    ),
    ActionCommand(
        "campaign",
        "N honest runs through the DAG one after another (resumable), then the calibration record of the label and scale",
        f"{_C}:campaign",
        (
            ARG_SCALE.but(required=True),
            Arg(("--runs",), "how many honest runs the record is made of", type=int, required=True, metavar="N"),
            *(a for a in RUN_ARGS if a is not ARG_SCALE),
        ),
        doc_of=f"{_M}.campaign",
    ),
    ActionCommand(
        "checkcheck",
        "plant wrong results into copies of real runs, rerun the real check, report the share caught and false alarms",
        f"{_C}:checkcheck",
        (
            ARG_RESULTS_DIR.but("the results folder holding the real published runs (read only)"),
            ARG_HARDWARE_LABEL.but("the hardware label whose runs are used (default: the folder's only one)"),
            ARG_SCALE.but("the scale whose runs are used (default: the folder's only one)"),
            Arg(("--work-dir",), "where the copies go (default: a temporary folder, removed afterwards)", dest="work_dir", metavar="DIR"),
            Arg(("--kinds",), "comma-separated plant kinds (default: all)", metavar="KINDS"),
            Arg(("--honest",), "how many of the latest honest runs to recheck for false alarms (default: all)", type=int, metavar="N"),
            Arg(("--target",), "the run to plant into (default: the latest); its earlier runs are the history", metavar="RUN_ID"),
            ARG_JSON,
            Arg(("--no-power",), "skip the planted slowdowns of every size (drift's power)", dest="power", action="store_false"),
            Arg(
                ("--save-to",),
                "the results folder whose report shows these figures (default: the default results folder); "
                "written to <it>/checkcheck/<label>-<scale>.json",
                dest="save_to",
                metavar="DIR",
            ),
        ),
        doc_of=f"{_M}.checkcheck",
    ),
    ActionCommand(
        "bands",
        "the band rule's reproduction bands for every timing finding; --write puts them into the files",
        f"{_M}.bands:main",
        (
            Arg(
                ("--expectations",), "the expectations folder (default: include/expectations or $JSONBENCH_EXPECTATIONS_DIR)", metavar="DIR"
            ),
            Arg(("--write",), "write the rule's bands into the reproduction files", action="store_true"),
        ),
        doc_of=f"{_M}.bands",
    ),
    ActionCommand(
        "recheck",
        "today's reproduction bands against every recorded run of every host, per host and scale",
        f"{_M}.recheck:main",
        (ARG_FOLDERS.but("another results folder to recheck (repeatable)"), ARG_RECORDED, ARG_JSON),
        doc_of=f"{_M}.recheck",
    ),
    ActionCommand(
        "drift-recheck",
        "drift on every recorded host it never saw: honest nights' alarms, a planted version and harness slowdown",
        f"{_M}.driftcheck:main",
        (
            ARG_SCALE.but("the scale of the runs judged", default="laptop"),
            ARG_FOLDERS,
            Arg(("--factor",), "the planted slowdown (above 1)", type=float, default=1.25),
            Arg(("--nights",), "how many of a host's last runs the version plant lasts", type=int, default=3),
            Arg(("--max-honest",), "alarms an honest run may raise before the exit is 1", type=int, default=0, dest="max_honest"),
            Arg(
                ("--host",),
                "judge only the machines whose host (its boot_id) starts with this (repeatable; default: every one)",
                action="append",
                default=[],
                metavar="BOOT_ID",
            ),
            Arg(
                ("--judge-only",),
                "judge only the --results-dir folders' runs (each machine's history is what those folders hold, as a user's "
                "results folder is); recorded/ still gives the other machines' record",
                action="store_true",
                dest="judge_only",
            ),
            Arg(
                ("--starts",),
                "judge the nights whose figures rest on this many engine starts; the record is still built from the other "
                "machines' one-start runs, as a night of another design reads the committed record",
                type=int,
                default=1,
            ),
        ),
        doc_of=f"{_M}.driftcheck",
    ),
    ActionCommand(
        "noise-levels",
        "where timed series' noise enters: repetitions, engine starts, hosts (honest recorded runs)",
        f"{_M}.noise_levels:main",
        (
            ARG_FOLDERS,
            ARG_RECORDED,
            Arg(("--no-recorded",), "only the --results-dir folders", action="store_true", dest="no_recorded"),
            Arg(
                ("--arm",),
                "instead: compare arms of an experiment, each its folders of one host's runs (repeatable; the first is the base)",
                action="append",
                default=[],
                metavar="NAME=DIR[,DIR...]",
            ),
            Arg(
                ("--canary-fit",),
                "instead: the committed local record's canary fit at SCALE (what drift takes out, per workload)",
                dest="canary_fit",
                metavar="SCALE",
            ),
            Arg(
                ("--quotients",),
                "instead: does a finding's quotient of two designs cancel what moves its inputs between starts?",
                action="store_true",
            ),
            Arg(
                ("--versions",),
                "instead: how much of a series' move between nights its versions share, over these folders of one host's runs",
                metavar="DIR[,DIR...]",
            ),
        ),
        doc_of=f"{_M}.noise_levels",
    ),
    ActionCommand(
        "restart-check",
        "does a server restart move a cell's figures as much as a fresh engine does? (where the starts' noise enters)",
        f"{_M}.restarts:main",
        (
            _engine("postgres-17"),
            Arg(("--suite",), "the suite whose workloads run", default="json_vs_jsonb", choices=ARG_SUITES.listing),
            ARG_SCALE.but("the suite's scale", default="laptop"),
            Arg(("--fresh",), "fresh engines, one after another (each a new load)", type=int, default=3, metavar="N"),
            Arg(("--restarts",), "rounds of every workload inside each engine, a restart between them", type=int, default=3, metavar="N"),
            Arg(("--out",), "keep every round's figures as JSON here", metavar="FILE"),
            Arg(("--summarize",), "instead: summarize a file --out wrote", metavar="FILE"),
        ),
        doc_of=f"{_M}.restarts",
    ),
    # --- the report, the catalogue's facts, the seeds' figures -------------------------------------------------------------
    ActionCommand(
        "report-bench",
        "the report of an N-run history made from a real run: build time, offline check, charts drawn",
        f"{_M}.report_bench:main",
        (
            Arg(("--source",), "results folder holding a real published run (default: the project's results folder)", metavar="DIR"),
            Arg(("--runs",), "runs in the history made", type=int, default=20, metavar="N"),
            Arg(
                ("--check",), "check every night for real (slow) instead of re-keying the source run's validation rows", action="store_true"
            ),
            Arg(("--out",), "where to build the history (default: a new temporary folder, removed afterwards)", metavar="DIR"),
            Arg(("--browser",), "also open the page in headless Chromium without network and count the charts drawn", action="store_true"),
        ),
        doc_of=f"{_M}.report_bench",
    ),
    ActionCommand(
        "derive-facts",
        "the catalogue's deterministic facts per product count, from a throwaway server of one build",
        f"{_M}.derive_facts:main",
        (
            Arg(("--build",), "the pinned PostgreSQL build (its folder under engines/postgres/node_modules)", default="pg17"),
            Arg(("--products",), "comma-separated product counts (the scales' catalogue sizes)", default="20000,200000,1000000"),
        ),
        doc_of=f"{_M}.derive_facts",
    ),
    ActionCommand(
        "figures",
        "write the seeds' findings side by side with every engine version at laptop and full (docs/figures.md)",
        f"{_C}:figures",
        (
            Arg(
                ("--results-dir",),
                "a results folder to read (repeatable; default: the results folder)",
                action="append",
                dest="results_dirs",
                metavar="DIR",
            ),
            Arg(("--out",), "the markdown file to write", default="docs/figures.md", metavar="FILE"),
        ),
    ),
    ActionCommand(
        "readme-examples",
        "write the README's examples from a recorded run: the summary's text (docs/examples, README) and the report's first screen",
        f"{_M}.readme_examples:main",
        (
            Arg(
                ("--results-dir",),
                "the results folder whose latest run is shown (default: recorded/local-b1dda63-76df4b9f)",
                dest="results_dir",
                metavar="DIR",
            ),
            Arg(("--out",), "the folder written (default: docs/examples)", metavar="DIR"),
            Arg(("--no-screenshot",), "write the summary only (no Chromium)", action="store_true", dest="no_screenshot"),
        ),
        doc_of=f"{_M}.readme_examples",
    ),
    ActionCommand(
        "fit-documents",
        "the json_vs_jsonb documents measured on a server against seed 001's published sizes and compression",
        f"{_M}.fit_documents:main",
        (
            Arg(("--dsn",), "libpq conninfo or URI (default: $JSONBENCH_FIT_DSN)", exclusive="where", metavar="DSN"),
            Arg(
                ("--bin-dir",),
                "start a throwaway server from this PostgreSQL bin directory",
                exclusive="where",
                dest="bin_dir",
                type=Path,
                metavar="DIR",
            ),
            Arg(("--build",), "start a throwaway server of a pinned build (npm alias: pg16, pg17.9, ...)", exclusive="where"),
            Arg(
                ("--from-json",),
                "report a result written by --json-out again, without a server",
                exclusive="where",
                dest="from_json",
                type=Path,
                metavar="FILE",
            ),
            Arg(("--small-rows",), "rows of the small shapes", type=int, default=20000, dest="small_rows", metavar="N"),
            Arg(("--medium-rows",), "rows of the medium shapes", type=int, default=5000, dest="medium_rows", metavar="N"),
            Arg(("--large-rows",), "rows of the large shapes", type=int, default=1000, dest="large_rows", metavar="N"),
            Arg(("--shapes",), "comma-separated shapes (default: all six)", metavar="SHAPES"),
            Arg(
                ("--sql",),
                "SQL run after setup.sql (candidate generators); repeatable",
                action="append",
                default=[],
                type=Path,
                metavar="FILE",
            ),
            Arg(("--no-lz4",), "skip the lz4 tables even when the build has lz4", action="store_true", dest="no_lz4"),
            Arg(("--json",), "print the raw figures as JSON instead of markdown", action="store_true"),
            Arg(("--json-out",), "also write the raw figures as JSON to this file", dest="json_out", type=Path, metavar="FILE"),
        ),
        doc_of=f"{_M}.fit_documents",
    ),
)

DESCRIPTION = """\
jsonbench-dev: the maintainers' instruments, which measure the benchmark itself (not part of the product).

The pipeline against the same work by hand, what orchestration costs, the checks' bands and noise model,
the checks' own check, the report's build benchmark. A user's commands are `.venv/bin/jsonbench`'s."""


def main(argv: list[str] | None = None) -> int:
    """``./bin/jsonbench-dev ARGS``: parse and run one instrument (the project's environment applied first)."""
    from jsonbench import environment
    from jsonbench.cli.parser import build_parser, run

    environment.apply()
    return run(build_parser("jsonbench-dev", DESCRIPTION, COMMANDS), sys.argv[1:] if argv is None else argv)
