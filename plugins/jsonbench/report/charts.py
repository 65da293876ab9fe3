"""Small, dependency-free SVG charts for the static report (no JavaScript, no network).

* :func:`bar_chart`: grouped bars (categories x series), linear or log scale;
* :func:`line_chart`: one line per series over ordered x labels (trends across runs);
* :func:`band_chart`: one row per finding, the tolerance band shaded, the seed and each engine's
  observed value marked, on a log or linear axis.

Every function returns an ``<svg>`` string with a ``<title>`` (for screen readers and tests).
"""

from __future__ import annotations

import math
from html import escape
from typing import Sequence

PALETTE = ["#9e9e9e", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22"]
FONT = 'font-family="system-ui, sans-serif" font-size="11"'


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


class _Scale:
    """Maps values to pixel offsets along [0, length], linear from 0 or logarithmic."""

    def __init__(self, values: Sequence[float], length: float, log: bool) -> None:
        pos = [v for v in values if v is not None and math.isfinite(v) and (v > 0 or not log)]
        self.log = log and bool(pos)
        self.length = length
        if self.log:
            lo, hi = min(pos), max(pos)
            self.lo = 10 ** math.floor(math.log10(lo))
            self.hi = 10 ** math.ceil(math.log10(hi)) if hi > lo else self.lo * 10
            if self.hi <= self.lo:
                self.hi = self.lo * 10
        else:
            self.lo = min(0.0, *pos) if pos else 0.0
            self.hi = max(pos) * 1.1 if pos and max(pos) > 0 else 1.0

    def __call__(self, v: float) -> float:
        if self.log:
            v = max(v, self.lo)
            return (math.log10(v) - math.log10(self.lo)) / (math.log10(self.hi) - math.log10(self.lo)) * self.length
        return (v - self.lo) / (self.hi - self.lo) * self.length

    def ticks(self) -> list[float]:
        if self.log:
            return [10 ** e for e in range(round(math.log10(self.lo)), round(math.log10(self.hi)) + 1)]
        step = 10 ** math.floor(math.log10(self.hi - self.lo or 1))
        while (self.hi - self.lo) / step > 6:
            step *= 2
        first = math.ceil(self.lo / step) * step
        return [first + i * step for i in range(int((self.hi - first) / step) + 1)]


def wants_log(values: Sequence[float | None]) -> bool:
    """Log scale when the positive values span more than two orders of magnitude."""
    pos = [v for v in values if v is not None and math.isfinite(v) and v > 0]
    return bool(pos) and max(pos) / min(pos) > 100


def _legend(series: Sequence[str], x: float, y: float, colors: Sequence[str]) -> str:
    out = []
    for i, name in enumerate(series):
        out.append(f'<rect x="{x}" y="{y + i * 15}" width="10" height="10" fill="{colors[i % len(colors)]}"/>'
                   f'<text x="{x + 14}" y="{y + i * 15 + 9}" {FONT}>{escape(name)}</text>')
    return "".join(out)


def bar_chart(title: str, categories: Sequence[str], series: dict[str, Sequence[float | None]], unit: str = "", log: bool | None = None,
              colors: Sequence[str] | None = None, width: int = 580, height: int = 240) -> str:
    """Grouped vertical bars: ``series[name][i]`` is the bar of ``categories[i]``; None draws nothing."""
    colors = list(colors or PALETTE)
    names = list(series)
    all_vals = [v for vals in series.values() for v in vals if v is not None]
    log = wants_log(all_vals) if log is None else log
    left, right, top, bottom = 56, 175, 24, 40
    # Long or many category labels are drawn slanted, with room below the axis for them.
    slant = bool(categories) and max(len(c) for c in categories) * 6.2 > (width - left - right) / max(len(categories), 1)
    if slant:
        bottom = 30 + int(max(len(c) for c in categories) * 4.6)
        height += bottom - 40
        left += min(90, int(len(categories[0]) * 5.2))  # the first slanted label reaches left of the plot
        width += min(90, int(len(categories[0]) * 5.2))
    pw, ph = width - left - right, height - top - bottom
    sc = _Scale(all_vals, ph, log)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">',
             f"<title>{escape(title)}</title>", f'<text x="{left}" y="14" {FONT} font-weight="bold">{escape(title)}{" (log scale)" if sc.log else ""}</text>']
    for t in sc.ticks():
        y = top + ph - sc(t)
        parts.append(f'<line x1="{left}" x2="{left + pw}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e0e0e0"/>'
                     f'<text x="{left - 4}" y="{y + 4:.1f}" {FONT} text-anchor="end">{fmt(t)}</text>')
    n = max(len(categories), 1)
    group = pw / n
    bw = group * 0.8 / max(len(names), 1)
    for ci, cat in enumerate(categories):
        gx0 = left + ci * group + group * 0.1
        for si, name in enumerate(names):
            v = series[name][ci] if ci < len(series[name]) else None
            if v is None or not math.isfinite(v):
                continue
            h = max(sc(v), 1.0) if (v > 0 or not sc.log) else 1.0
            x = gx0 + si * bw
            parts.append(f'<rect x="{x:.1f}" y="{top + ph - h:.1f}" width="{bw - 1:.1f}" height="{h:.1f}" fill="{colors[si % len(colors)]}">'
                         f"<title>{escape(name)} {escape(cat)}: {fmt(v)} {escape(unit)}</title></rect>")
        cx = left + ci * group + group / 2
        if slant:
            parts.append(f'<text x="{cx:.1f}" y="{top + ph + 12}" {FONT} text-anchor="end" transform="rotate(-35 {cx:.1f} {top + ph + 12})">{escape(cat)}</text>')
        else:
            parts.append(f'<text x="{cx:.1f}" y="{top + ph + 14}" {FONT} text-anchor="middle">{escape(cat)}</text>')
    parts.append(f'<line x1="{left}" x2="{left + pw}" y1="{top + ph}" y2="{top + ph}" stroke="#555"/>')
    parts.append(f'<text x="{left - 44}" y="{top + ph / 2}" {FONT} transform="rotate(-90 {left - 44} {top + ph / 2})" text-anchor="middle">{escape(unit)}</text>')
    parts.append(_legend(names, left + pw + 10, top, colors))
    parts.append("</svg>")
    return "".join(parts)


