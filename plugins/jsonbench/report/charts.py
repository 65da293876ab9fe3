"""The report's charts: Vega-Lite specifications built with Altair (rendered in the page by Vega, see
:mod:`jsonbench.report.vendor`).

* :func:`findings_chart`: every finding of a suite as observed / seed on one log axis (1 = the seed's
  value), the band applied at each scale shaded, one point per engine and scale;
* :func:`figures_chart`: every seed figure as measured / seed, the seed scaled to the run's size for
  figures that grow with it (``scales_with``), so smoke, laptop and full compare on one axis;
* :func:`trend_chart`: one headline metric over the hardware label's history, a panel per engine, a
  line per workload/variant, the change points drift found marked as dashed rules.

Each returns a plain ``dict`` (the Vega-Lite JSON); data are inlined as values, so a spec stands
alone. Tooltips carry the run id, the engine build and the samples.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import altair as alt
from altair.utils.schemapi import debug_mode

from jsonbench.dataset.measurement import finite_float
from jsonbench.report.model import Column, FigureRow, SuiteScore, figure_label, natural_key

#: Colour per engine id, stable across charts (Tableau 10 without grey).
PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f"]
WIDTH = 560
P = ParamSpec("P")
R = TypeVar("R")


def fmt(v: float | None) -> str:
    """A compact human number (1.2k, 3.4M, 0.012)."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "n/a"
    a = abs(v)
    for div, suf in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if a >= div:
            return f"{v / div:.3g}{suf}"
    if a == 0:
        return "0"
    return f"{v:.3g}"


def _samples(samples: list[float]) -> str:
    shown = ", ".join(fmt(s) for s in samples[:12])
    return shown + (f" (+{len(samples) - 12})" if len(samples) > 12 else "")


def engine_colors(engine_ids: list[str]) -> alt.Scale:
    return alt.Scale(domain=engine_ids, range=[PALETTE[i % len(PALETTE)] for i in range(len(engine_ids))])


def _built_without_checks(fn: Callable[P, R]) -> Callable[P, R]:
    """Build with Altair's per-object validation off (it validates every object as it is made, a
    second or more per page); tests validate the finished specs against the Vega-Lite schema."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with debug_mode(False):
            return fn(*args, **kwargs)

    return wrapper


class _Data:
    """The data of one chart, kept out of Altair's objects (which copy their data at every layer and
    facet) and put into the spec's top-level ``datasets`` at the end; referenced by name."""

    def __init__(self) -> None:
        self.sets: dict[str, list[dict[str, Any]]] = {}

    def __call__(self, rows: list[dict[str, Any]]) -> alt.Data:
        name = f"d{len(self.sets)}"
        self.sets[name] = rows
        return alt.Data(name=name)

    def spec(self, chart: alt.TopLevelMixin) -> dict[str, Any]:
        out = chart.to_dict(validate=False)
        out["datasets"] = {**out.get("datasets", {}), **self.sets}
        return out


def _one_rule(data: _Data, x_scale: alt.Scale) -> alt.Chart:
    """The dashed rule at 1 on a ratio chart's log axis: where observed equals the seed's figure."""
    return alt.Chart(data([{"x": 1}])).mark_rule(color="#333", strokeDash=[3, 3]).encode(x=alt.X("x:Q", scale=x_scale))


def _lead_tooltips(label: str) -> list[alt.Tooltip]:
    """What every ratio point's tooltip opens with: its row (a finding or a figure), then engine, version and scale."""
    return [alt.Tooltip(f"{label}:N"), alt.Tooltip("engine:N"), alt.Tooltip("version:N"), alt.Tooltip("scale:N")]


def _engine_points(
    data: alt.Data,
    engines: list[str],
    *,
    size: int,
    opacity: float,
    y: alt.Y,
    x: alt.X,
    shape: alt.Shape,
    more: dict[str, Any],
    tooltip: list[alt.Tooltip],
) -> alt.Chart:
    """A ratio chart's points, coloured by engine the same way in both ratio charts (findings and figures);
    ``more`` holds the channels only one of them sets (the findings' offset per scale)."""
    return (
        alt.Chart(data)
        .mark_point(size=size, filled=True, opacity=opacity)
        .encode(
            y=y,
            x=x,
            color=alt.Color("engine:N", scale=engine_colors(engines), title="engine"),
            shape=shape,
            **more,
            tooltip=tooltip,
        )
    )


