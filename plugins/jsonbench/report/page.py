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

Charts are Vega-Lite specifications built with Altair (:mod:`jsonbench.report.charts`) and rendered
in the browser by the Vega bundle inlined into the page (:mod:`jsonbench.report.vendor`): the page
is one file that opens with no network.
"""

from __future__ import annotations

import json
import logging
import time
from datetime import UTC, datetime
from html import escape
from pathlib import Path
from typing import Any

import pandas as pd

from jsonbench.report import charts, figures
from jsonbench.report.charts import fmt
from jsonbench.report.judged import badge_of, judgement_box
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
    load,
    natural_key,
    noise_figures,
    num,
    scorecard,
    seed_figures,
)

log = logging.getLogger(__name__)

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:20px auto;max-width:1400px;color:#222;padding:0 16px}
h1{font-size:22px;margin-bottom:4px}h2{font-size:18px;border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:36px}h3{font-size:15px;margin-top:22px}
a{color:#1a5fb4}table{border-collapse:collapse;font-size:12px;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f5f5f5;font-weight:600}.note,.muted{color:#555;font-size:12px}.num{text-align:right;white-space:nowrap}
.badge{display:inline-block;padding:2px 9px;border-radius:10px;color:#fff;font-size:12px;vertical-align:middle}
.b-pass{background:#2e7d32}.b-fail{background:#c62828}.b-none{background:#757575}.b-warn{background:#b26a00}
.pass,.ok{color:#1b5e20}.fail,.drift{color:#b71c1c;font-weight:bold}.unstable,.insufficient_history{color:#8d6e00}
table.scorecard td.cell{min-width:86px;white-space:nowrap}table.scorecard td.cell .band{color:#666;font-size:11px}
td.v-pass{background:#e8f5e9}td.v-fail{background:#ffebee}td.v-not_applicable{background:#f3f3f3;color:#555;white-space:normal!important;max-width:180px}
td.v-none{color:#999}td.v-off{background:#fff8e1}tr.suite-head th{background:#e3eaf5;font-size:13px}th.current{background:#dbe8d4}
td.reason{max-width:420px;font-size:11px;color:#444}.legend span{margin-right:14px}
.vl{margin:10px 0 4px 0;min-height:40px}.vl-error{color:#b71c1c;font-size:12px}.grid{display:flex;flex-wrap:wrap;gap:12px}
.warnbox{border:1px solid #e0b252;background:#fff8e1;padding:6px 10px;margin:10px 0;font-size:13px}
nav.toc{font-size:13px;margin:6px 0 0 0}nav.toc a{margin-right:12px}
details summary{cursor:pointer;font-size:13px;color:#333}
"""

RENDER_JS = """
(function () {
  var charts = document.querySelectorAll('div.vl');
  var state = window.jsonbenchCharts = {total: charts.length, rendered: 0, failed: 0, errors: []};
  charts.forEach(function (el) {
    var spec;
    try { spec = JSON.parse(document.getElementById(el.dataset.spec).textContent); }
    catch (e) { el.dataset.rendered = 'error'; state.failed++; state.errors.push(String(e)); return; }
    vegaEmbed(el, spec, {actions: false, renderer: 'svg', tooltip: {theme: 'light'}}).then(function () {
      el.dataset.rendered = '1'; state.rendered++;
    }).catch(function (e) {
      el.dataset.rendered = 'error'; state.failed++; state.errors.push(String(e));
      var p = document.createElement('p'); p.className = 'vl-error'; p.textContent = 'This chart could not be drawn: ' + e; el.appendChild(p);
    });
  });
  var only = document.getElementById('only-problems');
  if (only) only.addEventListener('change', function () {
    document.querySelectorAll('table.scorecard tr.finding').forEach(function (tr) {
      tr.style.display = (only.checked && !tr.classList.contains('has-problem')) ? 'none' : '';
    });
  });
})();
"""

VERDICT_MARK = {"pass": "✔", "fail": "✘", "not_applicable": "n/a"}


def _badge(ok: bool | None, text: str) -> str:
    cls = "b-none" if ok is None else ("b-pass" if ok else "b-fail")
    return f'<span class="badge {cls}">{escape(text)}</span>'


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