def line_chart(title: str, xlabels: Sequence[str], series: dict[str, Sequence[float | None]], unit: str = "", log: bool | None = None,
               width: int = 440, height: int = 200) -> str:
    """One polyline per series over ``xlabels`` (missing points break nothing, they are skipped)."""
    names = list(series)
    all_vals = [v for vals in series.values() for v in vals if v is not None]
    log = wants_log(all_vals) if log is None else log
    left, right, top, bottom = 56, 120, 24, 34
    pw, ph = width - left - right, height - top - bottom
    sc = _Scale(all_vals, ph, log)
    n = len(xlabels)
    step = pw / max(n - 1, 1)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">',
             f"<title>{escape(title)}</title>", f'<text x="{left}" y="14" {FONT} font-weight="bold">{escape(title)}{" (log)" if sc.log else ""}</text>']
    for t in sc.ticks():
        y = top + ph - sc(t)
        parts.append(f'<line x1="{left}" x2="{left + pw}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e0e0e0"/>'
                     f'<text x="{left - 4}" y="{y + 4:.1f}" {FONT} text-anchor="end">{fmt(t)}</text>')
    for si, name in enumerate(names):
        color = PALETTE[(si + 1) % len(PALETTE)]
        pts = [(left + i * step, top + ph - sc(v)) for i, v in enumerate(series[name]) if v is not None and math.isfinite(v)]
        if len(pts) > 1:
            parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.5" points="{" ".join(f"{x:.1f},{y:.1f}" for x, y in pts)}"/>')
        for (x, y), v in zip(pts, [v for v in series[name] if v is not None and math.isfinite(v)]):
            parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="{color}"><title>{escape(name)}: {fmt(v)} {escape(unit)}</title></circle>')
    # At most about three labels fit under a small chart: first, last, and evenly spaced between.
    shown = {0, n - 1} | ({round(i * (n - 1) / 2) for i in range(3)} if n > 4 else set(range(n)))
    for i, lab in enumerate(xlabels):
        if i in shown:
            parts.append(f'<text x="{left + i * step:.1f}" y="{top + ph + 14}" {FONT} text-anchor="middle">{escape(lab)}</text>')
    parts.append(f'<line x1="{left}" x2="{left + pw}" y1="{top + ph}" y2="{top + ph}" stroke="#555"/>')
    parts.append(_legend(names, left + pw + 10, top, [PALETTE[(i + 1) % len(PALETTE)] for i in range(len(names))]))
    parts.append("</svg>")
    return "".join(parts)


