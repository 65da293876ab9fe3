"""The alert of a comparison whose check failed (a regression): a file under ``<results>/alerts/``, then the
notifiers configured for the nightly alerts (``$JSONBENCH_NOTIFIERS`` or the Variable ``jsonbench_notifiers``)."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from airflow.sdk import BaseNotifier

from jsonbench.checks.alerts import build_notifier, configured_notifiers

log = logging.getLogger(__name__)


def comparison_alert(context: Any) -> tuple[str, str, dict[str, Any]]:
    """``(subject, markdown, facts)`` of a failed comparison check, from the task's context."""
    from jsonbench import paths

    exc = context.get("exception")
    s = getattr(exc, "summary", None) or {}
    run_id = s.get("run_id") or context.get("run_id") or "unknown-run"
    results = s.get("results_dir") or str(paths.results_dir((context.get("params") or {}).get("results_dir")))
    subject = f"jsonbench: comparison {run_id}: {s.get('failed', '?')} of {s.get('checked', '?')} checks failed"
    lines = [
        f"# {subject}",
        "",
        f"- results: `{results}`",
        f"- verdicts: {json.dumps(s.get('verdicts'))}",
        f"- Data Docs: `{s.get('data_docs')}`",
        "",
    ]
    lines += [f"- {f}" for f in s.get("failures", [])] or [f"- {type(exc).__name__}: {exc}"]
    lines += ["", "The comparison's rows are published (`comparisons/`); its page is `report/compare-<id>.html`."]
    return subject, "\n".join(lines) + "\n", {"run_id": run_id, "results_dir": results, "summary": s}


class ComparisonFailureNotifier(BaseNotifier):
    """The ``on_failure_callback`` of the comparison's check task: the file alert, then every configured notifier."""

    def notify(self, context: Any) -> None:
        from jsonbench.dataset.fsio import write_text_atomic
        from jsonbench.dataset.schema import run_key
        from jsonbench.dataset.staging import write_json_atomic

        subject, text, facts = comparison_alert(context)
        folder = Path(facts["results_dir"]) / "alerts"
        key = "compare-" + run_key(facts["run_id"])
        write_json_atomic(folder / f"{key}.json", {**facts, "subject": subject, "raised_at": datetime.now(UTC).isoformat()})
        write_text_atomic(folder / f"{key}.md", text)
        log.error("ALERT %s\n%s", subject, text)
        try:
            specs = configured_notifiers()
        except (ValueError, TypeError) as exc:
            log.error("the configured notifiers are not a JSON list: %s", exc)
            return
        for spec in specs:
            try:
                build_notifier(spec, subject, text)(context)
            except Exception:
                log.exception("notifier %s failed; the file alert is written", spec.get("class"))
