"""`jsonbench-dev scheduler-run` says where the time between tasks went: the scheduler's loop, the executor, empty links.

Task instances as the REST API returns them (ISO timestamps, ``queued_when``, an empty link with no duration). The
arithmetic is checked exactly; nothing here measures a timing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jsonbench.host.load import DISTURBED, Proc, disturbed_in
from jsonbench_dev.scheduler_trial import _cpu_by_component, airflow_cpu, disturbers, gaps


def _ti(task_id: str, start: float | None, end: float | None, queued: float | None = None, state: str = "success") -> dict[str, Any]:
    def iso(x: float | None) -> str | None:
        return None if x is None else f"2026-12-03T12:00:{x:06.3f}Z"

    duration = None if start is None or end is None or task_id.endswith("done") else end - start
    return {
        "task_id": task_id,
        "state": state,
        "queued_when": iso(queued),
        "start_date": iso(start),
        "end_date": iso(end),
        "duration": duration,
    }


def test_gaps_split_at_queued_and_count_the_empty_links_walked() -> None:
    tis = [
        _ti("plan", 0.0, 10.0, queued=0.0),
        _ti("a.provision", 10.6, 12.0, queued=10.5),
        _ti("b.done", 12.9, 12.9),  # a skipped group's link, completed by the scheduler in the gap
        _ti("c.provision", 14.1, 15.0, queued=14.0),
        _ti("c.w1", 14.5, 14.8, queued=14.4),  # started inside c.provision: overlaps, no gap of its own
        _ti("c.skipped", None, None, state="skipped"),
    ]
    g = gaps(tis)
    assert g["count"] == 2
    assert abs(g["gaps"] - 2.7) < 1e-6  # 10.0 -> 10.6, then 12.0 -> 14.1
    assert abs(g["to_queued_s"] - 2.5) < 1e-6  # 10.0 -> 10.5, 12.0 -> 14.0
    assert abs(g["to_start_s"] - 0.2) < 1e-6
    assert g["links"] == 1 and abs(g["with_links_s"] - 2.1) < 1e-6


def test_no_task_ran_means_no_gap() -> None:
    assert gaps([_ti("plan", None, None, state="failed")])["count"] == 0


def test_airflow_cpu_counts_only_what_each_component_spent_between_the_snapshots() -> None:
    """Sampled at the trigger and at the end: a component's CPU before the run is not the run's, and a task process that
    came and went (or started after the first snapshot) is the tasks' time, not the orchestrator's."""
    before = {1: ("airflow scheduler", 10.0), 2: ("airflow api-server", 4.0), 3: ("airflow scheduler", 1.0)}
    after = {1: ("airflow scheduler", 12.5), 2: ("airflow api-server", 4.25), 3: ("airflow scheduler", 1.5), 9: ("task", 30.0)}
    assert airflow_cpu(before, after) == {"airflow scheduler": 3.0, "airflow api-server": 0.25}


def test_airflow_cpu_reads_this_process_from_proc() -> None:
    """The snapshot reads real ``/proc`` entries: this test's own process is found, named and charged its CPU time."""
    import os

    snap = _cpu_by_component([os.getpid(), 2**22 + 7])  # the second pid does not exist: skipped, not an error
    assert list(snap) == [os.getpid()]
    name, cpu = snap[os.getpid()]
    assert name and cpu > 0
    assert not name.startswith("/") and "python" not in name.split()[0], name  # the interpreter gives way to what it runs


def test_the_task_logs_say_who_disturbed_the_measure_windows(tmp_path: Path) -> None:
    """Airflow 3's task logs are JSON lines; each disturbed window's line names its busiest other processes (host.load)."""
    from jsonbench.host.load import busiest

    line = busiest({11: 9_000_000, 12: 2_000_000}, {11: Proc(1, False, 0, 0, "api"), 12: Proc(1, False, 0, 0, "dagproc")})
    assert line.index("(11) 9 ms") < line.index("(12) 2 ms"), line  # busiest first (names from /proc, or the table's)
    logs = tmp_path / "run_id=r" / "task_id=catalogue__postgres-17.reads"
    logs.mkdir(parents=True)
    event = f"{DISTURBED} of 0.020 s: other CPU 23.0%, steal 0.0% of the machine; busiest others: "
    (logs / "attempt=1.log").write_text(
        "\n".join(
            [
                json.dumps({"event": event + "airflow api-server (40) 7 ms, sqlite3 (41) 1 ms", "level": "info"}),
                json.dumps({"event": "an unrelated line", "level": "info"}),
                json.dumps({"event": event + "airflow api-server (40) 5 ms", "level": "info"}),
            ]
        )
    )
    # What busiest() writes is what the tally reads back: each process's milliseconds, busiest first.
    assert [ms for _name, ms in disturbed_in(event + line) or []] == [9.0, 2.0], line
    assert disturbed_in("an unrelated line") is None
    got = disturbers(tmp_path)
    assert got == {"windows": 2, "by_process_ms": {"airflow api-server": 12.0, "sqlite3": 1.0}}
    assert disturbers(tmp_path / "none") == {"windows": 0, "by_process_ms": {}}