def band_chart(title: str, rows: Sequence[dict], engines: Sequence[str], width: int = 760) -> str:
    """Findings: per row ``{"label", "band_min", "band_max", "seed", "observed": {engine: value}, "log": bool}``.

    Each row gets its own axis (findings have different units): the band is a shaded bar, the
    seed a black diamond, each engine a colored dot; a dot outside the band is drawn with a red ring.
    """
    rh, left, right, top = 34, 250, 170, 24
    pw = width - left - right
    height = top + rh * len(rows) + 20
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">',
             f"<title>{escape(title)}</title>", f'<text x="8" y="14" {FONT} font-weight="bold">{escape(title)}</text>']
    for i, r in enumerate(rows):
        y = top + i * rh + rh / 2
        obs = [v for v in r["observed"].values() if v is not None and math.isfinite(v)]
        vals = [v for v in (r.get("band_min"), r.get("band_max"), r.get("seed"), *obs) if v is not None]
        log = bool(r.get("log")) and all(v > 0 for v in vals if v is not None) and bool(vals)
        pad = [v for v in vals if v is not None]
        sc = _Scale(pad + ([max(pad) * 1.5] if pad and not log else []), pw, log)
        parts.append(f'<text x="{left - 8}" y="{y + 4:.1f}" {FONT} text-anchor="end">{escape(r["label"])}</text>')
        parts.append(f'<line x1="{left}" x2="{left + pw}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ccc"/>')
        lo = r.get("band_min")
        hi = r.get("band_max")
        x0 = left + (sc(lo) if lo is not None else 0)
        x1 = left + (sc(hi) if hi is not None else pw)
        parts.append(f'<rect x="{x0:.1f}" y="{y - 7:.1f}" width="{max(x1 - x0, 2):.1f}" height="14" fill="#c8e6c9" stroke="#81c784">'
                     f"<title>band [{fmt(lo)}, {fmt(hi)}]</title></rect>")
        for t in (sc.lo, sc.hi):
            parts.append(f'<text x="{left + sc(t):.1f}" y="{y + 17:.1f}" {FONT} text-anchor="middle" fill="#777">{fmt(t)}</text>')
        if r.get("seed") is not None:
            sx = left + sc(r["seed"])
            parts.append(f'<path d="M{sx:.1f},{y - 6:.1f} l5,6 l-5,6 l-5,-6 z" fill="#000"><title>seed {fmt(r["seed"])}</title></path>')
        for ei, eng in enumerate(engines):
            v = r["observed"].get(eng)
            if v is None or not math.isfinite(v):
                continue
            ex = left + sc(v)
            inside = (lo is None or v >= lo) and (hi is None or v <= hi)
            ring = "" if inside else ' stroke="#d50000" stroke-width="2"'
            parts.append(f'<circle cx="{ex:.1f}" cy="{y - 3 + ei * 3:.1f}" r="4" fill="{PALETTE[(ei + 1) % len(PALETTE)]}"{ring}><title>{escape(eng)}: {fmt(v)}</title></circle>')
    parts.append(_legend(["seed (diamond)", *engines], left + pw + 10, top, ["#000", *[PALETTE[(i + 1) % len(PALETTE)] for i in range(len(engines))]]))
    parts.append("</svg>")
    return "".join(parts)
