"""Alerts when a run's checks fail, through Airflow's notifier mechanism (``airflow.sdk.BaseNotifier``).

* :class:`FileAlertNotifier`, always on: a clear ERROR log entry plus ``<results>/alerts/<run_key>.json``
  and ``.md`` (what failed, bounds, where the validation rows and Data Docs are).
* :class:`CheckFailureNotifier`, the check task's ``on_failure_callback``: runs the file notifier,
  then every notifier named by configuration, so Slack, e-mail or any other Airflow notifier is a
  configuration change, not a code change. The configuration is read when the alert fires, from
  the environment variable ``JSONBENCH_NOTIFIERS`` or else the Airflow Variable ``jsonbench_notifiers``:
  a JSON list of ``{"class": "dotted.path.Notifier", "kwargs": {...}}`` (or plain class paths). In
  string kwargs, ``{message}`` is replaced by the alert's markdown text and ``{subject}`` by its
  one-line title; for example::

      [{"class": "airflow.providers.smtp.notifications.smtp.SmtpNotifier",
        "kwargs": {"to": "bench@example.org", "smtp_conn_id": "smtp_default",
                   "subject": "{subject}", "html_content": "<pre>{message}</pre>"}},
       {"class": "airflow.providers.slack.notifications.slack.SlackNotifier",
        "kwargs": {"slack_conn_id": "slack_default", "channel": "#benchmarks", "text": "{message}"}}]

A notifier that fails is logged and does not stop the others (the file alert is written first).
"""

from __future__ import annotations

import json
import logging
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from airflow.sdk import BaseNotifier

from jsonbench import load_object
from jsonbench.checks.verdicts import MASS_NOTE

log = logging.getLogger(__name__)

ENV_VAR = "JSONBENCH_NOTIFIERS"
VARIABLE = "jsonbench_notifiers"


def _run_facts(context: Any) -> dict[str, Any]:
    """Run id, DAG, task, dates and the results folder, from whatever the context holds."""
    exc = context.get("exception")
    summary = getattr(exc, "summary", None) or {}
    ti = context.get("ti") or context.get("task_instance")
    dag_run = context.get("dag_run")
    params = context.get("params") or {}
    from jsonbench import paths

    results = summary.get("results_dir") or str(paths.results_dir(params.get("results_dir") if hasattr(params, "get") else None))
    logical = context.get("logical_date")
    return {
        "run_id": summary.get("run_id") or context.get("run_id") or getattr(dag_run, "run_id", None) or "unknown-run",
        "dag_id": getattr(ti, "dag_id", None) or getattr(context.get("dag"), "dag_id", None),
        "task_id": getattr(ti, "task_id", None),
        "logical_date": logical.isoformat() if hasattr(logical, "isoformat") else logical,
        "results_dir": results,
        "summary": summary,
        "error": f"{type(exc).__name__}: {exc}" if exc is not None else "task failed (no exception in context)",
    }


def alert_text(facts: dict[str, Any]) -> tuple[str, str]:
    """``(subject, markdown)`` of an alert."""
    s = facts["summary"]
    if s.get("kind") == "run":
        failed = s.get("failed_tasks") or []
        subject = f"jsonbench: run {facts['run_id']} failed: {len(failed)} task(s) failed"
        lines = [
            f"# {subject}",
            "",
            f"- DAG `{facts['dag_id']}`, logical date {facts['logical_date']}",
            f"- results: `{facts['results_dir']}`",
            f"- task states: {json.dumps(s.get('states'))}",
            "",
            "## Failed tasks",
            "",
        ]
        lines += [f"- `{t}`" for t in failed]
        lines += [
            "",
            "Whatever the run staged before it failed is published (see the run's rows); a cell whose tasks failed has no rows.",
            f"Resume the run to repair it (trigger the DAG with its parameters and resume_of {facts['run_id']!r}, or "
            f"`jsonbench run --resume {facts['run_id']}`): completed cells are kept, the rest measured again on a fresh engine.",
        ]
        return subject, "\n".join(lines) + "\n"
    if s.get("kind") == "confirmation" or s.get("not_judged"):
        return _judgement_alert(facts)
    if s:
        subject = f"jsonbench: {s.get('failed')} of {s.get('checked')} checks failed for run {facts['run_id']}"
    else:
        subject = f"jsonbench: the check task of run {facts['run_id']} failed before finishing its checks"
    lines = [
        f"# {subject}",
        "",
        f"- DAG `{facts['dag_id']}`, task `{facts['task_id']}`, logical date {facts['logical_date']}",
        f"- results: `{facts['results_dir']}`",
    ]
    if s:
        lines += [
            f"- validation rows: `{s.get('validations')}`",
            f"- Data Docs: `{s.get('data_docs')}`",
            f"- by kind: {json.dumps(s.get('by_kind'))}",
            f"- drift verdicts: {json.dumps(s.get('drift_verdicts'))}",
            "",
            "## Failed checks",
            "",
        ]
        lines += [f"- {f}" for f in s.get("failures", [])]
        if s.get("failed", 0) > len(s.get("failures", [])):
            lines.append(f"- ... and {s['failed'] - len(s['failures'])} more (see the validation rows)")
        lines += _judged_lines(s)
        if s.get("notes"):
            lines += ["", "## Notes", ""] + [f"- {n}" for n in s["notes"]]
        lines += ["", "The night's measurements are published and untouched; only the checks failed."]
    else:
        lines += ["", "## Error", "", "```", facts["error"], "```"]
    return subject, "\n".join(lines) + "\n"