class Charts:
    """Collects the chart specifications of the page; each becomes a placeholder div and a JSON script."""

    def __init__(self) -> None:
        self.specs: list[dict[str, Any]] = []

    def add(self, spec: dict[str, Any] | None, caption: str = "") -> str:
        if spec is None:
            return ""
        n = len(self.specs)
        self.specs.append(spec)
        data = json.dumps(spec, separators=(",", ":"), default=str).replace("</", "<\\/")
        title = spec.get("title")
        text = title.get("text") if isinstance(title, dict) else title
        cap = f"<p class='note'>{escape(caption)}</p>" if caption else ""
        return (
            f"<div class='vl' id='chart-{n}' data-spec='spec-{n}' role='img' aria-label='{escape(str(text or 'chart'))}'></div>"
            f"<script type='application/json' id='spec-{n}'>{data}</script>{cap}"
        )


# -- scorecard -------------------------------------------------------------------------------


def _col_header(c: Column) -> str:
    cls = " class='current'" if c.current else ""
    return (
        f"<th{cls} title='{escape(c.run_id)} — {escape(c.engine_build)}'>{escape(c.engine_id)}<br>"
        f"<span class='muted'>{escape(c.engine_version)} · {escape(c.scale)}</span><br>"
        f"<span class='muted'>{'this run' if c.current else escape(_short_run(c.run_id))}</span></th>"
    )


def _score_cell(root: Path, c: Column, cell: Verdict | None) -> str:
    """One scorecard cell: the observed value (linked to its Data Docs page), the verdict and the band, the reasons on hover."""
    if cell is None:
        return f"<td class='cell v-none' title='no verdict for this finding in run {escape(c.run_id)}'>—</td>"
    band = f"[{fmt(cell.band_min)}, {fmt(cell.band_max)}]"
    tip = (
        f"{cell.verdict.replace('_', ' ')}; band {band} at {c.scale}"
        + (f"; {cell.reason}" if cell.reason else "")
        + (f"; why this band: {cell.band_reason}" if cell.band_reason else "")
        + f"; run {cell.run_id}"
    )
    href = _href(root, cell.page)
    value = fmt(cell.observed) if cell.observed is not None else "—"
    value_html = f"<a href='{escape(href)}'>{escape(value)}</a>" if href else escape(value)
    if cell.verdict == "not_applicable":
        reason = cell.reason if len(cell.reason) <= 90 else cell.reason[:87] + "…"
        return (
            f"<td class='cell v-not_applicable' title='{escape(tip)}'>n/a"
            f"{' · ' + value_html if cell.observed is not None else ''}<br><span class='band'>{escape(reason)}</span></td>"
        )
    mark = VERDICT_MARK.get(cell.verdict, escape(cell.verdict))
    extra = (
        f"<br><span class='band fail'>{escape(cell.reason)}</span>"
        if cell.verdict == "fail" and cell.reason and cell.reason != "outside the band"
        else ""
    )
    return (
        f"<td class='cell v-{escape(cell.verdict)}' title='{escape(tip)}'>{value_html} {mark}<br><span "
        f"class='band'>{escape(band)}</span>{extra}</td>"
    )


