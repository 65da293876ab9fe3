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
there too). This module prepares what each block shows, as plain values: the numbers formatted, the
tooltips written, the charts' specifications collected in page order. Values are escaped the way
:func:`html.escape` does (quotes included), so attribute values may hold any text.

A new block of the page: a function here that returns its values (added to the ``page`` dict in
:func:`run_page_context`), a template of its own in ``templates/``, and one ``{% include %}`` line in
``page.html.j2`` where it stands; then ``JSONBENCH_UPDATE_GOLDEN=1`` on
``tests/integration/test_report_golden.py`` rewrites the golden page, whose diff shows the new block.
"""

from __future__ import annotations

import html
import json
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
import pandas as pd
from markupsafe import Markup

from jsonbench.cell import starts_of
from jsonbench.checks import verdicts
from jsonbench.dataset.fsio import write_text_atomic
from jsonbench.dataset.measurement import HOST_SUITE, finite_float
from jsonbench.report import charts, figures
from jsonbench.report.charts import fmt
from jsonbench.report.judged import badge_of
from jsonbench.report.model import (
    Column,
    Dataset,
    FigureRow,
    SuiteScore,
    Verdict,
    change_points,
    columns,
    details_of,
    drift_verdicts,
    figure_label,
    hearing_figures,
    history,
    load,
    natural_key,
    noise_figures,
    scorecard,
    seed_figures,
)

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


def _href(root: Path, page: str | None) -> str | None:
    """A link from ``<results>/report/index.html`` to a page given relative to the results folder."""
    if not page:
        return None
    if page.startswith(("/", "file:")):
        return page
    return "../" + page


@dataclass(frozen=True)
class Chart:
    """One chart of the page: its number (placeholder ``chart-n``, spec ``spec-n``), its spec as JSON, label and caption."""

    n: int
    data: Markup
    label: str
    caption: str


class Charts:
    """Collects the chart specifications of the page in page order; the template draws each as a placeholder and a JSON script."""

    def __init__(self) -> None:
        self.specs: list[dict[str, Any]] = []

    def add(self, spec: dict[str, Any] | None, caption: str = "") -> Chart | None:
        if spec is None:
            return None
        n = len(self.specs)
        self.specs.append(spec)
        data = json.dumps(spec, separators=(",", ":"), default=str).replace("</", "<\\/")
        title = spec.get("title")
        text = title.get("text") if isinstance(title, dict) else title
        return Chart(n, Markup(data), str(text or "chart"), caption)


# -- scorecard -------------------------------------------------------------------------------


def _score_cell(root: Path, c: Column, cell: Verdict | None) -> dict[str, Any]:
    """One scorecard cell: the observed value and its Data Docs page, the verdict and the band, the reasons on hover."""
    if cell is None:
        return {"verdict": None, "run_id": c.run_id}
    band = f"[{fmt(cell.band_min)}, {fmt(cell.band_max)}]"
    tip = (
        f"{cell.verdict.replace('_', ' ')}; band {band} at {c.scale}"
        + (f"; {cell.reason}" if cell.reason else "")
        + (f"; why this band: {cell.band_reason}" if cell.band_reason else "")
        + f"; run {cell.run_id}"
    )
    reason = cell.reason
    if cell.verdict == "not_applicable" and len(reason) > 90:
        reason = reason[:87] + "…"
    return {
        "verdict": cell.verdict,
        "tip": tip,
        "href": _href(root, cell.page),
        "value": fmt(cell.observed) if cell.observed is not None else "—",
        "has_observed": cell.observed is not None,
        "reason": reason,
        "mark": VERDICT_MARK.get(cell.verdict, cell.verdict),
        "band": band,
        "extra": cell.reason if cell.verdict == "fail" and cell.reason and cell.reason != "outside the band" else "",
    }


def scorecard_context(root: Path, scores: list[SuiteScore]) -> dict[str, Any]:
    """The scorecard: this run's verdict counts, the other scales' latest, and a row per finding with a cell per column."""
    total: dict[str, int] = {}
    other: dict[str, int] = {}
    for s in scores:
        for k, n in s.counts(current_only=True).items():
            total[k] = total.get(k, 0) + n
        for k, n in s.counts().items():
            other[k] = other.get(k, 0) + n - s.counts(current_only=True).get(k, 0)
    failed = total.get("fail", 0)
    suites = []
    for s in scores:
        rows = []
        for r in s.rows:
            verdicts = [r.cells.get(c.key) for c in s.columns]
            rows.append(
                {
                    "finding": r.finding,
                    "description": r.description,
                    "unit": r.unit,
                    "seed_figure": r.seed_figure,
                    "seed_value": r.seed_value,
                    "problem": any(v is not None and v.verdict in ("fail", "not_applicable") for v in verdicts),
                    "cells": [_score_cell(root, c, v) for c, v in zip(s.columns, verdicts, strict=True)],
                }
            )
        suites.append({"suite": s.suite, "columns": s.columns, "rows": rows})
    return {
        "ok": None if not total else failed == 0,
        "verdict": "reproduced" if total and not failed else (f"{failed} not reproduced" if failed else "not checked"),
        "summary": ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in sorted(total.items())) or "no verdicts",
        "other": ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in sorted(other.items()) if n),
        "suites": suites,
    }


# -- per suite -------------------------------------------------------------------------------


def reproduction_context(seed: dict[str, Any], rows: list[FigureRow], cols: list[Column]) -> dict[str, Any] | None:
    """Every seed figure: seed value, measured value per (scale, engine) with measured / seed, and the seed file's note."""
    if not rows:
        return None
    out_rows = []
    for r in rows:
        cells: list[dict[str, Any]] = []
        off = False
        for c in cols:
            cell = r.cells.get(c.key)
            if cell is None or (cell.value is None and cell.status != "not_applicable"):
                cells.append({"kind": "none", "tip": cell.reason if cell is not None else ""})
                continue
            if cell.status == "not_applicable":
                cells.append({"kind": "not_applicable", "tip": cell.reason})
                continue
            ratio = cell.ratio
            is_off = ratio is not None and not (0.5 <= ratio <= 2.0)
            off |= is_off
            tip = f"seed at this size: {fmt(cell.seed_scaled)} {r.unit}; samples: {', '.join(fmt(s) for s in cell.samples[:12])}; run {cell.run_id}"
            cells.append(
                {"kind": "value", "tip": tip, "value": cell.value, "off": is_off, "ratio": f"{ratio:.3g}" if ratio is not None else ""}
            )
        note = r.note
        if not note and off:
            note = (
                "More than 2x from the seed (scaled to the run's size) on some engine or scale; the seed file has no note on why."
                if r.scales_with
                else "More than 2x from the seed on some engine or scale; the seed file has no note on why, nor says (scales_with) "
                "whether this figure grows with the data size, which may differ from the seed's here."
            )
        out_rows.append(
            {"label": r.label, "unit": r.unit, "seed_value": r.seed_value, "scales_with": r.scales_with, "cells": cells, "note": note}
        )
    return {
        "seed": str(seed.get("seed", "")),
        "title": str(seed.get("title", "")),
        "engine": str(seed.get("engine", "")),
        "seed_scale": ", ".join(f"{k}={fmt(finite_float(v))}" for k, v in (seed.get("scale") or {}).items()),
        "notes": str(seed.get("notes", "")),
        "columns": cols,
        "rows": out_rows,
    }


