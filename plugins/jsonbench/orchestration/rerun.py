"""Run an earlier DAG run again, as the same run, on this machine: ``jsonbench rerun RUN_ID``.

``airflow dags test DAG LOGICAL_DATE`` names every run after the moment it starts (``manual__<now>``),
whatever logical date it is given, so "the same run again" through it is a new run: its rows would
be published under a second run key beside the failed attempt's. A scheduler reruns a run in place
when its tasks are cleared; without one, this module does the same with ``dags test``'s own loop:
it clears every task instance of the run (``airflow tasks clear`` for the whole run), puts the run
back to running, and lets ``dags test`` execute it under its original run id. The DAG's plan task
then keeps the staged work of cells an earlier attempt completed (see ``jsonbench.orchestration.tasks.plan``) and
publishing replaces the run's file, so the run ends with every row once.

The run's logical date and parameters are read from Airflow's metadata database.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from jsonbench.orchestration.dagtest import DAG_ID


def _find_run(dag_id: str, run_id: str) -> tuple[str, dict[str, Any]]:
    """The logical date (ISO) and conf of an existing run."""
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session

    with create_session() as session:
        dr = session.query(DagRun).filter(DagRun.dag_id == dag_id, DagRun.run_id == run_id).one_or_none()
        if dr is None:
            raise SystemExit(f"no run {run_id!r} of {dag_id} in the metadata database ({_db()}); nothing to run again")
        if dr.logical_date is None:
            raise SystemExit(f"run {run_id!r} has no logical date; `dags test` can only address runs by logical date")
        return dr.logical_date.isoformat(), dict(dr.conf or {})


def _db() -> str:
    from airflow.configuration import conf

    return str(conf.get("database", "sql_alchemy_conn"))


def rerun(run_id: str, dag_id: str = DAG_ID, conf: dict[str, Any] | None = None) -> int:
    """Clear ``run_id`` and run it again in this process with ``airflow dags test`` (its exit status)."""
    from airflow.models.dagrun import DagRun
    from airflow.serialization.definitions.dag import SerializedDAG
    from airflow.utils.state import DagRunState

    logical, stored = _find_run(dag_id, run_id)
    clear = SerializedDAG.clear_dags.__func__  # type: ignore[attr-defined]  # the classmethod's function

    def clear_for_rerun(cls: Any, dags: Any, **kwargs: Any) -> Any:
        kwargs["dag_run_state"] = DagRunState.RUNNING  # dags test only drives a running run
        return clear(cls, dags, **kwargs)

    SerializedDAG.clear_dags = classmethod(clear_for_rerun)  # type: ignore[method-assign,assignment]  # a deliberate patch, this process only
    DagRun.generate_run_id = staticmethod(lambda **_: run_id)  # type: ignore[method-assign]  # a deliberate patch: the rerun keeps its run id
    from airflow.__main__ import main

    sys.argv = ["airflow", "dags", "test", dag_id, logical, "-c", json.dumps(conf if conf is not None else stored)]
    try:
        main()
    except SystemExit as exc:
        return int(exc.code or 0) if not isinstance(exc.code, str) else 1
    return 0
