"""`jsonbench-dev readme-examples`: the committed samples are what the command writes from the recorded run today.

The summary's text is deterministic (a published run read back), so the committed ``docs/examples/summary.txt`` and
the README's fenced block must equal what the command makes now: a change to the summary's layout, or to the
recorded folder, fails here until the samples are written again. The screenshot depends on fonts and the browser,
so it is checked for what it claims to be (a PNG of the stated size), never pixel by pixel.
"""

from __future__ import annotations

import struct

from jsonbench import paths
from jsonbench_dev.readme_examples import BEGIN, DEFAULT_FOLDER, END, SCREEN, readme_excerpt, summary_text, with_block

ROOT = paths.PROJECT_ROOT
EXAMPLES = ROOT / "docs" / "examples"


def test_the_committed_summary_is_what_the_command_writes_now() -> None:
    now = summary_text(ROOT / DEFAULT_FOLDER)
    assert now.startswith("run ") and "\nchecks: " in now
    assert str(ROOT) not in now, "the sample names the project's folder relative to it"
    assert (EXAMPLES / "summary.txt").read_text(encoding="utf-8") == now, "run ./bin/jsonbench-dev readme-examples"


def test_the_readme_block_is_the_excerpt_of_that_summary() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.count(BEGIN) == 1 and readme.count(END) == 1
    excerpt = readme_excerpt(summary_text(ROOT / DEFAULT_FOLDER))
    assert "large_document_update" in excerpt and "checks: " in excerpt
    assert with_block(readme, excerpt) == readme, "run ./bin/jsonbench-dev readme-examples"


def test_the_report_picture_is_a_png_of_the_first_screen() -> None:
    head = (EXAMPLES / "report.png").read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR"
    assert struct.unpack(">II", head[16:24]) == SCREEN
    assert "docs/examples/report.png" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_excerpt_keeps_the_run_line_one_suite_and_the_checks() -> None:
    text = "run r: 3 rows\n\nalpha\na 1\n\nlarge_document_update\nx 1\ny 2\n\nchecks: PASSED; 0 of 3 failed\n\nParquet dataset: d\n"
    assert readme_excerpt(text) == "run r: 3 rows\n...\nlarge_document_update\nx 1\ny 2\n...\nchecks: PASSED; 0 of 3 failed\n"
    readme = f"intro\n{BEGIN}\n```text\nold\n```\n{END}\nrest\n"
    assert with_block(readme, "new\n") == f"intro\n{BEGIN}\n```text\nnew\n```\n{END}\nrest\n"