def _point(c: Column, first: dict[str, Any], shown: dict[str, Any], last: dict[str, Any] | None = None) -> dict[str, Any]:
    """One ratio point's data: ``first`` (its row, and where it leads with it the scale), the column's engine,
    version and scale, ``shown``, the column's run and build, then ``last``. The keys keep the order the
    page has always inlined them in."""
    point = {**first, "engine": c.engine_id, "version": c.engine_version}
    point.setdefault("scale", c.scale)
    return {**point, **shown, "run": c.run_id, "build": c.engine_build, **(last or {})}


def _findings_points(score: SuiteScore) -> tuple[list[dict[str, Any]], dict[tuple[str, str], dict[str, Any]], list[str]]:
    """The findings chart's data: a point per finding, engine and scale observed (its ratio to the seed), the band
    per finding and scale (open sides None), and the findings with no point."""
    points: list[dict[str, Any]] = []
    bands: dict[tuple[str, str], dict[str, Any]] = {}
    skipped: list[str] = []
    for r in score.rows:
        drawn = False
        for c in score.columns:
            cell = r.cells.get(c.key)
            if cell is None or r.seed_value is None or r.seed_value <= 0:
                continue
            lo = cell.band_min / r.seed_value if cell.band_min is not None and cell.band_min > 0 else None
            hi = cell.band_max / r.seed_value if cell.band_max is not None and cell.band_max > 0 else None
            if cell.verdict != "not_applicable" and (lo is not None or hi is not None):
                bands.setdefault(
                    (r.finding, c.scale),
                    {"finding": r.finding, "scale": c.scale, "lo": lo, "hi": hi, "band": f"[{fmt(cell.band_min)}, {fmt(cell.band_max)}]"},
                )
            if cell.observed is None or cell.observed <= 0:
                continue
            drawn = True
            points.append(
                _point(
                    c,
                    {"finding": r.finding, "scale": c.scale},
                    {
                        "ratio": cell.observed / r.seed_value,
                        "observed": fmt(cell.observed),
                        "seed": fmt(r.seed_value),
                        "band": f"[{fmt(cell.band_min)}, {fmt(cell.band_max)}] at {c.scale}",
                        "verdict": cell.verdict,
                    },
                    {"inputs": "; ".join(f"{k} = {fmt(finite_float(x))}" for k, x in list(cell.inputs.items())[:6])},
                )
            )
        if not drawn:
            skipped.append(r.finding)
    return points, bands, skipped


