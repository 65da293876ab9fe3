"""The user's command line, declared: every option said once (an :class:`Arg`), every command an entry of
:data:`COMMANDS` naming its function in :mod:`jsonbench.cli.commands` by import path.

A new command is a new entry here (and its function); ``jsonbench --help`` lists it from its entry. The run options
(:data:`RUN_ARGS`) are shared by ``run`` and ``plan``, and by the maintainers' commands that run the DAG
(``./bin/jsonbench-dev``, which builds its table from the same classes).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from jsonbench.cli.table import SETUP, ActionCommand, Arg, MatrixValues
from jsonbench.orchestration.dagtest import DAG_ID

# The matrix's closed sets, read when a help text or a value needs them.
SCALES = MatrixValues("scales", lambda m: list(m.scales))
ENGINES = MatrixValues("engines", lambda m: list(m.engines))
SUITES = MatrixValues("suites", lambda m: list(m.suites))
BACKENDS = MatrixValues("backends", lambda m: list(m.backends))

# --- the run options ------------------------------------------------------------------------------------------------
ARG_SCALE = Arg(
    ("--scale",), "how much data each suite loads and how long it measures (default: the matrix's default_scale)", choices=SCALES
)
ARG_ENGINES = Arg(
    ("--engines",),
    "comma-separated engine ids (default: the matrix's default_engines); this checkout's: %(listing)s",
    listing=ENGINES,
    metavar="IDS",
)
ARG_SUITES = Arg(
    ("--suites",),
    "comma-separated suite names (default: $JSONBENCH_SUITES, else the matrix's default_suites); this checkout's: %(listing)s",
    listing=SUITES,
    metavar="NAMES",
)
ARG_BACKEND = Arg(
    ("--backend",),
    "where the engines run: an engine whose family lacks this backend runs on its first (default: the matrix's default_backend, "
    "or $JSONBENCH_BACKEND)",
    choices=BACKENDS,
)
ARG_REPETITIONS = Arg(("--repetitions",), "timed repetitions of every workload (default: the scale's)", type=int, metavar="N")
ARG_STARTS = Arg(
    ("--starts",),
    "engine starts each cell's timings rest on, 1-3: a restart between them, the repetitions split (default: the scale's)",
    type=int,
    metavar="N",
)
ARG_HARDWARE_LABEL = Arg(
    ("--hardware-label",),
    "the label the run's results are filed and judged under (default: $JSONBENCH_HARDWARE_LABEL, else the matrix's)",
    dest="hardware_label",
    metavar="LABEL",
)
ARG_RESULTS_DIR = Arg(
    ("--results-dir",), "the results folder (default: $JSONBENCH_RESULTS_DIR, else results/)", dest="results_dir", metavar="DIR"
)
ARG_CONF = Arg(("--conf",), "more DAG parameters as a JSON object; the options above override its keys", metavar="JSON")
ARG_DOCUMENTS = Arg(
    ("--documents",),
    "your documents for --suites documents: a .jsonl file or a folder of .json files (default: $JSONBENCH_DOCUMENTS, "
    "else examples/orders.jsonl)",
    metavar="PATH",
)
ARG_READ_KEYS = Arg(
    ("--read-keys",),
    "comma-separated key paths the documents suite reads (default: $JSONBENCH_READ_KEYS, else found by a scan)",
    dest="read_keys",
    metavar="KEYS",
)
ARG_UPDATE_KEYS = Arg(
    ("--update-keys",),
    "comma-separated key paths the documents suite updates (default: $JSONBENCH_UPDATE_KEYS, else found by a scan)",
    dest="update_keys",
    metavar="KEYS",
)

#: A run's parameters, as ``run``, ``plan`` and the instruments that run the DAG take them (see :func:`conf_of`).
RUN_ARGS: tuple[Arg, ...] = (
    ARG_SCALE,
    ARG_ENGINES,
    ARG_SUITES,
    ARG_BACKEND,
    ARG_REPETITIONS,
    ARG_STARTS,
    ARG_HARDWARE_LABEL,
    ARG_RESULTS_DIR,
    ARG_CONF,
    ARG_DOCUMENTS,
    ARG_READ_KEYS,
    ARG_UPDATE_KEYS,
)

# --- the other options ----------------------------------------------------------------------------------------------
ARG_RESUME = Arg(
    ("--resume",),
    "run an earlier run again with its parameters (a run id `jsonbench run` printed): completed cells are kept, the rest measured",
    metavar="RUN_ID",
)
ARG_RUN_ID = Arg(("--run-id",), "the run (default: the latest published)", dest="run_id", metavar="RUN_ID")
ARG_QUARANTINE = Arg(
    ("--quarantine",),
    "move damaged files under <results>/_quarantine/ (with a note each, never deleted) and sweep the leftovers",
    action="store_true",
)
ARG_HOST_ACTION = Arg(
    ("action",), "status: who holds the benchmark host; release: remove a dead holder's lease", choices=("status", "release")
)
ARG_RERUN_ID = Arg(("run_id",), "the run to run again (its id in Airflow's metadata database)", metavar="RUN_ID")
ARG_DAG_ID = Arg(("--dag-id",), "the DAG the run belongs to", default=DAG_ID, dest="dag_id")
ARG_RERUN_CONF = Arg(("--conf",), "parameters as a JSON object (default: the run's own)", metavar="JSON")
ARG_AIRFLOW_ARGS = Arg(
    ("args",), "Airflow's arguments, e.g. tasks clear ...; `help` prints Airflow's own help", nargs=argparse.REMAINDER, metavar="ARGS"
)
ARG_SAMPLE_COUNT = Arg(("--count",), "documents to write (default: the shipped sample's, 10,000)", type=int, metavar="N")
ARG_SAMPLE_OUT = Arg(("--out",), "the file to write (default: examples/orders.jsonl in the project)", metavar="PATH")

# --- a comparison's options ------------------------------------------------------------------------------------------
ARG_ARM_A = Arg(
    ("--a",),
    "arm A, the baseline: an engine id of the matrix; this checkout's: %(listing)s",
    listing=ENGINES,
    required=True,
    metavar="ENGINE",
)
ARG_ARM_B = Arg(
    ("--b",), "arm B, the change: an engine id of the same family (the same as A to compare settings)", required=True, metavar="ENGINE"
)
ARG_A_SETTING = Arg(
    ("--a-setting",), "a server setting of arm A, name=value (repeatable)", action="append", dest="a_setting", metavar="NAME=VALUE"
)
ARG_B_SETTING = Arg(
    ("--b-setting",), "a server setting of arm B, name=value (repeatable)", action="append", dest="b_setting", metavar="NAME=VALUE"
)
ARG_COMPARE_SUITES = ARG_SUITES.but(
    help="comma-separated suites to compare, of the arms' family; this checkout's: %(listing)s", required=True
)
ARG_WORKLOADS = Arg(
    ("--workloads",), "comma-separated workloads (name or suite/name) to compare (default: every workload of the suites)", metavar="NAMES"
)
ARG_PAIRS = Arg(
    ("--pairs",),
    "pairs of engine starts: one number, or staged totals (e.g. 10 20 40: more pairs only while a metric is undecided)",
    type=int,
    nargs="+",
    default=[10],
    metavar="N",
)
ARG_MARGIN = Arg(
    ("--margin",),
    "the margin of practical equivalence, a share (0.02 = 2 %%) (default: this host's A/A comparison of arm A, else 0.02)",
    type=float,
    metavar="SHARE",
)
ARG_SEED = Arg(("--seed",), "the seed of the pairs' shuffled, balanced order", type=int, default=0, metavar="N")

_CMD = "jsonbench.cli.commands"

#: The user's commands, then the setup steps, in the order ``jsonbench --help`` lists them.
COMMANDS: tuple[ActionCommand, ...] = (
    ActionCommand(
        "run",
        "run the benchmark DAG once on this machine (airflow dags test): progress, then the run's summary and report",
        f"{_CMD}.run:run",
        (*RUN_ARGS, ARG_RESUME),
        description="Runs the benchmark DAG once with `airflow dags test`: the parameters are checked and the plan's cost\n"
        "table printed before Airflow starts, then each task as it ends with the time left, then the run's summary\n"
        "table, the SQL views and the HTML report. Exit status 0 when the run succeeded and its checks passed.",
    ),
    ActionCommand(
        "plan",
        "print what a run would cost (per cell: load, disk and memory peak, duration) without running it",
        f"{_CMD}.run:plan",
        RUN_ARGS,
    ),
    ActionCommand(
        "compare",
        "judge a change: two engine builds or two settings in interleaved pairs on this host, a verdict per metric",
        f"{_CMD}.compare:compare",
        (
            ARG_ARM_A,
            ARG_ARM_B,
            ARG_A_SETTING,
            ARG_B_SETTING,
            ARG_COMPARE_SUITES,
            ARG_WORKLOADS,
            ARG_PAIRS,
            ARG_MARGIN,
            ARG_SEED,
            ARG_SCALE,
            ARG_BACKEND,
            ARG_HARDWARE_LABEL,
            ARG_RESULTS_DIR,
        ),  # fmt: skip
        description="Runs jsonb_benchmark_compare once with `airflow dags test`: each pair is one fresh engine start of\n"
        "each arm on the same data, in a shuffled order balanced between A-first and B-first, one engine alive at a\n"
        "time. Per metric: the estimate of B/A (Hodges-Lehmann over the pairs' log ratios), its 95 % interval, and a\n"
        "verdict (REGRESSION, IMPROVEMENT, EQUIVALENT, SMALL or INCONCLUSIVE with the pairs it would need); the\n"
        "deterministic facts compared exactly. Exit status 0 when no metric regressed, 1 when the run failed or one\n"
        "did, 2 for a bad parameter.",
    ),
    ActionCommand(
        "summary",
        "print a published run's summary: headline metrics per suite and engine, its checks, its files",
        f"{_CMD}.results:summary",
        (ARG_RUN_ID, ARG_RESULTS_DIR),
    ),
    ActionCommand(
        "report",
        "build the static HTML report (<results>/report/index.html) without Airflow",
        f"{_CMD}.results:report",
        (ARG_RESULTS_DIR, ARG_RUN_ID),
    ),
    ActionCommand(
        "views",
        "refresh the SQL views over the results (<results>/jsonbench.duckdb)",
        f"{_CMD}.results:views",
        (ARG_RESULTS_DIR,),
    ),
    ActionCommand(
        "damaged",
        "list dataset files that do not read whole and leftovers of killed publishes; --quarantine moves them aside",
        f"{_CMD}.results:damaged",
        (ARG_RESULTS_DIR, ARG_QUARANTINE),
    ),
    ActionCommand(
        "rerun",
        "run an earlier DAG run again, as the same run (same run id), on this machine",
        f"{_CMD}.run:rerun",
        (ARG_RERUN_ID, ARG_DAG_ID, ARG_RERUN_CONF),
        description="Clears every task of the run and runs it again under its own run id with `airflow dags test`:\n"
        "cells an earlier attempt completed are kept, publishing replaces the run's files, so the run ends with\n"
        "every row once. Its logical date and parameters are read from Airflow's metadata database.",
    ),
    ActionCommand(
        "host",
        "the host lease: who holds the benchmark host (status), or release a dead holder's lease (release)",
        f"{_CMD}.host:host",
        (ARG_HOST_ACTION,),
    ),
    ActionCommand(
        "airflow",
        "the project's Airflow command line (its home, DAGs and plugins), e.g. jsonbench airflow tasks clear ...",
        f"{_CMD}.host:airflow",
        (ARG_AIRFLOW_ARGS,),
        description="Runs the venv's `airflow ARGS...` with the project's environment (AIRFLOW_HOME, DAGs and plugins\n"
        "folders: jsonbench.environment), from any shell. `jsonbench airflow help` prints Airflow's own help.",
    ),
    ActionCommand(
        "link-engines",
        "link the PostgreSQL builds the matrix names into engines/ (from the npm packages)",
        f"{_CMD}.setup:link_engines",
        group=SETUP,
    ),
    ActionCommand("install-sqlite", "create one venv per SQLite engine of the matrix", f"{_CMD}.setup:install_sqlite", group=SETUP),
    ActionCommand(
        "install-otava",
        "create the venv of Apache Otava, the drift check's change-point detector",
        f"{_CMD}.setup:install_otava",
        group=SETUP,
    ),
    ActionCommand(
        "sample-documents",
        "write the documents suite's shipped sample (examples/orders.jsonl), deterministically",
        f"{_CMD}.setup:sample_documents",
        (ARG_SAMPLE_COUNT, ARG_SAMPLE_OUT),
        group=SETUP,
    ),
)

DESCRIPTION = """\
jsonbench: the JSON storage benchmark's command line (PostgreSQL and SQLite, run by Airflow).

Run the benchmark with `jsonbench run` (see `jsonbench run --help` for the scales, suites, engines and
backends of this checkout), read its outcome with `jsonbench summary` and `jsonbench report`."""


def conf_of(args: argparse.Namespace) -> dict[str, Any]:
    """The DAG parameters the run options (:data:`RUN_ARGS`) of ``args`` say: ``--conf``'s object, the options over it."""
    conf: dict[str, Any] = json.loads(args.conf) if getattr(args, "conf", None) else {}
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
