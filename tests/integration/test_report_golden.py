"""The report page comes out the same, to the byte, as the page it was when its markup left Python strings for templates.

The page of the synthetic folder (tests/unit/report_synth.py: four nightly smoke runs and an earlier
laptop run, the last with a planted WAL drift and a change point) is compared with
``tests/integration/data/report_page.golden.html``, with only what must differ from one build to the next
replaced: the build time and its duration, the results folder's path, Great Expectations' timestamp in
its Data Docs paths, and the inlined Vega bundle (about 1 MB), which is kept as its SHA-256.

A change that means to change the page (a new block, a changed verdict) rewrites the golden file with
``JSONBENCH_UPDATE_GOLDEN=1`` and shows the change in its diff; the test then fails once more, saying so,
so that a rewrite never passes unnoticed.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
import shutil
from pathlib import Path

import pytest

from jsonbench import paths
from jsonbench.report import build_report
from tests.unit.report_synth import build_once

GOLDEN = Path(__file__).with_name("data") / "report_page.golden.html"


def normalised(html: str, root: Path) -> str:
    """The page with what must differ between two builds of the same folder replaced (see the module's docstring)."""
    html = re.sub(r"Built \d{4}-\d\d-\d\d \d\d:\d\d UTC in \d+\.\d s", "Built <BUILD TIME> in <SECONDS> s", html)
    html = html.replace(str(root), "<RESULTS>")
    html = re.sub(r"/\d{8}T\d{6}\.\d{6}Z/", "/<GX RUN TIME>/", html)

    def bundle(m: re.Match[str]) -> str:
        return f"<script>/* Vega bundle sha256:{hashlib.sha256(m.group(1).encode()).hexdigest()} */</script><script>"

    return re.sub(r"<script>(.*?)</script><script>", bundle, html, count=1, flags=re.S)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> str:
    results = tmp_path_factory.mktemp("golden") / "results"
    build_once(results, runs=4, docs_for_last=True)
    # The page shows the calibration status of the committed records (include/calibration/), which a new campaign
    # rewrites: rendered against a copy of include/ without them, the page depends only on the synthetic folder.
    include = tmp_path_factory.mktemp("golden-include") / "include"
    shutil.copytree(paths.include_dir(), include, ignore=shutil.ignore_patterns("calibration"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JSONBENCH_INCLUDE_DIR", str(include))
        return normalised(build_report(results).read_text(encoding="utf-8"), results)


def test_the_page_is_the_golden_page(page: str) -> None:
    if os.environ.get("JSONBENCH_UPDATE_GOLDEN") == "1":
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(page, encoding="utf-8")
        pytest.fail(f"rewrote {GOLDEN}: review its diff, then run again without JSONBENCH_UPDATE_GOLDEN")
    golden = GOLDEN.read_text(encoding="utf-8")
    if page != golden:
        # one element a line, so the diff names the block that changed
        diff = difflib.unified_diff(re.split(r"(?<=>)", golden), re.split(r"(?<=>)", page), "golden", "built", lineterm="", n=2)
        pytest.fail("the report page differs from the golden page:\n" + "\n".join(line[:300] for line in list(diff)[:80]))


def test_the_normalising_leaves_the_page(page: str) -> None:
    """Only the four replacements happen: the page's sections, charts and verdicts are all still there to compare."""
    assert page.count("<BUILD TIME>") == 1 and page.count("Vega bundle sha256:") == 1
    for needed in ("id='scorecard'", "id='suite-large_document_update'", "id='sanity'", "id='environment'", "id='runs'", "DRIFT"):
        assert needed in page
    assert page.count("class='vl'") >= 4
