"""The JavaScript that renders the report's charts, inlined into the page so it opens with no network.

Vega, Vega-Lite and Vega-Embed come as one bundle from ``vl-convert-python`` (``javascript_bundle``),
which ships them inside its wheel: nothing is fetched from a CDN, at build time or when the page
opens. The Vega-Lite version is the one Altair writes its specifications for. Bundling takes a few
seconds, so the bundle is cached by vl-convert and Vega-Lite version in ``$JSONBENCH_CACHE_DIR``, else
``~/.cache/jsonbench``, else (not writable) ``<results>/report/.vendor/``.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

from jsonbench.dataset.fsio import write_text_atomic

log = logging.getLogger(__name__)

# vl-convert's default snippet, spelled out: its stub marks ``snippet`` required though it defaults to this one (same bytes).
_SNIPPET = "window.vegaEmbed=vegaEmbed; window.vega=vega; window.vegaLite=vegaLite;"


def vegalite_version() -> str:
    """The ``major.minor`` Vega-Lite version of Altair's schema (``6.4`` for Altair 6.3)."""
    import altair as alt

    major, minor = alt.SCHEMA_VERSION.lstrip("v").split(".")[:2]
    return f"{major}.{minor}"


def cache_dir(fallback: Path) -> Path:
    """Where the bundle is cached: ``$JSONBENCH_CACHE_DIR``, else ``~/.cache/jsonbench``, else ``fallback``."""
    for candidate in (os.environ.get("JSONBENCH_CACHE_DIR"), os.path.join(os.path.expanduser("~"), ".cache", "jsonbench")):
        if not candidate:
            continue
        path = Path(candidate)
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(path, os.W_OK):
            return path
    return fallback


def bundle(cache_dir: Path | None = None) -> str:
    """The Vega + Vega-Lite + Vega-Embed bundle (defines ``vegaEmbed``, ``vegaLite`` and ``vega`` on ``window``)."""
    import vl_convert as vlc

    vl = vegalite_version()
    version = getattr(vlc, "__version__", None) or _dist_version("vl-convert-python")
    cached = cache_dir / f"vega-bundle-vlc{version}-vl{vl}.js" if cache_dir is not None else None
    if cached is not None and cached.is_file():
        return cached.read_text(encoding="utf-8")
    if vl not in vlc.get_vegalite_versions():
        raise RuntimeError(
            f"vl-convert-python {version} has no Vega-Lite {vl} (it has {vlc.get_vegalite_versions()}); pin versions that match"
        )
    js = vlc.javascript_bundle(_SNIPPET, vl_version=vl)
    if cached is not None:
        write_text_atomic(cached, js)
    return js


def _dist_version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


#: A resource the page would fetch from the network: a script, stylesheet, image or frame by URL, a CSS ``url()`` or
#: ``@import`` of one. The report must hold none (it opens offline); ``jsonbench-dev report-bench`` and the tests check it.
EXTERNAL = re.compile(
    r"""<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)\s*=\s*['"]?\s*(?:https?:)?//|url\(\s*['"]?(?:https?:)?//|@import\s+['"]?(?:https?:)?//""",
    re.I,
)


def external_references(html: str) -> list[str]:
    """Resources the page would fetch from the network (links a reader clicks are not resources)."""
    return [m.group(0) for m in EXTERNAL.finditer(html)]