def scorecard_section(root: Path, scores: list[SuiteScore], run_id: str) -> str:
    total: dict[str, int] = {}
    other: dict[str, int] = {}
    for s in scores:
        for k, n in s.counts(current_only=True).items():
            total[k] = total.get(k, 0) + n
        for k, n in s.counts().items():
            other[k] = other.get(k, 0) + n - s.counts(current_only=True).get(k, 0)
    failed = total.get("fail", 0)
    verdict = "reproduced" if total and not failed else (f"{failed} not reproduced" if failed else "not checked")
    head = (
        f"<section id='scorecard'><h2>Scorecard: the seeds' findings on each engine version "
        f"{_badge(None if not total else failed == 0, verdict)}</h2>"
    )
    if not scores:
        return head + "<p class='note'>No reproduction expectations for the suites of this run.</p></section>"
    summary = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in sorted(total.items())) or "no verdicts"
    other_text = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in sorted(other.items()) if n)
    parts = [
        head,
        f"<p>This run: <b>{escape(summary)}</b>."
        + (f" Latest runs at other scales of this hardware label: {escape(other_text)}." if other_text else "")
        + " Each cell: the observed value (a link to its Great Expectations Data Docs page), ✔ pass, ✘ fail or n/a with the reason,"
        " and the band applied at that scale. Hover a cell for the band's reasoning and the run.</p>",
        "<p class='legend note'><label><input type='checkbox' id='only-problems'> show only findings that failed or are not applicable</label></p>",
        "<table class='scorecard'>",
    ]
    for s in scores:
        ncol = len(s.columns)
        parts.append(
            f"<tbody><tr class='suite-head'><th colspan='{ncol + 3}'><a href='#suite-{escape(s.suite)}'>{escape(s.suite)}</a></th></tr>"
        )
        parts.append("<tr><th>finding</th><th>unit</th><th>seed</th>" + "".join(_col_header(c) for c in s.columns) + "</tr>")
        for r in s.rows:
            verdicts = [r.cells.get(c.key) for c in s.columns]
            cells = [_score_cell(root, c, v) for c, v in zip(s.columns, verdicts, strict=True)]
            problem = any(v is not None and v.verdict in ("fail", "not_applicable") for v in verdicts)
            seed_tip = escape(r.seed_figure)
            parts.append(
                f"<tr class='finding{' has-problem' if problem else ''}'><td><b>{escape(r.finding)}</b><br><span "
                f"class='note'>{escape(r.description)}</span></td>"
                f"<td>{escape(r.unit)}</td><td class='num' title='{seed_tip}'>{fmt(r.seed_value)}</td>{''.join(cells)}</tr>"
            )
        parts.append("</tbody>")
    parts.append("</table></section>")
    return "".join(parts)


# -- per suite -------------------------------------------------------------------------------


def reproduction_table(seed: dict[str, Any], rows: list[FigureRow], cols: list[Column]) -> str:
    """Every seed figure: seed value, measured value per (scale, engine) with measured / seed, and the seed file's note."""
    if not rows:
        return ""
    seed_scale = ", ".join(f"{k}={fmt(num(v))}" for k, v in (seed.get("scale") or {}).items())
    parts = [
        f"<h3>Reproduction table: the seed's figures</h3><p class='note'>Seed <code>{escape(str(seed.get('seed', '')))}</code> — "
        f"{escape(str(seed.get('title', '')))} ({escape(str(seed.get('engine', '')))}; {escape(seed_scale)}). {escape(str(seed.get('notes', '')))} "
        "Under each value: measured / seed, the seed scaled to the run's size for figures that grow with it; amber when more than 2x away. "
        "Column heads give the run (hover for its id and build).</p>",
        "<table class='repro'><tr><th>figure</th><th>unit</th><th>seed</th>" + "".join(_col_header(c) for c in cols) + "<th>note</th></tr>",
    ]
    for r in rows:
        cells = []
        off = False
        for c in cols:
            cell = r.cells.get(c.key)
            if cell is None or (cell.value is None and cell.status != "not_applicable"):
                why = cell.reason if cell is not None else ""
                cells.append(f"<td class='num v-none' title='{escape(why)}'>—</td>")
                continue
            if cell.status == "not_applicable":
                cells.append(f"<td class='v-not_applicable' title='{escape(cell.reason)}'>n/a</td>")
                continue
            ratio = cell.ratio
            is_off = ratio is not None and not (0.5 <= ratio <= 2.0)
            off |= is_off
            tip = f"seed at this size: {fmt(cell.seed_scaled)} {r.unit}; samples: {', '.join(fmt(s) for s in cell.samples[:12])}; run {cell.run_id}"
            under = f"<br><span class='muted'>×{ratio:.3g}</span>" if ratio is not None else ""
            cells.append(f"<td class='num{' v-off' if is_off else ''}' title='{escape(tip)}'>{fmt(cell.value)}{under}</td>")
        note = r.note
        if not note and off:
            note = (
                "More than 2x from the seed (scaled to the run's size) on some engine or scale; the seed file has no note on why."
                if r.scales_with
                else "More than 2x from the seed on some engine or scale; the seed file has no note on why, nor says (scales_with) "
                "whether this figure grows with the data size, which may differ from the seed's here."
            )
        scaled = f"<br><span class='muted'>scales with {escape(r.scales_with)}</span>" if r.scales_with else ""
        parts.append(
            f"<tr><td>{escape(r.label)}</td><td>{escape(r.unit)}</td><td class='num'>{fmt(r.seed_value)}{scaled}</td>{''.join(cells)}"
            f"<td class='reason'>{escape(note)}</td></tr>"
        )
    parts.append("</table>")
    return "".join(parts)


