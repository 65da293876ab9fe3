"""The static HTML report: ``<results>/report/index.html``, built from the Parquet dataset alone.

For the latest run (or the one asked for) it shows, per suite: each seed figure next to the run's
value per engine version (bar charts), the seed's findings with their tolerance bands and the
reproduction verdicts, trends of the suite's headline metrics over the earlier runs of the same
hardware label and scale, the drift verdicts, then the sanity outcome, the environment (hardware,
builds, settings) and a link to the run's Great Expectations Data Docs. Charts are inline SVG
(:mod:`jsonbench.report.charts`); the page needs no network.
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from html import escape
from pathlib import Path
from typing import Any

import pandas as pd

from jsonbench.report.charts import PALETTE, band_chart, bar_chart, fmt, line_chart

CSS = """
body{font-family:system-ui,sans-serif;margin:24px auto;max-width:1200px;color:#222;padding:0 16px}
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:32px}h3{font-size:15px}
table{border-collapse:collapse;font-size:12px;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f5f5f5}.pass,.ok{color:#1b5e20;font-weight:bold}.fail,.drift{color:#b71c1c;font-weight:bold}
.unstable,.insufficient_history{color:#8d6e00}.grid{display:flex;flex-wrap:wrap;gap:8px}.note{color:#555;font-size:12px}
.badge{display:inline-block;padding:2px 8px;border-radius:10px;color:#fff;font-size:12px}.b-pass{background:#2e7d32}.b-fail{background:#c62828}.b-none{background:#757575}
code{font-size:12px}
"""


def _num(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def load(results_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """All measurements and all validation rows of the dataset (empty frames if none)."""
    from jsonbench.dataset.publish import MEASUREMENTS, VALIDATIONS, read_dataset

    m = read_dataset(results_dir, MEASUREMENTS).to_pandas()
    v = read_dataset(results_dir, VALIDATIONS).to_pandas()
    return m, v


def pick_run(m: pd.DataFrame, run_id: str | None) -> str | None:
    """The asked-for run, else the latest by logical date then end time."""
    if m.empty:
        return None
    if run_id:
        return run_id if (m["run_id"] == run_id).any() else None
    last = m.sort_values(["logical_date", "ended_at"]).iloc[-1]
    return str(last["run_id"])


def _badge(ok: bool | None, text: str) -> str:
    cls = "b-none" if ok is None else ("b-pass" if ok else "b-fail")
    return f'<span class="badge {cls}">{escape(text)}</span>'


def _engines(run: pd.DataFrame) -> list[tuple[str, str]]:
    """(engine_id, label) pairs of the run, in order."""
    pairs = run[["engine_id", "engine_version"]].drop_duplicates().sort_values(["engine_id"])
    return [(r.engine_id, f"{r.engine_id} ({r.engine_version})") for r in pairs.itertuples()]


def _value(run: pd.DataFrame, engine_id: str, workload: str, metric: str, variant: str = "default") -> float | None:
    hit = run[(run["engine_id"] == engine_id) & (run["workload"] == workload) & (run["metric"] == metric) & (run["variant"] == variant)]
    return _num(hit["value"].iloc[0]) if not hit.empty else None


def seed_section(suite: str, seed: dict[str, Any], run: pd.DataFrame) -> str:
    """Bar charts: per seed metric, per workload/variant, the seed's figure next to each engine's value.

    A figure with ``scales_with: K`` is a count proportional to the scale parameter ``K`` (``rows``,
    ``small_rows``, ...): it is also shown scaled by the run's ``K`` over the seed's.
    """
    engines = _engines(run)
    params = run["scale_params"].dropna()
    run_scale = json.loads(params.iloc[0]) if not params.empty else {}
    seed_scale = seed.get("scale") or {}

    def scaled(f: dict[str, Any]) -> float | None:
        key, value = f.get("scales_with"), _num(f.get("value"))
        run_k, seed_k = _num(run_scale.get(key)) if key else None, _num(seed_scale.get(key)) if key else None
        return value * run_k / seed_k if value is not None and run_k and seed_k else None

    def label(f: dict[str, Any]) -> str:
        return f["workload"] if f.get("variant", "default") == "default" else f"{f['workload']}/{f['variant']}"

    scale_text = ", ".join(f"{k}={fmt(_num(v))}" for k, v in seed_scale.items())
    run_text = ", ".join(f"{k}={fmt(_num(v))}" for k, v in run_scale.items())
    out = [f"<h3>Seed figures vs this run</h3><p class='note'>Seed: <code>{escape(seed.get('seed', ''))}</code> &mdash; {escape(seed.get('title', ''))} "
           f"({escape(seed.get('engine', ''))}; {escape(scale_text)}). This run: {escape(run_text)}. {escape(seed.get('notes', ''))}</p><div class='grid'>"]
    table = ["<table><tr><th>workload</th><th>metric</th><th>seed</th><th>seed scaled to this run</th>" + "".join(f"<th>{escape(lab)}</th>" for _, lab in engines) + "</tr>"]
    by_metric: dict[str, list[dict[str, Any]]] = {}
    for f in seed.get("figures", []):
        if f.get("workload") and f.get("metric"):
            by_metric.setdefault(f["metric"], []).append(f)
    for metric, figs in by_metric.items():
        any_scaled = any(scaled(f) is not None for f in figs)
        series: dict[str, list[float | None]] = {
            "seed" + (" (scaled to run)" if any_scaled else ""): [scaled(f) if scaled(f) is not None else _num(f.get("value")) for f in figs]}
        for eid, lab in engines:
            series[lab] = [_value(run, eid, f["workload"], metric, f.get("variant", "default")) for f in figs]
        unit = figs[0].get("unit", "")
        out.append(bar_chart(f"{suite}: {metric} — seed vs this run", [label(f) for f in figs], series, unit=unit))
        for f in figs:
            sc = scaled(f)
            table.append(f"<tr><td>{escape(label(f))}</td><td>{escape(metric)}</td><td>{fmt(_num(f.get('value')))} {escape(unit)}</td>"
                         f"<td>{fmt(sc) if sc is not None else ''}</td>"
                         + "".join(f"<td>{fmt(_value(run, eid, f['workload'], metric, f.get('variant', 'default')))}</td>" for eid, _ in engines) + "</tr>")
    out.append("</div>")
    table.append("</table>")
    return "".join(out) + "".join(table)


def findings_section(suite: str, definition: dict[str, Any] | None, vrun: pd.DataFrame, run: pd.DataFrame) -> str:
    """The reproduction verdicts: band chart plus a table (seed, band, observed per engine, verdict)."""
    rep = vrun[(vrun["check_kind"] == "reproduction") & (vrun["suite"] == suite)] if not vrun.empty else vrun
    if definition is None:
        return "<h3>Reproduction</h3><p class='note'>No reproduction expectations for this suite yet.</p>"
    if rep.empty:
        return "<h3>Reproduction</h3><p class='note'>No validation rows for this run (the check did not run or did not finish).</p>"
    engines = _engines(run)
    rows = []
    table = ["<table><tr><th>finding</th><th>seed</th><th>band</th>" + "".join(f"<th>{escape(lab)}</th>" for _, lab in engines) + "<th>why this band</th></tr>"]
    for f in definition.get("findings", []):
        fr = rep[rep["expectation"] == f["id"]]
        observed = {lab: _num(fr[fr["engine_id"] == eid]["observed"].iloc[0]) if not fr[fr["engine_id"] == eid].empty else None for eid, lab in engines}
        band = f.get("band", {})
        seed_v = _num((f.get("seed") or {}).get("value"))
        rows.append({"label": f["id"], "band_min": band.get("min"), "band_max": band.get("max"), "seed": seed_v, "observed": observed,
                     "log": (band.get("min") or 0) > 0 or (f.get("unit") == "x")})
        cells = []
        for eid, _lab in engines:
            hit = fr[fr["engine_id"] == eid]
            if hit.empty:
                cells.append("<td>—</td>")
                continue
            if hit["verdict"].iloc[0] == "not_applicable":
                cells.append("<td class='note'>not applicable</td>")
                continue
            ok = bool(hit["success"].iloc[0])
            cells.append(f"<td class='{'pass' if ok else 'fail'}'>{fmt(_num(hit['observed'].iloc[0]))} {'✔' if ok else '✘'}</td>")
        table.append(f"<tr><td><b>{escape(f['id'])}</b><br><span class='note'>{escape(f.get('description', ''))}</span></td>"
                     f"<td>{fmt(seed_v)}<br><span class='note'>{escape((f.get('seed') or {}).get('figure', ''))}</span></td>"
                     f"<td>[{fmt(band.get('min'))}, {fmt(band.get('max'))}] {escape(f.get('unit', ''))}</td>{''.join(cells)}"
                     f"<td class='note'>{escape(f.get('band_reason', ''))}</td></tr>")
    table.append("</table>")
    ok = bool(rep["success"].all())
    head = f"<h3>Reproduction of the seed's findings {_badge(ok, 'reproduced' if ok else 'NOT reproduced')}</h3>"
    return head + band_chart(f"{suite}: findings (band shaded, seed = diamond)", rows, [lab for _, lab in engines]) + "".join(table)


def trends_section(suite: str, headline: tuple[str, ...], hist: pd.DataFrame) -> str:
    """Line charts of the headline metrics over runs, one chart per (metric, engine), a line per workload."""
    if hist.empty:
        return ""
    runs = hist[["run_id", "logical_date"]].drop_duplicates("run_id").sort_values("logical_date")
    labels = [pd.Timestamp(d).strftime("%m-%d %H:%M") for d in runs["logical_date"]]
    order = list(runs["run_id"])
    metrics = [m for m in headline if m in set(hist["metric"])] or sorted(set(hist["metric"]))[:5]
    out = [f"<h3>Trends over {len(order)} run(s) of this hardware label and scale</h3><div class='grid'>"]
    for metric in metrics:
        mdf = hist[hist["metric"] == metric]
        unit = str(mdf["unit"].iloc[0]) if not mdf.empty else ""
        for eid in sorted(mdf["engine_id"].unique()):
            edf = mdf[mdf["engine_id"] == eid]
            series: dict[str, list[float | None]] = {}
            for (w, var), g in edf.groupby(["workload", "variant"]):
                by_run = dict(zip(g["run_id"], g["value"]))
                series[w if var == "default" else f"{w}/{var}"] = [_num(by_run.get(r)) for r in order]
            out.append(line_chart(f"{metric} on {eid}", labels, series, unit=unit))
    out.append("</div>")
    return "".join(out)


def drift_section(suite: str, vrun: pd.DataFrame) -> str:
    d = vrun[(vrun["check_kind"] == "drift") & (vrun["suite"] == suite)] if not vrun.empty else vrun
    if d.empty:
        return "<h3>Drift</h3><p class='note'>No drift rows for this run.</p>"
    counts = d["verdict"].value_counts().to_dict()
    ok = not (d["success"] == False).any()  # noqa: E712 - pandas element-wise
    parts = [f"<h3>Drift against history {_badge(ok, 'quiet' if ok else 'DRIFT')}</h3><p>"
             + ", ".join(f"<span class='{escape(str(k))}'>{escape(str(k))}</span>: {v}" for k, v in sorted(counts.items())) + "</p>"]
    if counts.get("insufficient_history"):
        n = d["details"].map(lambda s: json.loads(s).get("history_n", 0) if s else 0)
        parts.append(f"<p class='note'>Not enough history yet for {counts['insufficient_history']} metric(s): at most {int(n.max())} earlier run(s) of this "
                     "hardware label, engine build and scale; drift is judged from 3 earlier runs on (drift.json: min_history).</p>")
    shown = d[d["verdict"].isin(["drift", "unstable"])].sort_values(["verdict", "engine_id", "workload", "metric"])
    if not shown.empty:
        parts.append("<table><tr><th>verdict</th><th>engine</th><th>workload</th><th>metric</th><th>tonight</th><th>history median</th><th>not flagged within</th><th>relative spread</th></tr>")
        for r in shown.head(60).itertuples():
            det = json.loads(r.details or "{}")
            parts.append(f"<tr><td class='{escape(r.verdict)}'>{escape(r.verdict)}</td><td>{escape(str(r.engine_id))}</td><td>{escape(str(r.workload))}</td>"
                         f"<td>{escape(str(r.metric))}</td><td>{fmt(_num(r.observed))} {escape(str(r.unit or ''))}</td><td>{fmt(_num(det.get('history_median')))}</td>"
                         f"<td>[{fmt(_num(r.min_value))}, {fmt(_num(r.max_value))}]</td><td>{fmt(_num(det.get('relative_spread')))}</td></tr>")
        parts.append("</table>")
    return "".join(parts)


def headline_section(suite: str, headline: tuple[str, ...], run: pd.DataFrame) -> str:
    """Bar charts of the headline metrics of tonight per workload and engine (suites without a seed file too)."""
    engines = _engines(run)
    out = ["<h3>This run, headline metrics</h3><div class='grid'>"]
    metrics = [m for m in headline if m in set(run["metric"])] or sorted(set(run["metric"]))[:4]
    for metric in metrics:
        mdf = run[(run["metric"] == metric) & (run["status"] == "ok")]
        cats = sorted(set(zip(mdf["workload"], mdf["variant"])))
        series = {lab: [_value(run, eid, w, metric, v) for w, v in cats] for eid, lab in engines}
        unit = str(mdf["unit"].iloc[0]) if not mdf.empty else ""
        out.append(bar_chart(f"{suite}: {metric}", [w if v == "default" else f"{w}/{v}" for w, v in cats], series, unit=unit,
                             colors=PALETTE[1:]))
    out.append("</div>")
    return "".join(out)


def environment_section(run: pd.DataFrame) -> str:
    first = run.iloc[0]
    host = [("hardware label", first.get("hardware_label")), ("host", first.get("host_name")), ("CPU", first.get("host_cpu_model")),
            ("cores", first.get("host_cores")), ("memory", fmt(_num(first.get("host_memory_bytes"))) + "B"), ("kernel", first.get("host_kernel")),
            ("git revision", first.get("git_revision")), ("scale", f"{first.get('scale')} {first.get('scale_params')}")]
    out = ["<h2>Environment</h2><table>"] + [f"<tr><th>{escape(k)}</th><td>{escape(str(v))}</td></tr>" for k, v in host] + ["</table>"]
    out.append("<table><tr><th>engine</th><th>version</th><th>build</th><th>backend</th><th>data checksums</th><th>configure</th><th>settings</th></tr>")
    for _, r in run.drop_duplicates("engine_id").sort_values("engine_id").iterrows():
        settings = r.get("settings") or "{}"
        try:
            settings = ", ".join(f"{k}={v}" for k, v in json.loads(settings).items())
        except ValueError:
            pass
        out.append(f"<tr><td>{escape(str(r['engine_id']))}</td><td>{escape(str(r['engine_version']))}</td><td>{escape(str(r['engine_build']))}</td>"
                   f"<td>{escape(str(r['engine_backend']))}</td><td>{escape(str(r['data_checksums']))}</td>"
                   f"<td class='note'>{escape(str(r['engine_configure'] or ''))[:400]}</td><td class='note'>{escape(str(settings))}</td></tr>")
    out.append("</table>")
    return "".join(out)


def sanity_section(vrun: pd.DataFrame) -> str:
    s = vrun[vrun["check_kind"] == "sanity"] if not vrun.empty else vrun
    if s.empty:
        return "<h2>Sanity</h2><p class='note'>No sanity rows for this run.</p>"
    failed = s[s["success"] == False]  # noqa: E712
    out = [f"<h2>Sanity {_badge(failed.empty, f'{len(s) - len(failed)} of {len(s)} passed')}</h2>"]
    if not failed.empty:
        out.append("<table><tr><th>expectation</th><th>what</th><th>unexpected</th></tr>")
        for r in failed.itertuples():
            det = json.loads(r.details or "{}")
            out.append(f"<tr><td class='fail'>{escape(str(r.expectation))}</td><td>{escape(str(r.description))}</td>"
                       f"<td class='note'>{escape(json.dumps(det.get('unexpected', [])[:10]))}</td></tr>")
        out.append("</table>")
    return "".join(out)


def build_report(results_dir: str | Path | None = None, run_id: str | None = None) -> Path:
    """Write ``<results>/report/index.html`` for ``run_id`` (default: the latest run); return its path."""
    from jsonbench import paths
    from jsonbench.checks.library import load_library
    from jsonbench.dataset.schema import run_key
    from jsonbench.errors import ConfigError
    from jsonbench.suites import get_suite

    root = paths.results_dir(results_dir)
    out_dir = root / "report"
    out_dir.mkdir(parents=True, exist_ok=True)
    m, v = load(root)
    chosen = pick_run(m, run_id)
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    body: list[str] = []
    if chosen is None:
        body.append(f"<h1>JSON storage benchmark</h1><p>No published run under <code>{escape(str(root))}</code>{' with id ' + escape(run_id) if run_id else ''}.</p>")
    else:
        run = m[m["run_id"] == chosen]
        vrun = v[v["run_id"] == chosen] if not v.empty else v
        first = run.iloc[0]
        label, scale = first["hardware_label"], first["scale"]
        hist = m[(m["hardware_label"] == label) & (m["scale"] == scale) & (m["logical_date"] <= first["logical_date"])]
        lib = load_library()
        docs = root / "data_docs" / run_key(chosen) / "index.html"
        all_ok = None if vrun.empty else bool(vrun["success"].all())
        body.append(f"<h1>JSON storage benchmark — run {escape(chosen)} {_badge(all_ok, 'all checks passed' if all_ok else ('checks FAILED' if all_ok is False else 'not checked'))}</h1>")
        body.append(f"<p>Logical date {escape(str(first['logical_date']))}, hardware <b>{escape(str(label))}</b>, scale <b>{escape(str(scale))}</b>, "
                    f"{len(run)} measurements, engines: {', '.join(escape(lab) for _, lab in _engines(run))}. ")
        if docs.exists():
            # The Data Docs index needs its CDN scripts to list anything; the validation pages render offline.
            pages = sorted(docs.parent.glob("validations/**/*.html"))
            links = ", ".join(f"<a href='../{escape(p.relative_to(root).as_posix())}'>{escape(p.stem.removeprefix('jsonbench-'))}</a>" for p in pages)
            body.append(f"<a href='../data_docs/{escape(run_key(chosen))}/index.html'>Great Expectations Data Docs of this run</a>"
                        + (f" (validation pages: {links})" if links else ""))
        else:
            body.append("Great Expectations Data Docs: not built for this run.")
        others = sorted(set(m["hardware_label"]) - {label})
        body.append(f" Other hardware labels in the dataset: {', '.join(map(escape, others))}." if others else "")
        body.append("</p>")
        for suite in sorted(run["suite"].unique()):
            srun = run[run["suite"] == suite]
            try:
                headline = tuple(get_suite(suite).headline)
            except (KeyError, ConfigError):  # rows of a suite this checkout does not know
                headline = ()
            body.append(f"<h2>Suite {escape(suite)}</h2>")
            if suite in lib.seeds:
                body.append(seed_section(suite, lib.seeds[suite], srun))
            body.append(findings_section(suite, lib.reproduction.get(suite), vrun, srun))
            body.append(headline_section(suite, headline, srun))
            body.append(trends_section(suite, headline, hist[hist["suite"] == suite]))
            body.append(drift_section(suite, vrun))
        body.append(sanity_section(vrun))
        body.append(environment_section(run))
        runs = m[["run_id", "logical_date", "hardware_label", "scale"]].drop_duplicates("run_id").sort_values("logical_date", ascending=False)
        body.append("<h2>Runs in the dataset</h2><table><tr><th>run</th><th>logical date</th><th>hardware</th><th>scale</th><th>checks</th></tr>")
        for r in runs.head(50).itertuples():
            rv = v[v["run_id"] == r.run_id] if not v.empty else v
            verdict = "not checked" if rv.empty else ("pass" if bool(rv["success"].all()) else "fail")
            body.append(f"<tr><td>{escape(r.run_id)}</td><td>{escape(str(r.logical_date))}</td><td>{escape(str(r.hardware_label))}</td><td>{escape(str(r.scale))}</td>"
                        f"<td class='{'pass' if verdict == 'pass' else ('fail' if verdict == 'fail' else 'note')}'>{verdict}</td></tr>")
        body.append("</table>")
    html = (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>JSON storage benchmark report</title><style>{CSS}</style></head>"
            f"<body>{''.join(body)}<p class='note'>Built {now} from <code>{escape(str(root))}</code> by jsonbench.report.</p></body></html>")
    target = out_dir / "index.html"
    tmp = out_dir / ".index.html.tmp"
    tmp.write_text(html, encoding="utf-8")
    tmp.replace(target)
    return target
