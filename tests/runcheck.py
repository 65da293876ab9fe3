"""What every test of a real DAG run asserts about it: completion, publication, sanity, deterministic facts.

Never the run's state: the check task judges timing bands too, and on a machine shared with other work a
band may miss, which fails the check (and so the run) and alerts, as it should. The benchmark commands
measure timings; a test asserts what must hold however busy the machine is. Used by the DAG tests
(tests/dags), the Docker backend's smoke matrix (tests/docker/test_docker_engine.py) and the Compose stack
self-test (tests/docker/test_compose_stack.py); tests/dags/test_dag_run.py shows a planted wrong fact fails it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jsonbench.checks.outcome import check_outcome


def states_of(task_instances: list[dict[str, Any]]) -> dict[str, str]:
    """``{task_id: state}`` from the REST API's task instances (a mapped task: its worst instance)."""
    order = ("failed", "upstream_failed", "up_for_retry", "running", "queued", "scheduled", "none", "skipped", "success")
    out: dict[str, str] = {}
    for ti in task_instances:
        state = str(ti.get("state") or "none")
        old = out.get(ti["task_id"])
        rank = order.index(state) if state in order else 0
        if old is None or rank < (order.index(old) if old in order else 0):
            out[ti["task_id"]] = state
    return out


#: Tasks whose state includes timing bands (the check judges them; a confirmation step, when the DAG has
#: one, re-measures suspect timing cells; the outcome fails with either): never asserted as success.
JUDGEMENT_TASKS = ("check", "outcome")


def judges_timing(task_id: str) -> bool:
    return task_id in JUDGEMENT_TASKS or "confirm" in task_id


def assert_run_correct(results: Path, run_id: str, states: dict[str, str]) -> dict:
    """Completion, publication, sanity and every deterministic fact of one DAG run; never its state.

    Every task but the judgement ones succeeded (or was skipped: unselected cells), the run published
    and was checked; the stored validation rows (``check_outcome``) show schema and completeness passed
    and every deterministic fact (HOT counts, sizes, page ratios, plan shapes on every cell) passed.
    A failed check is accepted only when nothing but timing failed: a busy machine, not a wrong fact.
    Returns the outcome.
    """
    bad = {t: s for t, s in states.items() if not judges_timing(t) and s not in ("success", "skipped")}
    assert not bad, f"tasks that did not succeed: {bad}"
    assert states["publish"] == "success" and states["checked"] == "success", states
    out = check_outcome(results, run_id)
    assert out["sanity_ok"], out["failed"]
    assert out["facts_ok"], out["failed"]
    assert out["by_tag"]["deterministic"]["passed"] > 0, "no deterministic fact was judged"
    if states["check"] != "success":
        assert states["check"] == "failed" and out["only_timing_failed"], (states["check"], out["failed"])
    return out