def drift_section(v_suite: pd.DataFrame, cps: list[dict[str, Any]]) -> str:
    if v_suite.empty:
        return "<h3>Drift</h3><p class='note'>No drift rows for this run.</p>"
    counts = v_suite["verdict"].fillna("unknown").value_counts().to_dict()
    ok = not (v_suite["success"] == False).any()  # noqa: E712 - pandas element-wise
    parts = [
        f"<h3>Drift against this hardware label's history {_badge(ok, 'no drift' if ok else 'DRIFT')}</h3><p>"
        + ", ".join(f"<span class='{escape(str(k))}'>{escape(str(k).replace('_', ' '))}</span>: {n}" for k, n in sorted(counts.items()))
        + "</p>"
    ]
    if counts.get("insufficient_history"):
        n = max((int(num(details_of(d).get("history_n")) or 0) for d in v_suite["details"]), default=0)
        parts.append(
            f"<p class='note'>Not enough history yet for {counts['insufficient_history']} metric(s): at most {n} earlier run(s) of this "
            "hardware label, engine build and scale.</p>"
        )
    shown = v_suite[v_suite["verdict"].isin(["drift", "unstable"])].sort_values(["verdict", "engine_id", "workload", "metric"])
    if not shown.empty:
        parts.append(
            "<table><tr><th>verdict</th><th>engine</th><th>workload / variant</th><th>metric</th><th>tonight</th><th>history median</th>"
            "<th>not flagged within</th><th>method</th></tr>"
        )
        for r in shown.head(60).itertuples():
            det = details_of(r.details)
            parts.append(
                f"<tr><td class='{escape(str(r.verdict))}'>{escape(str(r.verdict))}</td><td>{escape(str(r.engine_id))}</td>"
                f"<td>{escape(figure_label(str(r.workload), r.variant))}</td><td>{escape(str(r.metric))}</td>"
                f"<td class='num'>{fmt(num(r.observed))} {escape(str(r.unit or ''))}</td><td class='num'>{fmt(num(det.get('history_median')))}</td>"
                f"<td class='num'>[{fmt(num(r.min_value))}, {fmt(num(r.max_value))}]</td><td class='note'>{escape(str(det.get('method') or ''))}</td></tr>"
            )
        parts.append("</table>" + (f"<p class='note'>… and {len(shown) - 60} more.</p>" if len(shown) > 60 else ""))
    if cps:
        parts.append(
            "<h4>Change points found over the history</h4><table><tr><th>engine</th><th>workload / variant</th><th>metric</th><th>starts at run</th>"
            "<th>before</th><th>after</th><th>relative change</th><th>p-value</th></tr>"
        )
        for cp in sorted(cps, key=lambda c: (natural_key(str(c.get("engine_id"))), str(c.get("metric")), str(c.get("logical_date") or ""))):
            rel = num(cp.get("relative_change"))
            parts.append(
                f"<tr><td>{escape(str(cp.get('engine_id')))}</td><td>{escape(figure_label(str(cp.get('workload')), cp.get('variant')))}</td>"
                f"<td>{escape(str(cp.get('metric')))}</td><td title='{escape(str(cp.get('run_id')))}'>{escape(_short_run(str(cp.get('run_id'))))}</td>"
                f"<td class='num'>{fmt(num(cp.get('metric_before')))}</td><td class='num'>{fmt(num(cp.get('metric_after')))}</td>"
                f"<td class='num'>{f'{rel * 100:+.0f} %' if rel is not None else 'n/a'}</td><td class='num'>{fmt(num(cp.get('pvalue')))}</td></tr>"
            )
        parts.append("</table>")
    return "".join(parts)


def suite_section(
    root: Path,
    ds: Dataset,
    suite: str,
    run: pd.DataFrame,
    seed: dict[str, Any] | None,
    score: SuiteScore | None,
    headline: tuple[str, ...],
    cs: Charts,
) -> str:
    first = run.iloc[0]
    label, scale, until = str(first["hardware_label"]), str(first["scale"]), run["logical_date"].max()
    cols = columns(ds.cells, label, str(first["run_id"]), suite)
    parts = [f"<section class='suite' id='suite-{escape(suite)}'><h2>Suite {escape(suite)}</h2>"]
    parts += _docs_links(root, ds, first["run_id"], suite)
    rows = seed_figures(seed, ds.m, cols, suite) if seed else []
    if rows:
        parts.append(reproduction_table(seed or {}, rows, cols))
    parts += _ratio_charts(suite, score, rows, cols, cs)
    parts += _trends_and_drift(ds, suite, str(first["run_id"]), label, scale, until, headline, cs)
    parts.append("</section>")
    return "".join(parts)