def drift_context(v_suite: pd.DataFrame, cps: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The drift verdicts (counts, the drifted and unstable metrics, the first 60) and the change points; None without drift rows."""
    if v_suite.empty:
        return None
    counts = v_suite["verdict"].fillna("unknown").value_counts().to_dict()
    from jsonbench.history.drift import RESTART_NOTE

    history_n = 0
    restarts: set[str] = set()
    if counts.get("insufficient_history"):
        history_n = max((int(finite_float(details_of(d).get("history_n")) or 0) for d in v_suite["details"]), default=0)
        for d in v_suite.loc[v_suite["verdict"] == "insufficient_history", "details"]:
            note = str(details_of(d).get("note") or "")
            if RESTART_NOTE in note:  # why a series' history restarted tonight (drift.design_restarts)
                restarts.add(note[note.index(RESTART_NOTE) :].split("; ")[0])
    shown = v_suite[v_suite["verdict"].isin(["drift", "unstable"])].sort_values(["verdict", "engine_id", "workload", "metric"])
    rows = []
    for r in shown.head(60).itertuples():
        det = details_of(r.details)
        rows.append(
            {
                "verdict": str(r.verdict),
                "engine_id": str(r.engine_id),
                "label": figure_label(str(r.workload), r.variant),
                "metric": str(r.metric),
                "observed": finite_float(r.observed),
                "unit": str(r.unit or ""),
                "history_median": finite_float(det.get("history_median")),
                "min": finite_float(r.min_value),
                "max": finite_float(r.max_value),
                "method": str(det.get("method") or ""),
            }
        )
    points = []
    for cp in sorted(cps, key=lambda c: (natural_key(str(c.get("engine_id"))), str(c.get("metric")), str(c.get("logical_date") or ""))):
        rel = finite_float(cp.get("relative_change"))
        points.append(
            {
                "engine_id": str(cp.get("engine_id")),
                "label": figure_label(str(cp.get("workload")), cp.get("variant")),
                "metric": str(cp.get("metric")),
                "run_id": str(cp.get("run_id")),
                "before": finite_float(cp.get("metric_before")),
                "after": finite_float(cp.get("metric_after")),
                "change": f"{rel * 100:+.0f} %" if rel is not None else "n/a",
                "pvalue": finite_float(cp.get("pvalue")),
            }
        )
    return {
        "ok": not (v_suite["success"] == False).any(),  # noqa: E712 - pandas element-wise
        "counts": [(str(k), str(k).replace("_", " "), n) for k, n in sorted(counts.items())],
        "insufficient": counts.get("insufficient_history", 0),
        "history_n": history_n,
        "restarts": sorted(restarts),
        "rows": rows,
        "more": len(shown) - 60 if len(shown) > 60 else 0,
        "change_points": points,
    }


def suite_context(
    root: Path,
    ds: Dataset,
    suite: str,
    run: pd.DataFrame,
    seed: dict[str, Any] | None,
    score: SuiteScore | None,
    headline: tuple[str, ...],
    cs: Charts,
) -> dict[str, Any]:
    """One suite's section: its Data Docs, the reproduction table, the ratio charts, the trends and the drift verdicts."""
    first = run.iloc[0]
    label, scale, until = str(first["hardware_label"]), str(first["scale"]), run["logical_date"].max()
    cols = columns(ds.cells, label, str(first["run_id"]), suite)
    rows = seed_figures(seed, ds.m, cols, suite) if seed else []
    out: dict[str, Any] = {
        "suite": suite,
        "docs": _docs_links(root, ds, first["run_id"], suite),
        "repro": reproduction_context(seed or {}, rows, cols),
        "ratio_charts": _ratio_charts(suite, score, rows, cols, cs),
        "no_ratios": score is None and not rows,
    }
    out["trends"], out["drift"] = _trends_and_drift(ds, suite, str(first["run_id"]), label, scale, until, headline, cs)
    return out


def _docs_links(root: Path, ds: Dataset, run_id: Any, suite: str) -> list[tuple[str, str]]:
    """The Great Expectations Data Docs pages of this run's validations of ``suite`` (name, link), if any."""
    pages: list[tuple[str, str]] = []
    if not ds.v.empty:
        mine = ds.v[(ds.v["run_id"] == run_id) & (ds.v["suite"] == suite)].drop_duplicates("gx_suite")
        pages = sorted((str(r.gx_suite), p) for r in mine.itertuples() if isinstance(r.gx_suite, str) for p in [_page_of(root, r)] if p)
    return [(g, _href(root, p) or "") for g, p in pages]


def _ratio_charts(suite: str, score: SuiteScore | None, rows: list[FigureRow], cols: list[Column], cs: Charts) -> list[Chart | None]:
    """The findings and the seed figures as ratios to the seed, each chart captioned with what it could not draw."""
    out = []
    if score is not None:
        spec, skipped = charts.findings_chart(score)
        caption = (
            "Not on the ratio axis (no seed figure, or a seed or observed value of zero or missing; see the scorecard): "
            + ", ".join(skipped)
            + "."
        )
        out.append(cs.add(spec, caption if skipped else ""))
    if rows:
        spec, skipped = charts.figures_chart(suite, rows, cols)
        caption = "Not on the ratio axis (seed or measured value zero or missing; see the table): " + ", ".join(skipped) + "."
        out.append(cs.add(spec, caption if skipped else ""))
    return out


def _trends_and_drift(
    ds: Dataset, suite: str, run_id: str, label: str, scale: str, until: Any, headline: tuple[str, ...], cs: Charts
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Trend charts of the headline metrics (else the first four) over the label's history at ``scale``, then the drift verdicts."""
    from jsonbench.history.drift import same_input

    # A suite that reads an input (the documents suites) trends over the runs of tonight's input only.
    hist = same_input(history(ds.m, label, scale, until, suite), ds.run[ds.run["suite"] == suite])
    cps = change_points(ds.v, run_id, suite)
    dv = drift_verdicts(ds.v, run_id, suite)
    drifted = (
        {(str(r.engine_id), str(r.workload), str(r.variant), str(r.metric)) for r in dv.itertuples() if r.verdict == "drift"}
        if not dv.empty
        else set()
    )
    metrics = [m for m in headline if m in set(hist["metric"])] or sorted(set(hist["metric"]))[:4]
    trends = {
        "nruns": hist["run_id"].nunique(),
        "label": label,
        "scale": scale,
        "charts": [cs.add(charts.trend_chart(suite, metric, hist, cps, drifted)) for metric in metrics],
    }
    return trends, drift_context(dv, cps)


def _page_of(root: Path, r: Any) -> str | None:
    from jsonbench.report.model import DocsPages

    return DocsPages(root).page(details_of(getattr(r, "details", None)), getattr(r, "gx_suite", None), str(r.run_id))


# -- the rest --------------------------------------------------------------------------------


def sanity_context(root: Path, vrun: pd.DataFrame) -> dict[str, Any] | None:
    """The run's sanity checks: how many passed, and each failed one with what was unexpected; None without sanity rows."""
    s = vrun[vrun["check_kind"] == "sanity"] if not vrun.empty else vrun
    if s.empty:
        return None
    failed = s[s["success"] == False]  # noqa: E712 - pandas element-wise
    rows = []
    for r in failed.itertuples():
        det = details_of(r.details)
        rows.append(
            {
                "href": _href(root, _page_of(root, r)),
                "expectation": str(r.expectation),
                "description": str(r.description),
                "unexpected": json.dumps((det.get("unexpected") or [])[:10], default=str),
            }
        )
    return {"badge": f"{len(s) - len(failed)} of {len(s)} passed", "failed": rows}


def _starts_words(run: pd.DataFrame) -> str:
    """On how many engine starts the run's figures rest (the run parameter ``starts``), per engine where they differ."""
    if "scale_params" not in run.columns:
        return "1"
    cells = run[run["suite"] != HOST_SUITE] if "suite" in run.columns else run
    by: dict[int, list[str]] = {}
    for engine, g in cells.groupby("engine_id"):
        k = max((starts_of(sp) for sp in g["scale_params"].dropna().unique()), default=1)
        by.setdefault(k, []).append(str(engine))
    if len(by) <= 1:
        return str(next(iter(by), 1))
    return "; ".join(f"{k} ({', '.join(sorted(es, key=natural_key))})" for k, es in sorted(by.items(), reverse=True))


def environment_context(run: pd.DataFrame) -> dict[str, Any]:
    """The host of the run, each suite's scale parameters, and each engine's build, configure flags and settings."""
    first = run.iloc[0]
    host = [
        ("hardware label", first.get("hardware_label")),
        ("host", first.get("host_name")),
        ("CPU", first.get("host_cpu_model")),
        ("cores", first.get("host_cores")),
        ("memory", fmt(finite_float(first.get("host_memory_bytes"))) + "B"),
        ("kernel", first.get("host_kernel")),
        ("git revision", first.get("git_revision")),
        ("scale", f"{first.get('scale')}"),
        ("engine starts each timing rests on", _starts_words(run)),
    ]
    params = [
        (str(suite), str(g["scale_params"].dropna().iloc[0] if g["scale_params"].notna().any() else ""))
        for suite, g in run.groupby("suite")
    ]
    engines = []
    for _, r in run.drop_duplicates("engine_id").sort_values("engine_id", key=lambda s: s.map(natural_key)).iterrows():
        settings = r.get("settings") or "{}"
        try:
            settings = ", ".join(f"{k}={v}" for k, v in json.loads(settings).items())
        except (ValueError, AttributeError):
            pass
        engines.append(
            {
                **{k: str(r[k]) for k in ("engine_id", "engine_version", "engine_build", "engine_backend", "data_checksums")},
                # escaped first, then cut, as the page always did (the cut may split an entity)
                "configure": Markup(html.escape(str(r["engine_configure"] or ""))[:400]),
                "settings": str(settings),
            }
        )
    return {"host": [(k, str(v)) for k, v in host], "scale_params": params, "engines": engines}


def runs_context(ds: Dataset, chosen: str) -> dict[str, Any]:
    """Every run in the dataset, the latest first (60 shown), with its checks' outcome."""
    m = ds.m
    runs = (
        m.groupby("run_id")
        .agg(
            logical_date=("logical_date", "max"),
            hardware_label=("hardware_label", "first"),
            scale=("scale", "first"),
            engines=("engine_id", lambda s: ", ".join(sorted(set(s), key=natural_key))),
            rows=("value", "size"),
        )
        .reset_index()
        .sort_values("logical_date", ascending=False)
    )
    status = {rid: ("passed" if failed == 0 else f"failed ({failed})") for rid, (_, failed) in ds.status.items()}
    rows = []
    for r in runs.head(60).itertuples():
        st = status.get(str(r.run_id), "not checked")
        rows.append(
            {
                "run_id": str(r.run_id),
                "this": r.run_id == chosen,
                "date": pd.Timestamp(r.logical_date).strftime("%Y-%m-%d %H:%M"),
                "hardware_label": str(r.hardware_label),
                "scale": str(r.scale),
                "engines": r.engines,
                "rows": r.rows,
                "cls": "pass" if st == "passed" else ("fail" if st.startswith("failed") else "note"),
                "status": st,
            }
        )
    return {"n": len(runs), "rows": rows, "more": len(runs) - 60 if len(runs) > 60 else 0}


def failures_context(vrun: pd.DataFrame, limit: int = 5) -> dict[str, Any] | None:
    """The first few failed checks of the run (why the badge is red), each linking to its suite's section; None when none failed."""
    if vrun.empty:
        return None
    failed = vrun[vrun["success"] == False]  # noqa: E712 - pandas element-wise
    if failed.empty:
        return None
    order = {"sanity": 0, "reproduction": 1, "drift": 2}
    failed = failed.assign(_o=failed["check_kind"].map(order).fillna(3)).sort_values(["_o", "suite", "engine_id"], na_position="first")
    items = []
    for r in failed.head(limit).itertuples():
        det = details_of(r.details)
        items.append(
            {
                "link": f"#suite-{r.suite}" if isinstance(r.suite, str) and r.suite else "#sanity",
                "kind": str(r.check_kind),
                "where": [str(x) for x in (r.suite, r.engine_id) if isinstance(x, str) and x],
                "what": str(r.expectation) if r.check_kind != "drift" else figure_label(str(r.workload), r.variant, str(r.metric)),
                "seen": f"observed {fmt(finite_float(r.observed))}" if finite_float(r.observed) is not None else "",
                "bounds": (
                    f", expected [{fmt(finite_float(r.min_value))}, {fmt(finite_float(r.max_value))}]"
                    if finite_float(r.min_value) is not None or finite_float(r.max_value) is not None
                    else ""
                ),
                "hist": f", history median {fmt(finite_float(det.get('history_median')))}"
                if finite_float(det.get("history_median")) is not None
                else "",
            }
        )
    return {"n": len(failed), "entries": items, "more": len(failed) - limit if len(failed) > limit else 0}


def judged_context(vrun: pd.DataFrame) -> dict[str, Any] | None:
    """How much of the run was judged (a NOT JUDGED warning below the threshold) and each confirmation with both
    measurements (:mod:`jsonbench.report.judged`, contract C3); None for a run without validation rows."""
    if vrun.empty:
        return None
    rows = [dict(r) for r in vrun.to_dict("records")]
    share = verdicts.judged_share(rows)
    not_judged = verdicts.judgement(rows, share) == "not_judged" or (share["share"] is not None and share["share"] < share["threshold"])
    items = []
    for r in rows:
        d = verdicts.details_of(r)
        if "confirmation" not in d:
            continue
        first, again = d.get("first") or {}, d.get("confirmation") or {}
        items.append(
            {
                "verdict": str(r.get("verdict")),
                "where": " · ".join(str(x) for x in (r.get("suite"), r.get("engine_id")) if isinstance(x, str) and x),
                "expectation": str(r.get("expectation")),
                "first": fmt(finite_float(first.get("observed"))),
                "again": fmt(finite_float(again.get("observed"))),
                "min": fmt(finite_float(first.get("min_value"))),
                "max": fmt(finite_float(first.get("max_value"))),
                "why": str(again.get("why", "")),
            }
        )
    pending = sum(1 for r in rows if r.get("verdict") == "suspect")
    counts = {v: sum(1 for it in items if it["verdict"] == v) for v in ("confirmed", "cleared", "unconfirmed")}
    return {
        "cls": "warnbox" if not_judged or items or pending else "muted",
        "not_judged": not_judged,
        "share": verdicts.describe_share(share),
        "pending": pending,
        "confirmations": items,
        "counts": ", ".join(f"{v} {n}" for v, n in counts.items()),
    }


def host_likeness(m: pd.DataFrame, run: pd.DataFrame, chosen: str) -> str:
    """Was tonight's host like the earlier runs' of its label and scale? From the canary beside every cell (suite
    ``host``): tonight's median ms per speed component against the median of the earlier runs', and the CPU quota."""
    from jsonbench.dataset.measurement import HOST_SUITE
    from jsonbench.history.hostspeed import SPEED_COMPONENTS

    if run.empty:
        return ""
    first = run.iloc[0]
    quota = finite_float(first.get("host_cpu_quota")) if "host_cpu_quota" in run else None
    said = f"under a CPU quota of {quota:g} cores; " if quota else ""
    host = m[(m["suite"] == HOST_SUITE) & (m["unit"] == "ms") & (m["status"] == "ok")]
    host = host[(host["hardware_label"] == first["hardware_label"]) & (host["scale"] == first["scale"])]
    tonight = host[host["run_id"] == chosen]
    before = host[(host["run_id"] != chosen) & (host["logical_date"] <= first["logical_date"])]
    if tonight.empty:
        return said + "no canary in this run: the host's speed was not measured"
    if before.empty:
        return said + "the first run of this label and scale: no earlier host to compare with"
    parts = []
    for comp in SPEED_COMPONENTS:
        now, then = tonight[tonight["metric"] == comp]["value"], before[before["metric"] == comp]["value"]
        if len(now) and len(then):
            r = float(now.median()) / float(then.median())
            parts.append((comp, r))
    if not parts:
        return said + "the canary has no CPU component to compare"
    worst = max(parts, key=lambda x: abs(math.log(x[1])))
    words = ", ".join(f"{c} {r:.2f}x" for c, r in parts)
    n = before["run_id"].nunique()
    if abs(worst[1] - 1) < 0.05:
        return f"{said}like the {n} earlier run(s) of this label: canary {words} of theirs"
    way = "slower" if worst[1] > 1 else "faster"
    return f"{said}{way} than the {n} earlier run(s) by {abs(worst[1] - 1):.0%} ({worst[0]}; canary {words}); drift judged each timing beyond it"


def verdict_context(vrun: pd.DataFrame, m: pd.DataFrame, run: pd.DataFrame, chosen: str) -> dict[str, Any] | None:
    """The answer in three lines, before any list: what passed, what failed and of which kind, what was measured twice,
    and whether tonight's host was like the others (the first screen is the scorecard and this)."""
    if vrun.empty:
        return {"checks": "not checked yet", "failed": "", "twice": "", "host": host_likeness(m, run, chosen)}
    ok = vrun["success"].fillna(False).astype(bool)
    failed = vrun[~ok]
    kinds = failed["check_kind"].value_counts()
    verdicts_ = vrun["verdict"].value_counts() if "verdict" in vrun else pd.Series(dtype=int)
    twice = {v: int(verdicts_.get(v, 0)) for v in ("confirmed", "cleared", "unconfirmed")}
    suspects = int(verdicts_.get("suspect", 0))
    return {
        "checks": f"{int(ok.sum())} of {len(vrun)} checks passed",
        "failed": (f"{len(failed)} failed: " + ", ".join(f"{k} {int(n)}" for k, n in kinds.items()) if len(failed) else "none failed"),
        "twice": (
            f"timing measured twice: confirmed {twice['confirmed']}, cleared {twice['cleared']}, unconfirmed {twice['unconfirmed']}"
            if any(twice.values())
            else ""
        )
        + (f"; {suspects} suspect(s) not yet measured again" if suspects else ""),
        "host": host_likeness(m, run, chosen),
    }


def documents_context(run: pd.DataFrame) -> list[dict[str, Any]]:
    """The documents suites' answer, per input: its heading and one paragraph of sentences per engine version.

    The sentences are :func:`jsonbench.suites.documents.summary.answers` of the run's published rows, the
    same the command line prints after the run. Empty (no section) for a run without those suites.
    """
    from jsonbench.suites.documents.summary import SUITES, answers

    if run.empty or not run["suite"].isin(SUITES).any():
        return []
    out: list[dict[str, Any]] = []
    for a in answers(run[run["suite"].isin(SUITES)].to_dict("records")):
        if not out or out[-1]["sha256"] != a.input_sha256:
            out.append({"sha256": a.input_sha256, "heading": a.input_heading, "engines": []})
        out[-1]["engines"].append({"heading": a.heading, "sentences": a.sentences})
    return out


def figures_context(root: Path) -> Markup:
    """The figures side by side (:func:`jsonbench.report.figures.report_section`, the table of ``docs/figures.md``).

    Passed as markup, not drawn by a template: :func:`jsonbench.report.figures.section_html` builds it
    with every value through :func:`html.escape` (its other output is the markdown of the same table).
    Empty when the table cannot be made, so the rest of the page never depends on it.
    """
    return Markup(figures.report_section(root))


def noise_context(fig: dict[str, Any]) -> dict[str, Any]:
    """Calibration per label (records, runs, when, median mds per suite) and the latest checks-of-the-checks figures
    (:func:`jsonbench.report.model.noise_figures`), formatted for ``templates/noise.html.j2``."""

    def mds(c: dict[str, Any], key: str) -> str:
        return ", ".join(f"{s} {v:.0%}" for s, v in sorted((c.get(key) or {}).items()) if v is not None)

    calibration = [
        {
            "hardware_label": str(c["hardware_label"]),
            "scale": str(c["scale"] or "-"),
            "calibrated": "yes" if c["calibrated"] else "no",
            "runs": c["runs"],
            "created_at": str(c["created_at"] or "-"),
            "mds": [mds(c, k) for k in ("median_mds_findings", "median_mds_engine_3", "median_mds")],
        }
        for c in fig["calibration"]
    ]
    checkcheck = []
    for f in fig["checkcheck"]:
        sizes = sorted({s for per in f["levels"].values() for s in per}, key=float)
        checkcheck.append(
            {
                "hardware_label": str(f["hardware_label"]),
                "scale": str(f["scale"]),
                "saved_at": str(f["saved_at"]),
                "nights": f["nights"],
                "false_alarms": f["false_alarms"],
                "honest_drift_alarms": str(f["honest_drift_alarms"]),
                "sizes": sizes,
                "levels": [
                    (level, ["-" if per.get(s) is None else format(per[s], ".0%") for s in sizes]) for level, per in f["levels"].items()
                ],
            }
        )
    return {"calibration": calibration, "checkcheck": checkcheck}


def hearing_context(v: pd.DataFrame, chosen: str) -> list[dict[str, Any]]:
    """What tonight could see per family on this host (:func:`jsonbench.report.model.hearing_figures`), formatted."""
    return [
        {
            "family": f"{h['suite']} / {h['engine_id']}",
            "series": h["series"],
            "sigma": format(h["sigma"], ".1%"),
            "mds_1": format(h["mds_1"], ".0%"),
            "mds_3": format(h["mds_3"], ".0%"),
            "host_nights": "-" if h["host_nights"] is None else h["host_nights"],
        }
        for h in hearing_figures(v, chosen)
    ]


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
        "docs_index": (_href(root, index.relative_to(root).as_posix()) or "") if index.exists() else "",
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
