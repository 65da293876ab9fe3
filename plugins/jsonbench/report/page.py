"""The static HTML report: ``<results>/report/index.html``, built from the Parquet dataset alone.

Top to bottom:

1. **Scorecard**: every seed finding x engine version, for the run's scale and the latest run of
   every other scale of the same hardware label: seed value, observed value, the band applied at
   that scale, pass / fail / not applicable with its reason, each value linking to its Great
   Expectations Data Docs page.
2. **Per suite**: the reproduction table (every seed figure, the seed's value, the measured value per
   engine at each scale present with the run ids, and the seed file's note), the findings and the
   seed figures as ratio charts (observed / seed, seed scaled to the run's size where the figure
   grows with it), trend charts of the headline metrics over the hardware label's history with the
   change points drift found, and the drift verdicts.
3. **The figures side by side** (:mod:`jsonbench.report.figures`, the table of ``docs/figures.md``):
   every finding's seed value and each engine version's latest laptop and full run, with the mechanism
   of a figure that does not reproduce and each cell's duration, peak memory and disk.
4. Sanity, environment (host, builds, configure flags, settings) and the runs in the dataset.
5. The noise model of each hardware label (calibration records, minimum detectable shifts) and the
   latest checks of the checks (:func:`jsonbench.report.model.noise_figures`).

Under the title, before the scorecard: the run's failed checks, and how much of it was judged with
each suspect's two measurements (:mod:`jsonbench.report.judged`; a run not judged is never green).

Charts are Vega-Lite specifications built with Altair (:mod:`jsonbench.report.charts`) and rendered
in the browser by the Vega bundle inlined into the page (:mod:`jsonbench.report.vendor`): the page
is one file that opens with no network.

The markup is Jinja2 templates with autoescape, one per block of the page, under ``templates/``
(``page.html.j2`` lists the blocks top to bottom; the stylesheet and the charts' script are files
there too). This module and the two block modules prepare what each block shows, as plain values: the numbers formatted, the
tooltips written, the charts' specifications collected in page order. Values are escaped the way
:func:`html.escape` does (quotes included), so attribute values may hold any text.

A new block of the page: a function that returns its values (in :mod:`~jsonbench.report.suite_blocks` for the
scorecard and a suite's blocks, in :mod:`~jsonbench.report.run_blocks` for the run's own; added to the ``page`` dict in
:func:`run_page_context`), a template of its own in ``templates/``, and one ``{% include %}`` line in
``page.html.j2`` where it stands; then ``JSONBENCH_UPDATE_GOLDEN=1`` on
``tests/integration/test_report_golden.py`` rewrites the golden page, whose diff shows the new block.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
from markupsafe import Markup

from jsonbench.dataset.fsio import write_text_atomic
from jsonbench.report.judged import badge_of
from jsonbench.report.model import (
    Dataset,
    load,
    natural_key,
    noise_figures,
    scorecard,
)
from jsonbench.report.run_blocks import (
    documents_context,
    environment_context,
    failures_context,
    figures_context,
    hearing_context,
    judged_context,
    noise_context,
    runs_context,
    sanity_context,
    verdict_context,
)
from jsonbench.report.suite_blocks import Charts, scorecard_context, suite_context
from jsonbench.report.templating import TEMPLATES, environment, href

log = logging.getLogger(__name__)


def _warnings(ds: Dataset) -> dict[str, Any]:
    """What the page says first, under its title: dataset files skipped as unreadable, a requested run that published nothing."""
    return {"damaged": [(str(p), str(e)) for p, e in ds.damaged], "missing": ds.missing or "", "chosen": bool(ds.chosen)}


def run_page_context(root: Path, ds: Dataset, chosen: str, cs: Charts) -> dict[str, Any]:
    """What the page of run ``chosen`` shows, block by block in page order (see ``templates/page.html.j2``)."""
    from jsonbench.checks.gxrun import data_docs_dir
    from jsonbench.checks.library import load_library
    from jsonbench.errors import ConfigError
    from jsonbench.suites import get_suite

    run = ds.run
    vrun = ds.v[ds.v["run_id"] == chosen] if not ds.v.empty else ds.v
    first = run.iloc[0]
    label, scale = str(first["hardware_label"]), str(first["scale"])
    lib = load_library()
    suites = sorted(run["suite"].unique())
    all_ok, verdict = badge_of(vrun)  # a run that judged too little is never shown as passed
    index = data_docs_dir(root) / "index.html"
    intro = {
        "date": pd.Timestamp(first["logical_date"]).strftime("%Y-%m-%d %H:%M %Z"),
        "label": label,
        "scale": scale,
        "n": len(run),
        "engines": sorted(run["engine_id"].unique(), key=natural_key),
        "docs_index": (href(root, index.relative_to(root).as_posix()) or "") if index.exists() else "",
        "views": (root / "jsonbench.duckdb").exists(),
        "others": sorted(set(ds.m["hardware_label"]) - {label}),
    }
    scores = scorecard(lib.reproduction, ds, label, chosen, [s for s in suites if s in lib.reproduction])
    page: dict[str, Any] = {
        "run_id": chosen,
        "all_ok": all_ok,
        "verdict": verdict,
        "intro": intro,
        "verdict_lines": verdict_context(vrun, ds.m, run, chosen),
        "failures": failures_context(vrun),
        "judged": judged_context(vrun),
        "scorecard": scorecard_context(root, scores),
    }
    by_suite = {s.suite: s for s in scores}
    page["suites"] = []
    for suite in suites:
        try:
            headline = tuple(get_suite(suite).headline)
        except (KeyError, ConfigError):  # rows of a suite this checkout does not know
            headline = ()
        page["suites"].append(suite_context(root, ds, suite, run, lib.seeds.get(suite), by_suite.get(suite), headline, cs))
    page["documents"] = documents_context(run)
    page["figures"] = figures_context(root)
    page["sanity"] = sanity_context(root, vrun)
    page["environment"] = environment_context(run)
    page["runs"] = runs_context(ds, chosen)
    page["noise"] = {**noise_context(noise_figures(root, sorted(set(ds.m["hardware_label"])))), "hearing": hearing_context(ds.v, chosen)}
    return page


def build_report(results_dir: str | Path | None = None, run_id: str | None = None) -> Path:
    """Write ``<results>/report/index.html`` for ``run_id`` (default: the latest run); return its path."""
    from jsonbench import paths
    from jsonbench.report.vendor import bundle, cache_dir

    t0 = time.perf_counter()
    root = paths.results_dir(results_dir)
    out_dir = root / "report"
    out_dir.mkdir(parents=True, exist_ok=True)
    ds = load(root, run_id)
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    cs = Charts()
    page = run_page_context(root, ds, ds.chosen, cs) if ds.chosen is not None else None
    js = bundle(cache_dir(out_dir / ".vendor")) if cs.specs else ""
    took = time.perf_counter() - t0
    html_text = (
        environment()
        .get_template("page.html.j2")
        .render(
            page=page,
            warnings=_warnings(ds),
            root=str(root),
            now=now,
            took=f"{took:.1f}",
            n_charts=len(cs.specs),
            css=Markup("\n" + (TEMPLATES / "report.css").read_text(encoding="utf-8")),
            js=Markup(js),
            render_js=Markup("\n" + (TEMPLATES / "render.js").read_text(encoding="utf-8")),
        )
    )
    target = out_dir / "index.html"
    write_text_atomic(target, html_text)
    log.info("report: %s (%d charts, %.1f s)", target, len(cs.specs), took)
    return target
