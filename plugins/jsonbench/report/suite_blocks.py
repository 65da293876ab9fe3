"""What the scorecard and each suite's blocks of the report show: reproduction, ratio charts, trends, drift."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from markupsafe import Markup

from jsonbench.dataset.measurement import finite_float
from jsonbench.report import charts
from jsonbench.report.charts import fmt
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
    history,
    natural_key,
    seed_figures,
)
from jsonbench.report.run_blocks import page_of
from jsonbench.report.templating import VERDICT_MARK, href

log = logging.getLogger(__name__)


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
        "href": href(root, cell.page),
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
        pages = sorted((str(r.gx_suite), p) for r in mine.itertuples() if isinstance(r.gx_suite, str) for p in [page_of(root, r)] if p)
    return [(g, href(root, p) or "") for g, p in pages]


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