def _suspect_lines(s: dict[str, Any]) -> list[str]:
    """The suspects still waiting for their confirmation (they do not alert by themselves)."""
    if not s.get("suspects"):
        return []
    return ["", "## Suspect (measured again before any timing alert)", ""] + [f"- {x}" for x in s["suspects"]]


def _judged_lines(s: dict[str, Any]) -> list[str]:
    """The judged share, then the suspects."""
    return (["", "## Judged", "", f"- {s['judged_line']}"] if s.get("judged_line") else []) + _suspect_lines(s)


def _judgement_alert(facts: dict[str, Any]) -> tuple[str, str]:
    """``(subject, markdown)`` of a confirmed timing failure or of a run that judged too little (``not_judged``).

    A confirmed failure shows both measurements (the night's and its confirmation's, with the band);
    a run not judged says how much it judged and what the threshold is, and never reads as passed.
    """
    s = facts["summary"]
    run = facts["run_id"]
    mass = [n for n in s.get("notes") or [] if str(n).startswith(MASS_NOTE)]
    if s.get("confirmed") and mass:
        # One finding, not one alarm a series: a night that moved most of a suite or every engine is its host or harness.
        subject = f"jsonbench: {MASS_NOTE} {s['confirmed']} timing check(s) moved at once and stayed moved (confirmed) in run {run}"
    elif s.get("confirmed"):
        subject = f"jsonbench: {s['confirmed']} timing check(s) failed twice (confirmed) for run {run}"
    elif s.get("failed"):
        subject = f"jsonbench: {s.get('failed')} of {s.get('checked')} checks failed and run {run} is not judged"
    else:
        subject = f"jsonbench: run {run} is NOT JUDGED: too little of its timing could be judged"
    if s.get("not_judged") and s.get("confirmed"):
        subject += "; the run is not judged"
    lines = [
        f"# {subject}",
        "",
        f"- DAG `{facts['dag_id']}`, task `{facts['task_id']}`, logical date {facts['logical_date']}",
        f"- results: `{facts['results_dir']}`",
        f"- judgement: **{s.get('judgement')}**; {s.get('judged_line')}",
    ]
    if mass and s.get("confirmed"):
        lines += ["", "## One finding", "", *(f"- {n}" for n in mass)]
    if s.get("kind") == "confirmation":
        lines += [
            f"- suspects measured again: {s.get('suspect', 0)}: confirmed {s.get('confirmed', 0)}, cleared {s.get('cleared', 0)}, "
            f"unconfirmed {s.get('unconfirmed', 0)}",
            "",
            "## Confirmations (first measurement, then its confirmation)",
            "",
        ]
        lines += [f"- {x}" for x in s.get("confirmations", [])] or ["- none"]
        if s.get("already_alerted"):
            lines += ["", f"{s['already_alerted']} deterministic or sanity failure(s) alerted at once, from the check task."]
    else:
        lines += ["", "## Failed checks", ""] + ([f"- {f}" for f in s.get("failures", [])] or ["- none"])
        lines += _suspect_lines(s)
    if s.get("not_judged"):
        lines += [
            "",
            f"Not judged: fewer than {100 * s['judged']['threshold']:.0f} % of the timing findings and drift series that could be "
            "judged tonight were measured on a quiet host (or confirmed). The run does not count as passed; see the "
            "`quiet` and `host_other_cpu` columns of its rows for what else used the machine.",
        ]
    lines += ["", "The night's measurements are published and untouched; confirmation rows are under `confirmations/`."]
    return subject, "\n".join(lines) + "\n"


