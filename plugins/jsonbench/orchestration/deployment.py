"""Which benchmark DAGs this Airflow deployment serves, and where their tasks run.

A Celery queue is fixed when a DAG is parsed, so one DAG measures one host. This deployment's own
host gets ``jsonb_benchmark_matrix`` (its label from ``$JSONBENCH_HARDWARE_LABEL``, its queue from
``$JSONBENCH_QUEUE``, else ``default``). Every other label listed in ``$JSONBENCH_HARDWARE_LABELS``
(comma-separated: the hosts this deployment orchestrates) gets ``jsonb_benchmark_matrix__<label>``,
whose benchmark tasks go to the queue ``bench-<label>`` that only that host's worker listens on, and
whose runs can only carry that label. Adding a benchmark host is then: start its worker, add its
label to the list, and backfill its DAG.

The nightly schedule is ``0 2 * * *`` unless ``$JSONBENCH_SCHEDULE`` says otherwise (a cron
expression, or ``none`` for a deployment that only runs what it is asked to: unpausing a DAG with
``catchup=False`` starts the latest interval's run at once).

The engines a deployment's DAGs carry a task group for are every engine of the matrix but those it marks
``on_demand`` (builds fetched on request, run for a comparison, not nightly), unless ``$JSONBENCH_HOST_ENGINES``
lists them (comma-separated engine ids): a host without Docker need not carry the Docker-only engines' groups,
and each group a run does not select still costs a skip (in ``airflow dags test`` about 2.5 s: Airflow's test
loop sleeps a second per scheduling pass that finds nothing to run). A run selecting an engine outside that
list is refused by its plan task.

Read at parse time: environment only, no I/O.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jsonbench.matrix import Matrix

DAG_ID = "jsonb_benchmark_matrix"
_LABEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")


@dataclass(frozen=True)
class BenchmarkDag:
    """One benchmark DAG: its id, the hardware label it is bound to (None: any), its benchmark queue."""

    dag_id: str
    label: str | None
    queue: str


NIGHTLY = "0 2 * * *"


def schedule(env: dict[str, str] | None = None) -> str | None:
    """The benchmark DAGs' schedule: nightly at 02:00, or ``$JSONBENCH_SCHEDULE`` (``none``: no schedule)."""
    value = (dict(os.environ if env is None else env).get("JSONBENCH_SCHEDULE") or NIGHTLY).strip()
    return None if value.lower() in ("none", "off", "") else value


def queue_for(label: str) -> str:
    return f"bench-{label}"


def benchmark_dags(env: dict[str, str] | None = None) -> list[BenchmarkDag]:
    """The benchmark DAGs of this deployment (the first is always ``jsonb_benchmark_matrix``)."""
    env = dict(os.environ if env is None else env)
    own = env.get("JSONBENCH_HARDWARE_LABEL") or None
    dags = [BenchmarkDag(DAG_ID, None, env.get("JSONBENCH_QUEUE") or "default")]
    for label in (x.strip() for x in (env.get("JSONBENCH_HARDWARE_LABELS") or "").split(",")):
        if not label or label == own or not _LABEL_RE.match(label):
            continue
        dags.append(BenchmarkDag(f"{DAG_ID}__{label}", label, queue_for(label)))
    return dags


def host_engines(env: dict[str, str] | None = None) -> list[str] | None:
    """The engine ids of ``$JSONBENCH_HOST_ENGINES`` (None: not set)."""
    value = dict(os.environ if env is None else env).get("JSONBENCH_HOST_ENGINES") or ""
    engines = [e.strip() for e in value.split(",") if e.strip()]
    return engines or None


def dag_engines(matrix: Matrix, env: dict[str, str] | None = None) -> list[str]:
    """The engines the DAGs carry task groups for: ``$JSONBENCH_HOST_ENGINES``, else the matrix's scheduled engines."""
    return host_engines(env) or matrix.scheduled_engines


def retry_delay_s(env: dict[str, str] | None = None) -> float:
    """Seconds before a failed benchmark task's one retry: 30, or ``$JSONBENCH_RETRY_DELAY_S``.

    The retry is for a worker lost mid-task; tests of faults that fail tasks on purpose set 1 so as
    not to wait out the delay once per failed task.
    """
    value = dict(os.environ if env is None else env).get("JSONBENCH_RETRY_DELAY_S") or "30"
    try:
        delay = float(value)
    except ValueError:
        raise ValueError(f"JSONBENCH_RETRY_DELAY_S: not a number of seconds: {value!r}") from None
    if delay < 0:
        raise ValueError(f"JSONBENCH_RETRY_DELAY_S: must not be negative, got {value!r}")
    return delay
