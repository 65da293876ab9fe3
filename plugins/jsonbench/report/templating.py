"""The report's Jinja2 environment (autoescape, folded templates) and the small helpers every block's values use."""

from __future__ import annotations

import html
import logging
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
import pandas as pd
from markupsafe import Markup

from jsonbench.report.charts import fmt

log = logging.getLogger(__name__)

TEMPLATES = Path(__file__).with_name("templates")
VERDICT_MARK = {"pass": "✔", "fail": "✘", "not_applicable": "n/a"}


def _fold(source: str) -> str:
    """A template's source as the page is written: one line, the layout's line breaks and indentation gone.

    Each line is stripped; two lines are joined with nothing between them where either side of the
    break is markup (a tag, a Jinja statement or comment), else with one space (text that runs on).
    """
    out = ""
    for line in (raw.strip() for raw in source.splitlines()):
        if not line:
            continue
        if out and not (out.endswith((">", "%}", "#}")) or line.startswith(("<", "{%", "{#"))):
            out += " "
        out += line
    return out


class _FoldingLoader(jinja2.FileSystemLoader):
    def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, Callable[[], bool]]:
        source, filename, uptodate = super().get_source(environment, template)
        return _fold(source), filename, uptodate


def _escaped(value: Any) -> Any:
    """Every ``{{ value }}`` escaped as :func:`html.escape` does (``'`` as ``&#x27;``, ``"`` as ``&quot;``)."""
    return value if hasattr(value, "__html__") else Markup(html.escape(str(value)))


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The templates' environment: autoescape, the page's escaping, and the ``fmt`` and ``short_run`` filters."""
    env = jinja2.Environment(loader=_FoldingLoader(TEMPLATES), autoescape=True, finalize=_escaped, undefined=jinja2.StrictUndefined)
    env.filters["fmt"] = fmt
    env.filters["short_run"] = _short_run
    return env


def _short_run(run_id: str) -> str:
    """``manual__2026-11-30T08:26:03.936305+00:00`` -> ``2026-11-30 08:26`` (full id in the title)."""
    if "__" in run_id:
        tail = run_id.split("__", 1)[1]
        try:
            return pd.Timestamp(tail).strftime("%Y-%m-%d %H:%M")
        except (ValueError, TypeError):
            return tail[:16]
    return run_id[:22]


def href(root: Path, page: str | None) -> str | None:
    """A link from ``<results>/report/index.html`` to a page given relative to the results folder."""
    if not page:
        return None
    if page.startswith(("/", "file:")):
        return page
    return "../" + page