class FileAlertNotifier(BaseNotifier):
    """Writes the alert as JSON and markdown under ``<results>/alerts/`` and logs it at ERROR level."""

    def notify(self, context: Any) -> None:
        from jsonbench.dataset.fsio import write_text_atomic
        from jsonbench.dataset.schema import run_key
        from jsonbench.dataset.staging import write_json_atomic

        facts = _run_facts(context)
        subject, text = alert_text(facts)
        folder = Path(facts["results_dir"]) / "alerts"
        folder.mkdir(parents=True, exist_ok=True)
        key = run_key(facts["run_id"])  # may contain dots (fractional seconds): no Path.with_suffix here
        if facts["summary"].get("kind") == "confirmation":  # the run's second alert must not overwrite its first
            key += ".confirmation"
        write_json_atomic(folder / f"{key}.json", {**facts, "subject": subject, "raised_at": datetime.now(UTC).isoformat()})
        md = folder / f"{key}.md"
        write_text_atomic(md, text)
        log.error("ALERT %s\n%s(alert written to %s)", subject, text, md)


def configured_notifiers() -> list[dict[str, Any]]:
    """The extra notifiers named by ``$JSONBENCH_NOTIFIERS`` or the Airflow Variable ``jsonbench_notifiers``."""
    raw = os.environ.get(ENV_VAR)
    if raw is None:
        try:
            from airflow.sdk import Variable

            raw = Variable.get(VARIABLE, default=None)
        except Exception as exc:  # no metadata database or API server reachable: the file alert still works
            log.warning("could not read Airflow Variable %s: %s", VARIABLE, exc)
            raw = None
    if not raw:
        return []
    specs = json.loads(raw)
    return [{"class": s} if isinstance(s, str) else dict(s) for s in specs]


def _fill(value: Any, subject: str, message: str) -> Any:
    if isinstance(value, str):
        return value.replace("{message}", message).replace("{subject}", subject)
    if isinstance(value, dict):
        return {k: _fill(v, subject, message) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, subject, message) for v in value]
    return value


def build_notifier(spec: dict[str, Any], subject: str, message: str) -> BaseNotifier:
    """Instantiate one configured notifier class with its kwargs (placeholders filled)."""
    cls = load_object(spec["class"])
    return cls(**_fill(spec.get("kwargs", {}), subject, message))


class CheckFailureNotifier(BaseNotifier):
    """The ``on_failure_callback`` of the benchmark DAG's check task: file alert, then configured notifiers."""

    def notify(self, context: Any) -> None:
        FileAlertNotifier()(context)
        try:
            specs = configured_notifiers()
        except (ValueError, TypeError) as exc:
            log.error("%s / Variable %s is not a JSON list of notifiers: %s", ENV_VAR, VARIABLE, exc)
            return
        if not specs:
            return
        subject, text = alert_text(_run_facts(context))
        for spec in specs:
            try:
                build_notifier(spec, subject, text)(context)
                log.info("alert sent through %s", spec["class"])
            except Exception:
                log.exception("notifier %s failed; the file alert is written", spec.get("class"))


class RunFailureNotifier(BaseNotifier):
    """The ``on_failure_callback`` of the benchmark DAG's last task: alerts on a failed run, once.

    A run whose only failure is its check task has alerted already (:class:`CheckFailureNotifier`);
    any other failed task (a workload, a provision, publish) alerts here, with the failed tasks named.
    """

    def notify(self, context: Any) -> None:
        summary = getattr(context.get("exception"), "summary", None) or {}
        if summary.get("already_alerted"):
            log.info(
                "run %s failed only in tasks that alerted already (%s)", summary.get("run_id"), ", ".join(summary.get("failed_tasks", []))
            )
            return
        CheckFailureNotifier()(context)
