"""Alert notifiers: the file alert, and extra notifiers chosen by configuration only.

The Airflow context is a plain dict with the keys the task runner passes to an
on_failure_callback (``exception``, ``ti``, ``run_id``, ``params``, ``logical_date``): a failure
callback cannot be provoked here without running a DAG (the DAG-level test does that).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from jsonbench.checks.alerts import CheckFailureNotifier, FileAlertNotifier, alert_text
from jsonbench.checks.examine import ChecksFailed

RECEIVED: list[dict[str, Any]] = []


class RecordingNotifier:
    """Stands in for Slack or e-mail: records what it was built with and called with."""

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs

    def __call__(self, context: Any) -> None:
        RECEIVED.append({"kwargs": self.kwargs, "run_id": context["run_id"]})


class BrokenNotifier:
    def __init__(self, **kwargs: Any) -> None:
        pass

    def __call__(self, context: Any) -> None:
        raise ConnectionError("no route to chat server")


def _context(results_dir: Path, exc: BaseException) -> dict[str, Any]:
    return {
        "exception": exc,
        "ti": SimpleNamespace(dag_id="jsonb_benchmark_matrix", task_id="check"),
        "run_id": "manual__2026-11-29T02:00:00+00:00",
        "logical_date": datetime(2026, 11, 29, 2, tzinfo=UTC),
        "params": {"results_dir": str(results_dir)},
    }


def _failed(results_dir: Path) -> ChecksFailed:
    return ChecksFailed(
        {
            "run_id": "manual__2026-11-29T02:00:00.123456+00:00",
            "checked": 40,
            "failed": 1,
            "by_kind": {"drift": {"passed": 39, "failed": 1}},
            "drift_verdicts": {"ok": 39, "drift": 1},
            "notes": [],
            "results_dir": str(results_dir),
            "validations": "v",
            "data_docs": "d",
            "failures": [
                "drift: large_document_update/postgres-17: no_drift:json_big/default/wal_bytes observed 1.2e+07, expected [5.4e+06, 6.7e+06]"
            ],
        }
    )


def test_file_alert_written_with_what_failed(results_dir: Path) -> None:
    FileAlertNotifier()(_context(results_dir, _failed(results_dir)))
    alerts = sorted(p.name for p in (results_dir / "alerts").iterdir())
    assert alerts == ["manual__2026-11-29T02_00_00.123456_00_00.json", "manual__2026-11-29T02_00_00.123456_00_00.md"]
    md = (results_dir / "alerts" / alerts[1]).read_text()
    assert "1 of 40 checks failed" in md and "no_drift:json_big/default/wal_bytes" in md and "measurements are published" in md
    data = json.loads((results_dir / "alerts" / alerts[0]).read_text())
    assert data["task_id"] == "check" and data["summary"]["failed"] == 1


def test_crash_of_the_check_task_is_alerted_too(results_dir: Path) -> None:
    subject, text = alert_text(
        {
            "run_id": "r",
            "dag_id": "d",
            "task_id": "check",
            "logical_date": None,
            "results_dir": str(results_dir),
            "summary": {},
            "error": "RuntimeError: run 'r' has no published rows",
        }
    )
    assert "failed before finishing its checks" in subject and "no published rows" in text


def test_configured_notifiers_get_the_message_and_a_broken_one_does_not_stop_the_rest(
    results_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    RECEIVED.clear()
    monkeypatch.setenv(
        "JSONBENCH_NOTIFIERS",
        json.dumps(
            [
                {"class": f"{__name__}.BrokenNotifier"},
                {"class": f"{__name__}.RecordingNotifier", "kwargs": {"channel": "#bench", "text": "{subject}\n{message}"}},
            ]
        ),
    )
    CheckFailureNotifier()(_context(results_dir, _failed(results_dir)))
    assert (results_dir / "alerts" / "manual__2026-11-29T02_00_00.123456_00_00.md").exists()
    assert len(RECEIVED) == 1 and RECEIVED[0]["kwargs"]["channel"] == "#bench"
    assert RECEIVED[0]["kwargs"]["text"].startswith("jsonbench: 1 of 40 checks failed") and "wal_bytes" in RECEIVED[0]["kwargs"]["text"]


def test_no_configuration_means_file_alert_only(results_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    RECEIVED.clear()
    monkeypatch.setenv("JSONBENCH_NOTIFIERS", "[]")
    CheckFailureNotifier()(_context(results_dir, _failed(results_dir)))
    assert RECEIVED == [] and len(list((results_dir / "alerts").iterdir())) == 2


def test_a_night_that_moved_at_once_alerts_as_one_finding() -> None:
    """Confirmed drift across most of a suite or every engine is tonight's host or harness, worded as
    one finding in the alert's subject and first section; a few confirmed series keep the per-series subject."""
    from jsonbench.checks.alerts import alert_text
    from jsonbench.checks.confirm import _mass_notes

    suspects = [
        {"check_kind": "drift", "suite": "sqlite_jsonb", "engine_id": f"sqlite-{v}", "verdict": "suspect"}
        for v in ("3.45.0", "3.46.1", "3.54.1")
        for _ in range(4)
    ]
    summary = {"kind": "confirmation", "confirmed": 12, "suspect": 12, "judgement": "failed", "notes": _mass_notes(suspects)}
    facts = {"summary": summary, "run_id": "manual__x", "dag_id": "d", "task_id": "confirm_check", "logical_date": "t", "results_dir": "r"}
    subject, text = alert_text(facts)
    assert subject.startswith("jsonbench: tonight's host or harness: 12 timing check(s) moved at once and stayed moved"), subject
    assert "## One finding\n\n- tonight's host or harness: 12 drift suspects across 3 engine(s) and 1 suite(s)" in text
    few = {**summary, "confirmed": 2, "notes": _mass_notes(suspects[:2])}
    assert alert_text({**facts, "summary": few})[0].startswith("jsonbench: 2 timing check(s) failed twice (confirmed)")


