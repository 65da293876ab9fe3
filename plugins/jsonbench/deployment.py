"""Which benchmark DAGs this Airflow deployment serves, and where their tasks run.

A Celery queue is fixed when a DAG is parsed, so one DAG measures one host. This deployment's own
host gets ``jsonb_benchmark_matrix`` (its label from ``$JSONBENCH_HARDWARE_LABEL``, its queue from
``$JSONBENCH_QUEUE``, else ``default``). Every other label listed in ``$JSONBENCH_HARDWARE_LABELS``
(comma-separated: the hosts this deployment orchestrates) gets ``jsonb_benchmark_matrix__<label>``,
whose benchmark tasks go to the queue ``bench-<label>`` that only that host's worker listens on, and
whose runs can only carry that label. Adding a benchmark host is then: start its worker, add its
label to the list, and backfill its DAG.

Read at parse time: environment only, no I/O.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

DAG_ID = "jsonb_benchmark_matrix"
_LABEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")


@dataclass(frozen=True)
class BenchmarkDag:
    """One benchmark DAG: its id, the hardware label it is bound to (None: any), its benchmark queue."""

    dag_id: str
    label: str | None
    queue: str


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
