"""``jsonbench-dev overhead``: a run as ``jsonbench run`` makes it, then what orchestration cost it.

The time of each phase against the run's wall time, and the ratio of wall time to the time spent inside
measurement windows and data loads (the work floor): what Airflow, process start-up and scheduling add. Airflow's
own floor beneath that figure is ``jsonbench-dev airflow-floor`` (:mod:`jsonbench_dev.floor`).
"""

from __future__ import annotations

from jsonbench import paths


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