def _docs_links(root: Path, ds: Dataset, run_id: Any, suite: str) -> list[str]:
    """A line of links to the Great Expectations Data Docs pages of this run's validations of ``suite``, if any."""
    pages: list[tuple[str, str]] = []
    if not ds.v.empty:
        mine = ds.v[(ds.v["run_id"] == run_id) & (ds.v["suite"] == suite)].drop_duplicates("gx_suite")
        pages = sorted((str(r.gx_suite), p) for r in mine.itertuples() if isinstance(r.gx_suite, str) for p in [_page_of(root, r)] if p)
    if not pages:
        return []
    return [
        "<p class='note'>Great Expectations Data Docs of this run: "
        + ", ".join(f"<a href='{escape(_href(root, p) or '')}'>{escape(g)}</a>" for g, p in pages)
        + "</p>"
    ]


def _ratio_charts(suite: str, score: SuiteScore | None, rows: list[FigureRow], cols: list[Column], cs: Charts) -> list[str]:
    """The findings and the seed figures as ratios to the seed, each chart captioned with what it could not draw."""
    parts = ["<h3>Ratios: this run and the latest run of each scale against the seed</h3><div class='grid'>"]
    if score is not None:
        spec, skipped = charts.findings_chart(score)
        parts.append(
            cs.add(
                spec,
                (
                    "Not on the ratio axis (no seed figure, or a seed or observed value of zero or missing; see the scorecard): "
                    + ", ".join(skipped)
                    + "."
                )
                if skipped
                else "",
            )
        )
    if rows:
        spec, skipped = charts.figures_chart(suite, rows, cols)
        parts.append(
            cs.add(
                spec,
                ("Not on the ratio axis (seed or measured value zero or missing; see the table): " + ", ".join(skipped) + ".")
                if skipped
                else "",
            )
        )
    if score is None and not rows:
        parts.append("<p class='note'>No seed figures or findings for this suite.</p>")
    parts.append("</div>")
    return parts


def _trends_and_drift(
    ds: Dataset, suite: str, run_id: str, label: str, scale: str, until: Any, headline: tuple[str, ...], cs: Charts
) -> list[str]:
    """Trend charts of the headline metrics (else the first four) over the label's history at ``scale``, then the drift verdicts."""
    hist = history(ds.m, label, scale, until, suite)
    nruns = hist["run_id"].nunique()
    cps = change_points(ds.v, run_id, suite)
    dv = drift_verdicts(ds.v, run_id, suite)
    drifted = (
        {(str(r.engine_id), str(r.workload), str(r.variant), str(r.metric)) for r in dv.itertuples() if r.verdict == "drift"}
        if not dv.empty
        else set()
    )
    metrics = [m for m in headline if m in set(hist["metric"])] or sorted(set(hist["metric"]))[:4]
    parts = [
        f"<h3>Trends over {nruns} run(s) of hardware label {escape(label)} at scale {escape(scale)}</h3>"
        "<p class='note'>Hover a point for its run id, build and samples; click a legend entry to highlight one workload. "
        "Dashed red rules: change points drift found (hover for before / after); a red ring: drift tonight.</p><div class='grid'>"
    ]
    for metric in metrics:
        parts.append(cs.add(charts.trend_chart(suite, metric, hist, cps, drifted)))
    parts.append("</div>")
    parts.append(drift_section(dv, cps))
    return parts


def _page_of(root: Path, r: Any) -> str | None:
    from jsonbench.report.model import DocsPages

    return DocsPages(root).page(details_of(getattr(r, "details", None)), getattr(r, "gx_suite", None), str(r.run_id))


# -- the rest --------------------------------------------------------------------------------