@_built_without_checks
def findings_chart(score: SuiteScore) -> tuple[dict[str, Any] | None, list[str]]:
    """Observed / seed per finding, bands shaded; returns the spec and the findings not drawable on a ratio axis."""
    data = _Data()
    points, bands, skipped = _findings_points(score)
    order = [r.finding for r in score.rows]
    engines = sorted({c.engine_id for c in score.columns}, key=lambda e: [c.engine_id for c in score.columns].index(e))
    scales = list(dict.fromkeys(c.scale for c in score.columns))
    if not points:
        return None, skipped
    vals = [p["ratio"] for p in points] + [b[k] for b in bands.values() for k in ("lo", "hi") if b[k]]
    dom = [min(vals + [1.0]) / 1.5, max(vals + [1.0]) * 1.5]
    for b in bands.values():  # an open side of a band reaches the edge of the axis
        b["lo"] = b["lo"] or dom[0]
        b["hi"] = b["hi"] or dom[1]
    y = alt.Y("finding:N", sort=order, title=None, axis=alt.Axis(labelLimit=320))
    x_scale = alt.Scale(type="log", domain=dom)
    offset = alt.YOffset("scale:N", sort=scales, title="scale") if len(scales) > 1 else alt.YOffset()
    band = (
        alt.Chart(data(list(bands.values())))
        .mark_bar(color="#c8e6c9", stroke="#81c784", height={"band": 0.8} if len(scales) == 1 else 6)
        .encode(
            y=y,
            x=alt.X("lo:Q", scale=x_scale, title="observed / seed (1 = the seed's figure; log scale)"),
            x2="hi:Q",
            **({"yOffset": offset} if len(scales) > 1 else {}),
            tooltip=[alt.Tooltip("finding:N"), alt.Tooltip("scale:N", title="band at scale"), alt.Tooltip("band:N")],
        )
    )
    one = _one_rule(data, x_scale)
    shapes = alt.Scale(domain=["pass", "fail", "not_applicable"], range=["circle", "cross", "square"])
    pts = _engine_points(
        data(points),
        engines,
        size=70,
        opacity=0.9,
        y=y,
        x=alt.X("ratio:Q", scale=x_scale),
        shape=alt.Shape("verdict:N", scale=shapes, title="verdict"),
        more={"yOffset": offset} if len(scales) > 1 else {},
        tooltip=[
            *_lead_tooltips("finding"),
            alt.Tooltip("observed:N"),
            alt.Tooltip("seed:N"),
            alt.Tooltip("band:N"),
            alt.Tooltip("verdict:N"),
            alt.Tooltip("run:N", title="run id"),
            alt.Tooltip("build:N"),
            alt.Tooltip("inputs:N"),
        ],
    )
    rows = len(order) * max(len(scales), 1)
    chart = alt.layer(band, one, pts).properties(
        width=WIDTH, height=max(60, 18 * rows), title=f"{score.suite}: findings, observed / seed (band shaded)"
    )
    return data.spec(chart), skipped


def _figure_points(rows: list[FigureRow], cols: list[Column]) -> tuple[list[dict[str, Any]], list[str]]:
    """The figures chart's data: a point per figure and column with a ratio, and the figures with none."""
    points: list[dict[str, Any]] = []
    skipped: list[str] = []
    for r in rows:
        drawn = False
        for c in cols:
            cell = r.cells.get(c.key)
            if cell is None or cell.ratio is None:
                continue
            drawn = True
            points.append(
                _point(
                    c,
                    {"figure": r.label},
                    {
                        "ratio": cell.ratio,
                        "measured": f"{fmt(cell.value)} {r.unit}",
                        "seed": f"{fmt(r.seed_value)} {r.unit}",
                        "seed_scaled": f"{fmt(cell.seed_scaled)} {r.unit}" + (f" (scaled by {r.scales_with})" if r.scales_with else ""),
                        "samples": _samples(cell.samples),
                    },
                )
            )
        if not drawn:
            skipped.append(r.label)
    return points, skipped


@_built_without_checks
def figures_chart(suite: str, rows: list[FigureRow], cols: list[Column]) -> tuple[dict[str, Any] | None, list[str]]:
    """Measured / seed per seed figure (the seed scaled to the run where the figure grows with it)."""
    data = _Data()
    points, skipped = _figure_points(rows, cols)
    order = [r.label for r in rows]
    engines = list(dict.fromkeys(c.engine_id for c in cols))
    scales = list(dict.fromkeys(c.scale for c in cols))
    if not points:
        return None, skipped
    vals = [p["ratio"] for p in points]
    dom = [min(vals + [0.5]) / 1.5, max(vals + [2.0]) * 1.5]
    x_scale = alt.Scale(type="log", domain=dom)
    y = alt.Y("figure:N", sort=order, title=None, axis=alt.Axis(labelLimit=340))
    within = alt.Chart(data([{"lo": 0.5, "hi": 2.0}])).mark_rect(color="#eeeeee").encode(x=alt.X("lo:Q", scale=x_scale), x2="hi:Q")
    one = _one_rule(data, x_scale)
    scale_shapes = alt.Scale(domain=scales, range=["circle", "diamond", "triangle-up", "square"][: len(scales)])
    pts = _engine_points(
        data(points),
        engines,
        size=60,
        opacity=0.85,
        y=y,
        x=alt.X("ratio:Q", scale=x_scale, title="measured / seed (1 = the seed's figure; grey: within 2x; log scale)"),
        shape=alt.Shape("scale:N", scale=scale_shapes, title="scale"),
        more={},
        tooltip=[
            *_lead_tooltips("figure"),
            alt.Tooltip("measured:N"),
            alt.Tooltip("seed:N"),
            alt.Tooltip("seed_scaled:N", title="seed at this size"),
            alt.Tooltip("ratio:Q", format=".3~g"),
            alt.Tooltip("samples:N"),
            alt.Tooltip("run:N", title="run id"),
            alt.Tooltip("build:N"),
        ],
    )
    chart = alt.layer(within, one, pts).properties(
        width=WIDTH, height=max(60, 16 * len(order)), title=f"{suite}: seed figures, measured / seed"
    )
    return data.spec(chart), skipped


