"""The comparison's page, ``<results>/report/compare-<id>.html``: one row per metric and a forest plot.

The forest plot (Altair, a Vega-Lite spec as :mod:`jsonbench.report.charts` builds them) shows each timed or
sampled metric's estimate B/A with its interval on a log axis, the margin of practical equivalence shaded
around 1; the deterministic facts are listed under it, exactly. The page stands alone: the Vega bundle is
inlined (:mod:`jsonbench.report.vendor`), so it opens with no network.
"""

from __future__ import annotations

import html
import json
import math
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jsonbench.compare.params import Arm
from jsonbench.dataset.fsio import write_text_atomic
from jsonbench.dataset.schema import run_key
from jsonbench.history.stats.paired import PRECISION, half_width, pairs_for_precision

COLOURS = {
    "regression": "#e15759",
    "improvement": "#59a14f",
    "equivalent": "#4e79a7",
    "small": "#76b7b2",
    "changed": "#f28e2b",
    "inconclusive": "#9c755f",
}


def forest_chart(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The forest plot of the rows that carry an estimate and a finite interval (a Vega-Lite dict)."""
    import altair as alt

    data = [
        {
            "name": f"{r['workload']} · {r['variant']} · {r['metric']}",
            "estimate": r["estimate"],
            "low": r["interval_low"],
            "high": r["interval_high"],
            "band_low": 1 / (1 + r["margin"]),
            "band_high": 1 + r["margin"],
            "verdict": r["verdict"],
            "pairs": r["pairs_used"],
        }
        for r in rows
        if r.get("estimate") is not None and r.get("interval_low") is not None and r.get("interval_high") is not None
    ]
    if not data:
        return {}
    base = alt.Chart(alt.Data(values=data)).encode(y=alt.Y("name:N", sort=None, title=None))
    scale = alt.Scale(type="log")
    band = base.mark_bar(opacity=0.15, color="#888").encode(x=alt.X("band_low:Q", scale=scale, title="B / A"), x2="band_high:Q")
    bars = base.mark_rule(strokeWidth=2).encode(x=alt.X("low:Q", scale=scale), x2="high:Q", color=_colour())
    points = base.mark_point(filled=True, size=60).encode(
        x=alt.X("estimate:Q", scale=scale),
        color=_colour(),
        tooltip=["name:N", alt.Tooltip("estimate:Q", format=".4f"), "low:Q", "high:Q", "verdict:N", "pairs:Q"],
    )
    one = alt.Chart(alt.Data(values=[{"x": 1.0}])).mark_rule(strokeDash=[4, 4], color="#333").encode(x="x:Q")
    chart = alt.layer(band, bars, points, one).properties(width=560, height=alt.Step(16))
    return dict(chart.to_dict())


def _colour() -> Any:
    import altair as alt

    return alt.Color("verdict:N", scale=alt.Scale(domain=list(COLOURS), range=list(COLOURS.values())))


def _half_width(r: dict[str, Any]) -> float | None:
    lo, hi = r.get("interval_low"), r.get("interval_high")
    return half_width((lo, hi)) if isinstance(lo, (int, float)) and isinstance(hi, (int, float)) else None


def _num(v: Any, fmt: str = ".4f") -> str:
    return format(v, fmt) if isinstance(v, (int, float)) and math.isfinite(v) else ""


def precision_lines(rows: list[dict[str, Any]], precision: float) -> list[str]:
    """How precise the timed metrics' intervals are, and about how many pairs would bring each to +/- ``precision``.

    A comparison planned for a precision needs the pairs of its widest metric; the median metric says what most
    of them need."""
    got = []
    for r in rows:
        lo, hi = r.get("interval_low"), r.get("interval_high")
        if r["metric_kind"] == "deterministic" or lo is None or hi is None:
            continue
        hw, need = half_width((lo, hi)), pairs_for_precision(int(r["pairs_used"]), (lo, hi), precision)
        if hw is not None and need is not None:
            got.append((hw, need, f"{r['workload']}/{r['variant']}/{r['metric']}"))
    if not got:
        return []
    got.sort()
    within = sum(hw <= precision for hw, _, _ in got)
    widest = got[-1]
    return [
        f"interval half-width: median {statistics.median(h for h, _, _ in got):.1%}, widest {widest[0]:.1%} ({widest[2]}); "
        f"{within} of {len(got)} metrics within +/-{precision:.0%}",
        f"pairs for +/-{precision:.0%}: about {statistics.median(n for _, n, _ in got):.0f} for the median metric, "
        f"{widest[1]} for the widest",
    ]


def render(comparison_id: str, a: Arm, b: Arm, rows: Sequence[dict[str, Any]], script: str = "") -> str:
    """The page's HTML (``script``: the Vega bundle to inline; empty, the plot is left out)."""
    stats = [r for r in rows if r.get("metric_kind") != "deterministic"]
    facts = [r for r in rows if r.get("metric_kind") == "deterministic"]
    first = rows[0] if rows else {}
    head = (
        f"<h1>Comparison {html.escape(comparison_id)}</h1>"
        f"<p>A: <b>{html.escape(a.label)}</b> (build {html.escape(str(first.get('build_a') or ''))}); "
        f"B: <b>{html.escape(b.label)}</b> (build {html.escape(str(first.get('build_b') or ''))}). "
        f"Scale {html.escape(str(first.get('scale')))}, host {html.escape(str(first.get('host_name')))}, "
        f"{first.get('pairs_planned')} pairs run, {first.get('a_first')} of the usable ones A first, seed {first.get('seed')}.</p>"
    )
    dropped = json.loads(first.get("dropped") or "{}")
    if dropped:
        head += "<p>Dropped pairs: " + "; ".join(f"{html.escape(k)}: {html.escape(v)}" for k, v in dropped.items()) + "</p>"
    cells = "".join(
        f"<tr><td>{html.escape(r['suite'])}</td><td>{html.escape(r['workload'])}</td><td>{html.escape(r['variant'])}</td>"
        f"<td>{html.escape(r['metric'])} ({html.escape(r['unit'])})</td><td>{_num(r.get('estimate'))}</td>"
        f"<td>[{_num(r.get('interval_low'))}, {_num(r.get('interval_high'))}] at {_num(r.get('level'), '.3f')}</td>"
        f"<td>{_num(_half_width(r), '.1%')}</td>"
        f"<td>{_num(r.get('margin'), '.1%')}</td><td>{r.get('pairs_used')}</td>"
        f"<td style='color:{COLOURS.get(r['verdict'], '#000')}'>{html.escape(r['verdict'])}"
        f"{' (about ' + str(r['pairs_needed']) + ' pairs)' if r.get('pairs_needed') else ''}</td></tr>"
        for r in stats
    )
    fact_rows = "".join(
        f"<tr><td>{html.escape(r['workload'])} · {html.escape(r['variant'])} · {html.escape(r['metric'])}</td>"
        f"<td>{html.escape(r['verdict'])}</td><td>{html.escape(str(r.get('fact') or ''))}</td></tr>"
        for r in facts
    )
    spec = forest_chart(stats)
    plot = (
        f"<div id='forest'></div><script>{script}</script><script>vegaEmbed('#forest', {json.dumps(spec)}, {{actions: false}});</script>"
        if script and spec
        else ""
    )
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>jsonbench comparison {html.escape(comparison_id)}</title>"
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}</style>"
        f"</head><body>{head}{plot}"
        "<h2>Timed and sampled metrics (B / A)</h2><table><tr><th>suite</th><th>workload</th><th>variant</th><th>metric</th>"
        f"<th>estimate</th><th>interval</th><th>+/-</th><th>margin</th><th>pairs</th><th>verdict</th></tr>{cells}</table>"
        f"{''.join(f'<p>{html.escape(line)}</p>' for line in precision_lines(list(stats), PRECISION))}"
        f"<h2>Deterministic facts</h2><table><tr><th>fact</th><th>verdict</th><th>A and B</th></tr>{fact_rows}</table>"
        "</body></html>"
    )


def write_page(results_dir: str | Path, comparison_id: str, a: Arm, b: Arm, rows: Sequence[dict[str, Any]]) -> Path:
    """Write the page under ``<results>/report/`` and return its path (the plot is left out if Vega cannot be bundled)."""
    from jsonbench.report import vendor

    folder = Path(results_dir) / "report"
    try:
        script = vendor.bundle(vendor.cache_dir(folder / ".vendor"))
    except Exception:  # the table is the page's substance: a missing bundle leaves the plot out, not the page
        script = ""
    path = folder / f"compare-{run_key(comparison_id)}.html"
    write_text_atomic(path, render(comparison_id, a, b, rows, script), "comparison page")
    return path