def sanity_section(root: Path, vrun: pd.DataFrame) -> str:
    s = vrun[vrun["check_kind"] == "sanity"] if not vrun.empty else vrun
    if s.empty:
        return "<section id='sanity'><h2>Sanity</h2><p class='note'>No sanity rows for this run.</p></section>"
    failed = s[s["success"] == False]  # noqa: E712 - pandas element-wise
    out = [f"<section id='sanity'><h2>Sanity {_badge(failed.empty, f'{len(s) - len(failed)} of {len(s)} passed')}</h2>"]
    if not failed.empty:
        out.append("<table><tr><th>expectation</th><th>what</th><th>unexpected</th></tr>")
        for r in failed.itertuples():
            det = details_of(r.details)
            page = _href(root, _page_of(root, r))
            name = f"<a href='{escape(page)}'>{escape(str(r.expectation))}</a>" if page else escape(str(r.expectation))
            out.append(
                f"<tr><td class='fail'>{name}</td><td>{escape(str(r.description))}</td>"
                f"<td class='note'>{escape(json.dumps((det.get('unexpected') or [])[:10], default=str))}</td></tr>"
            )
        out.append("</table>")
    out.append("</section>")
    return "".join(out)


def environment_section(run: pd.DataFrame) -> str:
    first = run.iloc[0]
    host = [
        ("hardware label", first.get("hardware_label")),
        ("host", first.get("host_name")),
        ("CPU", first.get("host_cpu_model")),
        ("cores", first.get("host_cores")),
        ("memory", fmt(num(first.get("host_memory_bytes"))) + "B"),
        ("kernel", first.get("host_kernel")),
        ("git revision", first.get("git_revision")),
        ("scale", f"{first.get('scale')}"),
    ]
    out = (
        ["<section id='environment'><h2>Environment</h2><table>"]
        + [f"<tr><th>{escape(k)}</th><td>{escape(str(v))}</td></tr>" for k, v in host]
        + ["</table>"]
    )
    out.append("<table><tr><th>suite</th><th>scale parameters</th></tr>")
    for suite, g in run.groupby("suite"):
        out.append(
            f"<tr><td>{escape(str(suite))}</td><td "
            f"class='note'>{escape(str(g['scale_params'].dropna().iloc[0] if g['scale_params'].notna().any() else ''))}</td></tr>"
        )
    out.append(
        "</table><table><tr><th>engine</th><th>version</th><th>build</th><th>backend</th><th>data checksums</th><th>configure</th><th>settings</th></tr>"
    )
    for _, r in run.drop_duplicates("engine_id").sort_values("engine_id", key=lambda s: s.map(natural_key)).iterrows():
        settings = r.get("settings") or "{}"
        try:
            settings = ", ".join(f"{k}={v}" for k, v in json.loads(settings).items())
        except (ValueError, AttributeError):
            pass
        out.append(
            f"<tr><td>{escape(str(r['engine_id']))}</td><td>{escape(str(r['engine_version']))}</td><td>{escape(str(r['engine_build']))}</td>"
            f"<td>{escape(str(r['engine_backend']))}</td><td>{escape(str(r['data_checksums']))}</td>"
            f"<td class='note'>{escape(str(r['engine_configure'] or ''))[:400]}</td><td class='note'>{escape(str(settings))}</td></tr>"
        )
    out.append("</table></section>")
    return "".join(out)


def runs_section(ds: Dataset, chosen: str) -> str:
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
    out = [
        f"<section id='runs'><h2>Runs in the dataset ({len(runs)})</h2><table><tr><th>run</th><th>logical date</th><th>hardware</th><th>scale</th>"
        "<th>engines</th><th>rows</th><th>checks</th></tr>"
    ]
    for r in runs.head(60).itertuples():
        st = status.get(str(r.run_id), "not checked")
        cls = "pass" if st == "passed" else ("fail" if st.startswith("failed") else "note")
        mark = " <b>(this report)</b>" if r.run_id == chosen else ""
        out.append(
            f"<tr><td>{escape(str(r.run_id))}{mark}</td><td>{escape(pd.Timestamp(r.logical_date).strftime('%Y-%m-%d %H:%M'))}</td>"
            f"<td>{escape(str(r.hardware_label))}</td><td>{escape(str(r.scale))}</td><td class='note'>{escape(r.engines)}</td>"
            f"<td class='num'>{r.rows}</td><td class='{cls}'>{escape(st)}</td></tr>"
        )
    out.append("</table>" + (f"<p class='note'>… and {len(runs) - 60} earlier runs.</p>" if len(runs) > 60 else "") + "</section>")
    return "".join(out)