def _trend_points(h: Any, metric: str, unit: str, drifted: set[tuple[str, str, str, str]]) -> list[dict[str, Any]]:
    """The trend chart's points: one per run and workload/variant with a value, ringed where it drifted tonight."""
    latest = h.groupby("engine_id")["logical_date"].max().to_dict()
    rows: list[dict[str, Any]] = []
    for r in h.itertuples(index=False):
        v = finite_float(r.value)
        if v is None:
            continue
        series = figure_label(r.workload, r.variant)
        samples = [float(s) for s in (r.samples if r.samples is not None else []) if finite_float(s) is not None]
        rows.append(
            {
                "kind": "point",
                "engine": r.engine_id,
                "series": series,
                "date": r.logical_date.isoformat(),
                "value": v,
                "shown": f"{fmt(v)} {unit}",
                "run": r.run_id,
                "build": r.engine_build,
                "version": r.engine_version,
                "samples": _samples(samples),
                "spread": fmt(finite_float(r.spread)),
                "drift": "drift tonight"
                if (r.engine_id, r.workload, r.variant, metric) in drifted and r.logical_date == latest.get(r.engine_id)
                else "",
            }
        )
    return rows


def _change_rules(h: Any, metric: str, engines: list[str], cps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The trend chart's change points of ``metric`` on its engines, dated by the run they start at when they carry no date."""
    rows: list[dict[str, Any]] = []
    for cp in cps:
        if cp.get("metric") != metric or cp.get("engine_id") not in engines:
            continue
        date = cp.get("logical_date")
        if not date:
            match = h[h["run_id"] == cp.get("run_id")]
            date = match["logical_date"].iloc[0].isoformat() if not match.empty else None
        if not date:
            continue
        change = finite_float(cp.get("relative_change"))
        rows.append(
            {
                "kind": "change",
                "engine": cp["engine_id"],
                "series": figure_label(str(cp.get("workload")), cp.get("variant")),
                "date": str(date),
                "run": str(cp.get("run_id")),
                "before": fmt(finite_float(cp.get("metric_before"))),
                "after": fmt(finite_float(cp.get("metric_after"))),
                "change": f"{change * 100:+.0f} %" if change is not None else "n/a",
                "pvalue": fmt(finite_float(cp.get("pvalue"))),
            }
        )
    return rows


@_built_without_checks
def trend_chart(
    suite: str, metric: str, hist: Any, cps: list[dict[str, Any]], drifted: set[tuple[str, str, str, str]]
) -> dict[str, Any] | None:
    """``metric`` over runs: a panel per engine, a line per workload/variant; change points as dashed red rules.

    ``hist`` is the history frame (measurement rows of one label, scale and suite); ``drifted`` the
    (engine, workload, variant, metric) whose drift verdict tonight is ``drift``.
    """
    h = hist[(hist["metric"] == metric) & (hist["status"] == "ok")]
    if h.empty:
        return None
    unit = str(h["unit"].iloc[0])
    engines = sorted(h["engine_id"].unique(), key=natural_key)
    rows = _trend_points(h, metric, unit, drifted)
    if not rows:
        return None
    rows += _change_rules(h, metric, engines, cps)
    positive = [r["value"] for r in rows if r["kind"] == "point" and r["value"] > 0]
    log = bool(positive) and len(positive) == sum(1 for r in rows if r["kind"] == "point") and max(positive) / min(positive) > 100
    width = max(180, min(320, 900 // max(len(engines), 1)))
    text = json.dumps(_trend_template(log))
    for placeholder, value in (
        (_T_TITLE, f"{suite}: {metric} over runs" + (" (log scale)" if log else "")),
        (_T_UNIT, unit),
        (_T_METRIC, metric),
    ):
        text = text.replace(json.dumps(placeholder), json.dumps(value))
    text = text.replace(json.dumps([_T_ENGINES]), json.dumps(engines)).replace(str(_T_WIDTH), str(width))
    spec: dict[str, Any] = json.loads(text)
    spec["data"] = {"name": "d0"}
    spec["datasets"] = {"d0": rows}
    return spec


#: Placeholders of the trend chart's template (filled per metric as JSON text).
_T_TITLE, _T_UNIT, _T_METRIC, _T_ENGINES, _T_WIDTH = "@@title@@", "@@unit@@", "@@metric@@", "@@engines@@", 987654


@functools.lru_cache(maxsize=2)
def _trend_template(log: bool) -> dict[str, Any]:
    """The trend chart as Altair builds it, with placeholders: built once per scale type, since building
    a layered, faceted chart with Altair costs a quarter of a second and the page has a dozen or more."""
    with debug_mode(False):
        highlight = alt.selection_point(fields=["series"], bind="legend")
        base = alt.Chart().encode(x=alt.X("date:T", title=None, axis=alt.Axis(format="%m-%d", labelAngle=0, tickCount=6)))
        y = alt.Y("value:Q", title=_T_UNIT, scale=alt.Scale(type="log" if log else "linear", zero=False))
        series_color = alt.Color("series:N", title="workload / variant", legend=alt.Legend(symbolLimit=30, labelLimit=260))
        line = (
            base.transform_filter(alt.datum.kind == "point")
            .mark_line(strokeWidth=1.5)
            .encode(y=y, color=series_color, opacity=alt.condition(highlight, alt.value(1.0), alt.value(0.15)))
            .add_params(highlight)
        )
        points = (
            base.transform_filter(alt.datum.kind == "point")
            .mark_circle(size=36)
            .encode(
                y=y,
                color=series_color,
                opacity=alt.condition(highlight, alt.value(1.0), alt.value(0.15)),
                tooltip=[
                    alt.Tooltip("series:N", title="workload / variant"),
                    alt.Tooltip("shown:N", title=_T_METRIC),
                    alt.Tooltip("spread:N"),
                    alt.Tooltip("samples:N"),
                    alt.Tooltip("date:T", format="%Y-%m-%d %H:%M", title="logical date"),
                    alt.Tooltip("run:N", title="run id"),
                    alt.Tooltip("version:N"),
                    alt.Tooltip("build:N"),
                    alt.Tooltip("drift:N"),
                ],
            )
        )
        ring = (
            base.transform_filter((alt.datum.kind == "point") & (alt.datum.drift != ""))
            .mark_point(size=160, color="#d50000", strokeWidth=2)
            .encode(y=y)
        )
        change = (
            base.transform_filter(alt.datum.kind == "change")
            .mark_rule(color="#d50000", strokeDash=[5, 3], strokeWidth=1.5)
            .encode(
                tooltip=[
                    alt.Tooltip("series:N", title="change point of"),
                    alt.Tooltip("run:N", title="starts at run"),
                    alt.Tooltip("date:T", format="%Y-%m-%d %H:%M", title="logical date"),
                    alt.Tooltip("before:N"),
                    alt.Tooltip("after:N"),
                    alt.Tooltip("change:N", title="relative change"),
                    alt.Tooltip("pvalue:N", title="p-value"),
                ]
            )
        )
        layered = alt.layer(line, points, ring, change, data=alt.Data(name="d0")).properties(width=_T_WIDTH, height=170)
        chart = layered.facet(
            column=alt.Column("engine:N", sort=[_T_ENGINES], title=None, header=alt.Header(labelFontWeight="bold"))
        ).properties(title=_T_TITLE)
        return chart.to_dict(validate=False)
