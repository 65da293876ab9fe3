"""The report opened in a real browser (Debian's chromium, installed by ./bin/setup --dev), with no network.

The page is built from checked runs (tests/unit/report_synth.py), opened headless in a network
namespace without any network when ``unshare --net`` is allowed (so a chart that needed a CDN
would not draw), and checked after its JavaScript ran: the scorecard is the first section and the
first thing on screen (measured in the laid-out page: where it is in the first 1400x1000 screen),
every chart placeholder holds an SVG drawn by Vega, none failed. A screenshot is kept
(``JSONBENCH_SCREENSHOT_DIR``, default the test's temporary folder) for a person to look at; no
assertion rests on its size. Nothing here asserts a time.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from jsonbench.report import build_report
from tests.browser import CHROMIUM, FLAGS
from tests.unit.report_synth import build_once

if CHROMIUM is None:  # under CI this skip fails the run (tests/conftest.py)
    pytestmark = pytest.mark.skip(reason="chromium not installed (./bin/setup --dev, which ./bin/test runs, installs it as root)")


def _offline_prefix() -> list[str]:
    """``unshare --net`` when this user may make a network namespace (root may): the browser then has no network at all."""
    if shutil.which("unshare") and subprocess.run(["unshare", "--net", "true"], capture_output=True).returncode == 0:
        return ["unshare", "--net"]
    return []


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"  # a fresh profile for every start
    assert CHROMIUM is not None
    return subprocess.run(
        [*_offline_prefix(), CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=30000", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def _long_lists(results: Path) -> None:
    """A laptop night's long lists, in the latest run's stored rows: 120 suspects measured twice (confirmed,
    cleared, unconfirmed) and 40 failed checks, lists that must not push the scorecard off the first screen."""
    import json as _json

    import pandas as pd

    from jsonbench.cell import RunRef
    from jsonbench.checks.confirm import stored_rows
    from jsonbench.dataset.publish import MEASUREMENTS, publish_validations, read_dataset
    from jsonbench.report.model import pick_run

    m = read_dataset(results, MEASUREMENTS).to_pandas()
    chosen = pick_run(m, None)
    assert chosen
    first = m[m["run_id"] == chosen].iloc[0]
    rows = stored_rows(results, chosen)
    template = next(r for r in rows if r.get("check_kind") == "drift")
    extra = []
    for i in range(160):
        verdict = ("confirmed", "cleared", "unconfirmed")[i % 3] if i < 120 else "drift"
        details = {
            "first": {"observed": 1.0 + i, "min_value": 0.5, "max_value": 1.5},
            "confirmation": {"observed": 1.1 + i, "why": "planted"},
        }
        extra.append(
            {
                **template,
                "expectation": f"planted_{i}",
                "workload": f"planted_{i}",
                "verdict": verdict,
                "success": verdict == "cleared",
                "details": _json.dumps(details if i < 120 else {}),
            }
        )
    run = RunRef(chosen, pd.Timestamp(first["logical_date"]).isoformat(), str(first["hardware_label"]), str(results), str(first["scale"]))
    publish_validations(results, run, rows + extra)


@pytest.fixture(scope="module", params=["night", "long_lists"])
def report(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    results = tmp_path_factory.mktemp("browser") / "results"
    build_once(results, runs=4, docs_for_last=True)
    if request.param == "long_lists":
        _long_lists(results)
    return build_report(results)


def test_scorecard_on_top_and_every_chart_drawn(report: Path, tmp_path: Path) -> None:
    res = _chromium(tmp_path, "--dump-dom", report.as_uri())
    dom = res.stdout
    assert "<html" in dom, res.stderr[-3000:]
    # The DOM after the page's JavaScript ran: every chart placeholder was drawn by Vega into an SVG.
    charts = re.findall(r'<div class="vl[^"]*" id="chart-\d+"[^>]*>', dom)
    assert len(charts) >= 7
    assert all('data-rendered="1"' in c for c in charts), [c for c in charts if 'data-rendered="1"' not in c]
    drawn = re.findall(r'<div class="vl[^"]*" id="chart-\d+"[^>]*>\s*<svg[^>]*class="marks"', dom)
    assert len(drawn) == len(charts)
    assert "could not be drawn:" not in dom.split("<script>", 1)[0]
    # Vega drew real marks: the trend of the planted regression has its change point rule and points.
    assert dom.count("role-mark") > 50 and "mark-rule" in dom
    # The scorecard comes before anything else on the page.
    body = dom[dom.index("<body") :]
    first = re.search(r"<(section|table|div class=\"vl)", body)
    assert first is not None and body[first.start() :].startswith('<section id="scorecard">')
    assert body.index('<table class="scorecard">') < body.index('id="chart-0"')


#: Injected into a copy of the page: once it has loaded and drawn, where the scorecard is on the first screen,
#: written as attributes of <body> for --dump-dom to show (the layout the screenshot shows, as numbers).
PROBE = """<script>
window.addEventListener("load", function () {
  setTimeout(function () {
    var s = document.getElementById("scorecard"), b = document.body, r = s.getBoundingClientRect();
    var hit = document.elementFromPoint(Math.round(r.left + 20), Math.round(r.top + Math.min(r.height / 2, 40)));
    b.setAttribute("data-probe", JSON.stringify({
      top: r.top, height: r.height, viewport: window.innerHeight, scrolled: window.scrollY,
      chart_top: document.getElementById("chart-0").getBoundingClientRect().top,
      visible: !!hit && s.contains(hit)
    }));
  }, 0);
});
</script>"""


def test_scorecard_is_the_first_thing_on_screen_and_a_screenshot_is_kept(report: Path, tmp_path: Path) -> None:
    """Laid out in a 1400x1000 window: the scorecard starts in the top half of the first screen, unscrolled, is what
    is drawn there (nothing covers it), and the first chart comes below it. Then screenshots for a person to look at."""
    import json

    probe = report.parent / "probe-layout.html"
    html = report.read_text(encoding="utf-8")
    assert "</body>" in html
    head, tail = html.rsplit("</body>", 1)  # the page's own </body>, the last one (a script may hold the string too)
    probe.write_text(head + PROBE + "</body>" + tail, encoding="utf-8")
    res = _chromium(tmp_path, "--window-size=1400,1000", "--dump-dom", probe.as_uri())
    m = re.search(r"<body[^>]*\sdata-probe=\"([^\"]*)\"", res.stdout)
    assert m, "the layout probe did not run:\n" + res.stderr[-3000:]
    layout = json.loads(m.group(1).replace("&quot;", '"'))
    assert layout["scrolled"] == 0 and layout["viewport"] > 0, layout
    assert 0 <= layout["top"] < layout["viewport"] / 2 and layout["height"] > 0, layout
    assert layout["visible"], layout
    assert layout["chart_top"] >= layout["top"] + layout["height"], layout
    probe.unlink()
    # The answer before the lists: the verdict's lines, then the folded lists with their counts.
    assert html.index("id='verdict'") < html.index("id='scorecard'")
    if "planted_0" in html:  # the long lists are folded, each with its count
        assert "Measured twice before any timing alert (120: confirmed 40, cleared 40, unconfirmed 40)" in html
        assert "<details class='warnbox' id='failures'><summary>" in html, "more than 3 failures: folded"

    folder = Path(os.environ.get("JSONBENCH_SCREENSHOT_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    shot = folder / "report-top.png"
    res = _chromium(tmp_path, "--window-size=1400,1000", "--hide-scrollbars", f"--screenshot={shot}", report.as_uri())
    assert shot.is_file() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", res.stderr[-3000:]