def failures_box(vrun: pd.DataFrame, limit: int = 5) -> str:
    """One line per failed check of the run (the first few), linking to its suite's section: why the badge is red."""
    if vrun.empty:
        return ""
    failed = vrun[vrun["success"] == False]  # noqa: E712 - pandas element-wise
    if failed.empty:
        return ""
    order = {"sanity": 0, "reproduction": 1, "drift": 2}
    failed = failed.assign(_o=failed["check_kind"].map(order).fillna(3)).sort_values(["_o", "suite", "engine_id"], na_position="first")
    items = []
    for r in failed.head(limit).itertuples():
        what = str(r.expectation) if r.check_kind != "drift" else figure_label(str(r.workload), r.variant, str(r.metric))
        where = " · ".join(escape(str(x)) for x in (r.suite, r.engine_id) if isinstance(x, str) and x)
        det = details_of(r.details)
        seen = f"observed {fmt(num(r.observed))}" if num(r.observed) is not None else ""
        bounds = (
            f", expected [{fmt(num(r.min_value))}, {fmt(num(r.max_value))}]"
            if num(r.min_value) is not None or num(r.max_value) is not None
            else ""
        )
        hist = f", history median {fmt(num(det.get('history_median')))}" if num(det.get("history_median")) is not None else ""
        link = f"#suite-{escape(str(r.suite))}" if isinstance(r.suite, str) and r.suite else "#sanity"
        items.append(f"<li><a href='{link}'>{escape(str(r.check_kind))}</a> {where}: <b>{escape(what)}</b> {seen}{bounds}{hist}</li>")
    more = f"<li>… and {len(failed) - limit} more (see the suites' sections)</li>" if len(failed) > limit else ""
    return f"<div class='warnbox'><b>Failed checks of this run ({len(failed)}):</b><ul>{''.join(items)}{more}</ul></div>"


def _warning_boxes(ds: Dataset) -> list[str]:
    """What the page says first, under its title: dataset files skipped as unreadable, a requested run that published nothing."""
    boxes = []
    if ds.damaged:
        boxes.append(
            "<div class='warnbox'><b>Unreadable dataset files were skipped:</b><ul>"
            + "".join(f"<li><code>{escape(p)}</code>: {escape(e)}</li>" for p, e in ds.damaged)
            + "</ul></div>"
        )
    if ds.missing:
        boxes.append(
            f"<div class='warnbox'><b>Run {escape(ds.missing)} published no measurements</b> (every workload failed, or it was stopped "
            "before publishing; its Airflow log and alert say why)." + (" Below: the latest published run." if ds.chosen else "") + "</div>"
        )
    return boxes


def _run_page(root: Path, ds: Dataset, chosen: str, cs: Charts) -> tuple[str, list[str]]:
    """The title of run ``chosen``'s page and its sections, top to bottom (the warning boxes go between them)."""
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
    badge = _badge(*badge_of(vrun))  # a run that judged too little is never shown as passed
    title = f"<h1>JSON storage benchmark — run {escape(chosen)} {badge}</h1>"
    index = data_docs_dir(root) / "index.html"
    links = (
        [f"<a href='{escape(_href(root, index.relative_to(root).as_posix()) or '')}'>Great Expectations Data Docs</a> (every checked run)"]
        if index.exists()
        else []
    )
    if (root / "jsonbench.duckdb").exists():
        links.append("SQL views: <code>jsonbench.duckdb</code> in the results folder")
    others = sorted(set(ds.m["hardware_label"]) - {label})
    body = [
        f"<p>Logical date {escape(pd.Timestamp(first['logical_date']).strftime('%Y-%m-%d %H:%M %Z'))}, hardware <b>{escape(label)}</b>, "
        f"scale <b>{escape(scale)}</b>, {len(run)} measurements, engines: "
        f"{', '.join(escape(e) for e in sorted(run['engine_id'].unique(), key=natural_key))}."
        + (f" {' · '.join(links)}." if links else "")
        + (f" Other hardware labels in the dataset: {', '.join(map(escape, others))}." if others else "")
        + "</p>",
        failures_box(vrun),
        judgement_box(vrun),
        "<nav class='toc'><a href='#scorecard'>Scorecard</a>"
        + "".join(f"<a href='#suite-{escape(s)}'>{escape(s)}</a>" for s in suites)
        + "<a href='#figures'>Figures</a><a href='#sanity'>Sanity</a><a href='#environment'>Environment</a><a href='#runs'>Runs</a></nav>",
    ]
    scores = scorecard(lib.reproduction, ds, label, chosen, [s for s in suites if s in lib.reproduction])
    body.append(scorecard_section(root, scores, chosen))
    by_suite = {s.suite: s for s in scores}
    for suite in suites:
        try:
            headline = tuple(get_suite(suite).headline)
        except (KeyError, ConfigError):  # rows of a suite this checkout does not know
            headline = ()
        body.append(suite_section(root, ds, suite, run, lib.seeds.get(suite), by_suite.get(suite), headline, cs))
    body.append(figures.report_section(root))  # the figures side by side (jsonbench.report.figures)
    body.append(sanity_section(root, vrun))
    body.append(environment_section(run))
    body.append(runs_section(ds, chosen))
    body.append(noise_section(noise_figures(root, sorted(set(ds.m["hardware_label"])))))
    return title, body


