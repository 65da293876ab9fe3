"""The README's examples, made from a recorded run by the code a user runs: the summary text and the report's first screen.

A sample pasted by hand drifts from what the command prints; this writes it instead. From one results folder
(default: ``recorded/local-b1dda63-76df4b9f``, a recorded complete laptop night of the quick start and two nights after it):

* ``docs/examples/summary.txt``: ``jsonbench summary`` of its latest run, the folder's absolute path written as the
  project-relative one, so the file is the same on every checkout;
* the README's fenced block between its two ``readme-examples:summary`` marker comments: that text's first line, one suite's table
  (``large_document_update``) and the checks' line, so the README stays short and in step with the file;
* ``docs/examples/report.png``: the report of that run, built in a scratch copy of the folder (``recorded/`` is never
  written), drawn by Debian's headless Chromium at 1280 x 900 pixels: what a reader sees before scrolling.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from jsonbench import paths

#: The recorded folder the examples come from: a complete laptop night with its checks (validations/ kept).
DEFAULT_FOLDER = "recorded/local-b1dda63-76df4b9f"
#: The suite whose table the README shows (the shortest of the seeds' four).
README_SUITE = "large_document_update"
BEGIN = "<!-- readme-examples:summary:begin -->"
END = "<!-- readme-examples:summary:end -->"
#: Width and height of the report's first screen, in CSS pixels (one device pixel each).
SCREEN = (1280, 900)


def summary_text(folder: Path) -> str:
    """``jsonbench summary`` of the folder's latest run, its absolute paths written relative to the project."""
    from jsonbench.report.summary import summary

    text = summary(str(folder))
    root = str(paths.PROJECT_ROOT)
    return text.replace(root + "/", "").rstrip("\n") + "\n"


def readme_excerpt(text: str, suite: str = README_SUITE) -> str:
    """The README's sample: the run line, ``suite``'s table and the checks' line, elisions marked ``...``."""
    lines = text.splitlines()
    start = lines.index(suite)
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].strip()), len(lines))
    checks = next(line for line in lines if line.startswith("checks:"))
    return "\n".join([lines[0], "...", *lines[start:end], "...", checks]) + "\n"


def with_block(readme: str, excerpt: str) -> str:
    """``readme`` with the fenced block between the markers replaced by ``excerpt``."""
    head, rest = readme.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n```text\n{excerpt}```\n{END}{tail}"


def screenshot(folder: Path, out: Path, size: tuple[int, int] = SCREEN) -> Path:
    """The report of the folder's latest run, built in a scratch copy and drawn by headless Chromium into ``out``."""
    from jsonbench.report.page import build_report

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("chromium not installed (./bin/setup --dev installs Debian's, as root)")
    with tempfile.TemporaryDirectory(prefix="jsonbench-readme-") as tmp:
        copy = Path(tmp) / "results"
        shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("report"))
        page = build_report(copy)
        out.parent.mkdir(parents=True, exist_ok=True)
        argv = [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            f"--user-data-dir={Path(tmp) / 'profile'}",
            f"--window-size={size[0]},{size[1]}",
            "--virtual-time-budget=15000",
            f"--screenshot={out}",
            page.as_uri(),
        ]
        got = subprocess.run(argv, capture_output=True, text=True, timeout=180)
        if got.returncode != 0 or not out.is_file():
            raise SystemExit(f"chromium did not write {out}: {got.stderr[-2000:]}")
    return out


def main(args: argparse.Namespace) -> int:
    root = paths.PROJECT_ROOT
    folder = Path(args.results_dir or root / DEFAULT_FOLDER).resolve()
    docs = Path(args.out or root / "docs" / "examples")
    text = summary_text(folder)
    docs.mkdir(parents=True, exist_ok=True)
    (docs / "summary.txt").write_text(text, encoding="utf-8")
    print(f"wrote {docs / 'summary.txt'} ({len(text.splitlines())} lines)")
    readme = root / "README.md"
    readme.write_text(with_block(readme.read_text(encoding="utf-8"), readme_excerpt(text)), encoding="utf-8")
    print(f"wrote the sample in {readme} (between {BEGIN} and {END})")
    if not args.no_screenshot:
        png = screenshot(folder, docs / "report.png")
        print(f"wrote {png} ({SCREEN[0]}x{SCREEN[1]})")
    return 0


if __name__ == "__main__":
    sys.exit(main(argparse.Namespace(results_dir=None, out=None, no_screenshot=False)))