def test_a_night_that_moved_at_once_says_whether_the_harness_changed() -> None:
    """The data cannot tell a harness change from a host the canary does not feel; the mass note says whether tonight's
    revision is the last earlier run's (of its scale), and says nothing when a run recorded none."""
    import pandas as pd

    from jsonbench.checks.confirm import _mass_notes, revision_note

    def runs(*specs: tuple[str, str, str, str]) -> pd.DataFrame:
        return pd.DataFrame([{"run_id": r, "logical_date": d, "scale": sc, "git_revision": g} for r, d, sc, g in specs])

    old, new = "354bed3" + "0" * 33, "95bbde1" + "0" * 33
    tonight = runs(("n3", "2026-12-04T16:23:39+00:00", "laptop", new))
    history = runs(
        ("n1", "2026-12-04T11:06:57+00:00", "laptop", old),
        ("n2", "2026-12-04T13:56:33+00:00", "laptop", old),
        ("s1", "2026-12-04T16:19:49+00:00", "smoke", new),  # another scale: not tonight's history
        ("n4", "2026-12-04T16:55:47+00:00", "laptop", new),  # later: not before tonight
    )
    changed = revision_note(tonight, pd.concat([history, tonight]), "laptop")
    assert changed.startswith("the harness changed since the last earlier run (354bed3 -> 95bbde1): read what that change did")
    same = revision_note(runs(("n5", "2026-12-04T17:30:00+00:00", "laptop", new)), history, "laptop")
    assert same.startswith("the harness is the last earlier run's revision (95bbde1)") and "canary does not feel" in same
    assert revision_note(runs(("n3", "2026-12-04T16:23:39+00:00", "laptop", "unknown")), history, "laptop") == ""
    assert revision_note(tonight, history.iloc[0:0], "laptop") == ""
    suspects = [
        {"check_kind": "drift", "suite": "catalogue", "engine_id": f"postgres-{v}", "verdict": "suspect"}
        for v in (16, 17, 18)
        for _ in range(3)
    ]
    (note,) = _mass_notes(suspects, changed)
    assert note.startswith("tonight's host or harness: 9 drift suspects") and note.endswith(changed)


def test_a_failed_run_says_how_to_repair_it() -> None:
    """A run whose workload failed (or whose worker died) names the tasks and the resume that measures them again."""
    from jsonbench.checks.alerts import alert_text

    summary = {"kind": "run", "failed_tasks": ["catalogue__postgres-17.storage", "check"], "states": {"failed": 2}}
    facts = {"summary": summary, "run_id": "manual__x", "dag_id": "d", "logical_date": "t", "results_dir": "r"}
    subject, text = alert_text(facts)
    assert subject == "jsonbench: run manual__x failed: 2 task(s) failed"
    assert "- `catalogue__postgres-17.storage`" in text
    assert "resume_of 'manual__x'" in text and "`jsonbench run --resume manual__x`" in text