def noise_section(fig: dict[str, Any]) -> str:
    """Calibration per label (records, runs, when) and the latest checks-of-the-checks figures: one small table each."""
    rows = "".join(
        f"<tr><td>{escape(str(c['hardware_label']))}</td><td>{escape(str(c['scale'] or '-'))}</td>"
        f"<td>{'yes' if c['calibrated'] else 'no'}</td><td>{c['runs']}</td><td>{escape(str(c['created_at'] or '-'))}</td>"
        + "".join(
            f"<td>{escape(', '.join(f'{s} {v:.0%}' for s, v in sorted((c.get(k) or {}).items()) if v is not None))}</td>"
            for k in ("median_mds_findings", "median_mds_engine_3", "median_mds")
        )
        + "</tr>"
        for c in fig["calibration"]
    )
    out = [
        "<section id='noise'><h2>Noise model and the checks of the checks</h2><p class='note'>Median minimum detectable shift (mds) "
        "per suite: of its timing findings; of its timings when a whole engine version moves for 3 nights; of one timing alone.</p>"
        "<table><tr><th>hardware</th><th>scale</th><th>calibrated</th><th>runs</th><th>when</th><th>mds of timing findings</th>"
        f"<th>mds, whole engine, 3 nights</th><th>mds, one series alone</th></tr>{rows}</table>"
    ]
    for f in fig["checkcheck"]:
        sizes = sorted({s for per in f["levels"].values() for s in per}, key=float)
        head = "".join(f"<th>{escape(s)}x</th>" for s in sizes)
        body = "".join(
            f"<tr><td>{escape(level)}</td>"
            + "".join(f"<td>{'-' if per.get(s) is None else format(per[s], '.0%')}</td>" for s in sizes)
            + "</tr>"
            for level, per in f["levels"].items()
        )
        out.append(
            f"<p>checkcheck {escape(str(f['hardware_label']))} at {escape(str(f['scale']))} ({escape(str(f['saved_at']))}): "
            f"slowdowns caught within {f['nights']} run(s); honest reruns: {f['false_alarms']} false alarm(s), drift alarms per run "
            f"before confirmation {escape(str(f['honest_drift_alarms']))}</p><table><tr><th>planted per</th>{head}</tr>{body}</table>"
        )
    return "".join(out) + "</section>"


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
    if ds.chosen is None:
        body = [f"<h1>JSON storage benchmark</h1><p>No published run under <code>{escape(str(root))}</code>.</p>", *_warning_boxes(ds)]
    else:
        title, sections = _run_page(root, ds, ds.chosen, cs)
        body = [title, *_warning_boxes(ds), *sections]
    js = bundle(cache_dir(out_dir / ".vendor")) if cs.specs else ""
    took = time.perf_counter() - t0
    html = (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'><meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>JSON storage benchmark report</title><style>{CSS}</style></head><body>{''.join(body)}"
        f"<p class='note'>Built {now} in {took:.1f} s from <code>{escape(str(root))}</code> by jsonbench.report; "
        f"{len(cs.specs)} charts (Vega-Lite via Altair, rendered offline).</p>"
        + (f"<script>{js}</script><script>{RENDER_JS}</script>" if js else "")
        + "</body></html>"
    )
    target = out_dir / "index.html"
    tmp = out_dir / ".index.html.tmp"
    tmp.write_text(html, encoding="utf-8")
    tmp.replace(target)
    log.info("report: %s (%d charts, %.1f s)", target, len(cs.specs), took)
    return target
